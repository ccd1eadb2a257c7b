#!/usr/bin/env python3
"""Regenerates the committed seed corpora in Fuzz/Corpus/<target>/ (run from anywhere; needs only python3).

Sources: the W3C WebAuthn Level 3 test vectors in Tests/WebAuthnTests/Vectors/w3c-webauthn-l3/*.json
(attestation objects, authenticator data, COSE keys), the ML-DSA vectors in Tests/WebAuthnTests/Vectors/mldsa
(COSE AKP keys; signatures for the mldsa target), the py_webauthn vectors in Tests/WebAuthnTests/Vectors/py_webauthn
(TPM certInfo/pubArea, the Android key description extension, the SafetyNet JWS), plus small hand-built CBOR items,
authenticator data with extensions, TPM structures, key descriptions and JWSs around the edges. File names are stable and descriptive, so re-running only rewrites identical files.
"""
import base64, glob, hashlib, json, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "Tests/WebAuthnTests/Vectors/w3c-webauthn-l3")
PY_WEBAUTHN_VECTORS = os.path.join(ROOT, "Tests/WebAuthnTests/Vectors/py_webauthn")
MLDSA_VECTORS = os.path.join(ROOT, "Tests/WebAuthnTests/Vectors/mldsa")
CORPUS = os.path.join(ROOT, "Fuzz/Corpus")


def b64u(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


# --- a tiny CBOR encoder/decoder (enough for seeds; not a general library) ---------------------------------
def head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, n)
    raise ValueError(n)


class Tag:
    def __init__(self, tag, value):
        self.tag, self.value = tag, value


def enc(v):
    if v is True:
        return b"\xf5"
    if v is False:
        return b"\xf4"
    if v is None:
        return b"\xf6"
    if isinstance(v, int):
        return head(0, v) if v >= 0 else head(1, -1 - v)
    if isinstance(v, float):
        return b"\xfb" + struct.pack(">d", v)
    if isinstance(v, (bytes, bytearray)):
        return head(2, len(v)) + bytes(v)
    if isinstance(v, str):
        u = v.encode()
        return head(3, len(u)) + u
    if isinstance(v, list):
        return head(4, len(v)) + b"".join(enc(x) for x in v)
    if isinstance(v, dict):
        items = sorted(((enc(k), enc(x)) for k, x in v.items()), key=lambda kv: (len(kv[0]), kv[0]))
        return head(5, len(items)) + b"".join(k + x for k, x in items)
    if isinstance(v, Tag):
        return head(6, v.tag) + enc(v.value)
    raise TypeError(type(v))


def dec(b, i=0):
    """Returns (value, next index); definite lengths only."""
    ib = b[i]; major, info = ib >> 5, ib & 31; i += 1
    if info < 24:
        n = info
    elif info in (24, 25, 26, 27):
        size = 1 << (info - 24)
        n = int.from_bytes(b[i:i + size], "big"); i += size
    else:
        raise ValueError("unsupported")
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major == 2:
        return bytes(b[i:i + n]), i + n
    if major == 3:
        return b[i:i + n].decode(), i + n
    if major == 4:
        out = []
        for _ in range(n):
            x, i = dec(b, i); out.append(x)
        return out, i
    if major == 5:
        out = {}
        for _ in range(n):
            k, i = dec(b, i); x, i = dec(b, i)
            out[k if not isinstance(k, (list, dict)) else repr(k)] = x
        return out, i
    if major == 6:
        x, i = dec(b, i)
        return Tag(n, x), i
    return {20: False, 21: True, 22: None}.get(info, ("simple", info)), i


def b64u_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


# --- a tiny DER reader (enough to find one certificate extension) and writer ---------------------------------
def der_element(b, i):
    """Returns (tag bytes, content start, end) of the element at i; definite lengths only."""
    start = i
    i += 1
    if b[start] & 0x1F == 0x1F:
        while b[i] & 0x80:
            i += 1
        i += 1
    tag = bytes(b[start:i])
    n = b[i]; i += 1
    if n & 0x80:
        count = n & 0x7F
        n = int.from_bytes(b[i:i + count], "big"); i += count
    return tag, i, i + n


def der_extension(cert, oid):
    """The extnValue content of the extension with the given encoded OID (tag, length and arcs) in a certificate."""
    at = cert.index(oid) + len(oid)
    tag, start, end = der_element(cert, at)
    if tag == b"\x01":  # critical BOOLEAN
        tag, start, end = der_element(cert, end)
    assert tag == b"\x04", tag
    return bytes(cert[start:end])


def der(tag, content):
    n = len(content)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | (n.bit_length() + 7) // 8]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes(tag) + length + bytes(content)


def der_int(v):
    return der(b"\x02", v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True))


def key_description(challenge, software, tee, rest=b""):
    """A KeyDescription (version 3, security levels software/TEE) around two AuthorizationList contents."""
    return der(b"\x30", der_int(3) + der(b"\x0a", b"\x00") + der_int(3) + der(b"\x0a", b"\x01")
               + der(b"\x04", challenge) + der(b"\x04", b"") + der(b"\x30", software) + der(b"\x30", tee) + rest)


# The Android key description extension's OID 1.3.6.1.4.1.11129.2.1.17, DER encoded.
ANDROID_KEY_OID = bytes.fromhex("060a2b06010401d679020111")
# Explicit context tags of the AuthorizationList fields Sesame reads: purpose [1], allApplications [600], origin [702].
PURPOSE, ALL_APPLICATIONS, ORIGIN = b"\xa1", b"\xbf\x84\x58", b"\xbf\x85\x3e"
TARGETS = ("cbor", "cose", "authdata", "attestation", "mldsa", "tpm", "androidkey", "safetynet")


# --- writing -------------------------------------------------------------------------------------------------
written = {}


def seed(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    key = (target, hashlib.sha256(data).digest())
    if key in written:  # same bytes already saved under another name
        return
    written[key] = name
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for target in TARGETS:
        d = os.path.join(CORPUS, target)
        if os.path.isdir(d):
            for f in os.listdir(d):
                os.remove(os.path.join(d, f))

    vectors = {}
    for path in sorted(glob.glob(os.path.join(VECTORS, "*.json"))):
        vectors[os.path.basename(path)[:-5]] = json.load(open(path))

    # attestation: every registration vector's attestation object.
    # authdata: authData from each attestation object (AT set) and each authentication vector (AT clear).
    # cose: every credential public key (EC2 P-256/384/521, OKP Ed25519/Ed448, RSA).
    for name, v in vectors.items():
        short = name.replace("registration-", "reg-").replace("authentication-", "auth-")
        if "attestationObject" in v:
            att = b64u(v["attestationObject"])
            seed("attestation", short, att)
            obj, _ = dec(att)
            seed("authdata", short + "-at", obj["authData"])
            if name in ("registration-es256-none", "registration-es256-packed", "registration-es256-fido-u2f", "registration-rs256-packed"):
                seed("cbor", short + "-attobj", att)
        if "authenticatorData" in v:
            seed("authdata", short, b64u(v["authenticatorData"]))
        if "credentialPublicKey" in v:
            key = b64u(v["credentialPublicKey"])
            seed("cose", name.split("-")[1] + "-" + name.split("-")[2], key)

    # cose: a few hand-made keys around the edges (valid P-256 key with alg -7 but also stray labels).
    p256 = dec(b64u(vectors["registration-es256-none"]["credentialPublicKey"]))[0]
    extra = dict(p256); extra[-4] = b"\x01" * 32  # a private-key label that must be ignored or rejected
    seed("cose", "es256-with-d", enc(extra))
    seed("cose", "okp-empty-x", enc({1: 1, 3: -8, -1: 6, -2: b""}))
    seed("cose", "rsa-tiny", enc({1: 3, 3: -257, -1: b"\xc5" * 16, -2: b"\x01\x00\x01"}))

    # cose: the ML-DSA vectors' AKP keys, and one with a pub one byte short.
    # mldsa: their assertion signatures, each after the byte that picks its parameter set (0, 1, 2 for 44, 65, 87).
    for path in sorted(glob.glob(os.path.join(MLDSA_VECTORS, "authentication-*-packed.json"))):
        v = json.load(open(path))
        level = os.path.basename(path).split("-")[1]  # mldsa44, mldsa65, mldsa87
        key = b64u(v["credentialPublicKey"])
        seed("cose", level + "-akp", key)
        seed("mldsa", level + "-signature", bytes([{"mldsa44": 0, "mldsa65": 1, "mldsa87": 2}[level]]) + b64u(v["signature"]))
        if level == "mldsa65":
            akp = dec(key)[0]
            akp[-1] = akp[-1][:-1]
            seed("cose", "mldsa65-akp-short-pub", enc(akp))

    # authdata: extensions (ED) with and without attested credential data.
    rp = hashlib.sha256(b"example.org").digest()
    exts = enc({"credProtect": 2, "hmac-secret": True})
    seed("authdata", "ed-only", rp + bytes([0x85]) + b"\x00\x00\x00\x07" + exts)
    reg = dec(b64u(vectors["registration-es256-none"]["attestationObject"]))[0]["authData"]
    seed("authdata", "at-ed", bytes([*reg[:32], reg[32] | 0x80]) + reg[33:] + exts)
    seed("authdata", "minimal", rp + b"\x01\x00\x00\x00\x00")
    seed("authdata", "at-empty-id", rp + b"\x41\x00\x00\x00\x00" + bytes(16) + b"\x00\x00" + enc(p256))

    # attestation: a none object with the ED flag, and a fido-u2f-shaped object missing its signature.
    seed("attestation", "none-at-ed", enc({"fmt": "none", "attStmt": {}, "authData": bytes([*reg[:32], reg[32] | 0x80]) + reg[33:] + exts}))
    u2f = dec(b64u(vectors["registration-es256-fido-u2f"]["attestationObject"]))[0]
    seed("attestation", "u2f-no-sig", enc({"fmt": "fido-u2f", "attStmt": {"x5c": u2f["attStmt"]["x5c"]}, "authData": u2f["authData"]}))
    seed("attestation", "tpm-empty-statement", enc({"fmt": "tpm", "attStmt": {}, "authData": reg}))

    py_vectors = {}
    for path in sorted(glob.glob(os.path.join(PY_WEBAUTHN_VECTORS, "*.json"))):
        py_vectors[os.path.basename(path)[:-5]] = json.load(open(path))

    # tpm: certInfo (TPMS_ATTEST) and pubArea (TPMT_PUBLIC) of both TPM vectors (ECC P-256 and RSA 2048), then
    # hand-made ones: a certInfo with a byte after qualifiedName, one cut inside clockInfo, the shortest one; an ECC
    # pubArea with an ECDAA scheme, a KDF and a symmetric algorithm; an RSA one with exponent 0 (65537), truncated.
    tpm_vectors = {"es256": vectors["registration-es256-tpm"], "rs1": py_vectors["registration-tpm-rs1-surface-pro-4"]}
    for name, v in tpm_vectors.items():
        statement = dec(b64u(v["attestationObject"]))[0]["attStmt"]
        seed("tpm", name + "-certinfo", statement["certInfo"])
        seed("tpm", name + "-pubarea", statement["pubArea"])
    cert_info = dec(b64u(vectors["registration-es256-tpm"]["attestationObject"]))[0]["attStmt"]["certInfo"]
    seed("tpm", "certinfo-trailing-byte", cert_info + b"\x00")
    seed("tpm", "certinfo-cut-clockinfo", cert_info[:6 + 2 + 2 + 32 + 5])
    seed("tpm", "certinfo-minimal", b"\xff\x54\x43\x47\x80\x17" + b"\x00\x00" * 2 + bytes(17 + 8) + b"\x00\x00" * 2)
    ecc_point = b"\x00\x20" + bytes(range(32)) + b"\x00\x20" + bytes(range(32, 64))
    seed("tpm", "pubarea-ecc-ecdaa-kdf-aes", b"\x00\x23\x00\x0b\x00\x06\x00\x72\x00\x00" + b"\x00\x06\x00\x80\x00\x43"
         + b"\x00\x1a\x00\x0b\x00\x01" + b"\x00\x03" + b"\x00\x20\x00\x0b" + ecc_point)
    rsa = b"\x00\x01\x00\x0b\x00\x06\x04\x72\x00\x00\x00\x10" + b"\x00\x10\x08\x00\x00\x00\x00\x00"
    seed("tpm", "pubarea-rsa-exponent-0", rsa + b"\x01\x00" + b"\xc5" * 256)
    seed("tpm", "pubarea-rsa-truncated", rsa + b"\x01\x00" + b"\xc5" * 255)

    # androidkey: the key description extension of the android-key vector's credential certificate, then hand-made
    # ones: empty lists, every field Sesame reads (purposes sign and verify, allApplications, origin), a purpose
    # given twice as a tag, a negative purpose, an unknown high tag number, a trailing byte, and bytes that are not DER
    # after hardwareEnforced (which the parser ignores, as it ignores any field after it).
    statement = dec(b64u(py_vectors["registration-android-key-conformance"]["attestationObject"]))[0]["attStmt"]
    seed("androidkey", "conformance", der_extension(statement["x5c"][0], ANDROID_KEY_OID))
    challenge = hashlib.sha256(b"client data").digest()
    purposes = der(PURPOSE, der(b"\x31", der_int(2) + der_int(3)))
    seed("androidkey", "empty-lists", key_description(challenge, b"", b""))
    seed("androidkey", "all-fields", key_description(challenge, der(ALL_APPLICATIONS, b"\x05\x00"),
                                                     purposes + der(ORIGIN, der_int(0))))
    seed("androidkey", "purpose-twice", key_description(challenge, b"", purposes + purposes))
    seed("androidkey", "purpose-negative", key_description(b"", der(PURPOSE, der(b"\x31", der_int(-2))), b""))
    seed("androidkey", "unknown-tag-9999", key_description(challenge, der(b"\xbf\xce\x0f", der_int(1)), b""))
    seed("androidkey", "trailing-byte", key_description(challenge, b"", b"") + b"\x00")
    seed("androidkey", "junk-after-lists", key_description(challenge, b"", b"", rest=b"\x0d\xff"))

    # safetynet: the android-safetynet vector's response JWS, then hand-made ones around its header: payloads with
    # and without the members Sesame reads (a fractional timestamp, a string ctsProfileMatch), a payload that is
    # not an object, an empty x5c, four parts, and the vector with its signature part emptied.
    response = dec(b64u(py_vectors["registration-android-safetynet-rs256"]["attestationObject"]))[0]["attStmt"]["response"]
    seed("safetynet", "rs256", response)
    header = response.split(b".")[0]
    for name, payload in (("all-members", b'{"nonce":"bm9uY2U=","timestampMs":1700000000000,"ctsProfileMatch":true}'),
                          ("no-members", b'{"apkPackageName":"org.example"}'),
                          ("odd-members", b'{"nonce":7,"timestampMs":1.7e12,"ctsProfileMatch":"true"}'),
                          ("payload-array", b'[1,2]')):
        seed("safetynet", name, header + b"." + b64u_encode(payload) + b".c2ln")
    seed("safetynet", "x5c-empty", b64u_encode(b'{"alg":"RS256","x5c":[]}') + b"." + b64u_encode(b"{}") + b".c2ln")
    seed("safetynet", "four-parts", response + b".")
    seed("safetynet", "no-signature", response[:response.rindex(b".") + 1])

    # cbor: one small item of every kind, plus a few encodings the decoder must reject or treat specially.
    items = {
        "uint-0": enc(0), "uint-23": enc(23), "uint-24": enc(24), "uint-max": enc(2**64 - 1),
        "nint-1": enc(-1), "nint-min": enc(-(2**64)), "bstr": enc(b"\x00\x01\x02"), "bstr-empty": enc(b""),
        "tstr": enc("héllo ✓"), "array": enc([1, [2, 3], []]), "map": enc({1: 2, "a": [True, False, None]}),
        "tag-uri": enc(Tag(32, "https://example.org")), "tag-nested": enc(Tag(1, Tag(2, 3))),
        "float64": enc(1.5), "float16": b"\xf9\x3c\x00", "float32": b"\xfa\x47\xc3\x50\x00",
        "float16-nan": b"\xf9\x7e\x00", "float16-subnormal": b"\xf9\x00\x01", "float16-inf": b"\xf9\xfc\x00",
        "undefined": b"\xf7", "simple-16": b"\xf0", "simple-255": b"\xf8\xff",
        "noncanonical-uint": b"\x1b\x00\x00\x00\x00\x00\x00\x00\x01", "noncanonical-map-order": b"\xa2\x61\x62\x01\x61\x61\x02",
        "indef-bstr": b"\x5f\x42\x01\x02\x41\x03\xff", "indef-array": b"\x9f\x01\x82\x02\x03\xff",
        "indef-map": b"\xbf\x61\x61\x01\xff", "indef-tstr": b"\x7f\x61\x61\x61\x62\xff",
        "deep": b"\x81" * 16 + b"\x00", "map-key-map": enc({1: 1}).replace(b"\xa1\x01", b"\xa1\xa1\x01\x01", 1),
        "dup-keys": b"\xa2\x01\x01\x01\x02", "prefix-trailing": enc([1, 2]) + b"\x00\x01",
        "ext-map": exts, "cose-p256": enc(p256),
    }
    for name, data in items.items():
        seed("cbor", name, data)

    for target in TARGETS:
        d = os.path.join(CORPUS, target)
        files = os.listdir(d)
        print(f"{target}: {len(files)} seeds, {sum(os.path.getsize(os.path.join(d, f)) for f in files)} bytes")


if __name__ == "__main__":
    sys.exit(main())
