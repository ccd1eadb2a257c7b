#!/usr/bin/env python3
"""Regenerates the committed seed corpora in Fuzz/Corpus/<target>/ (run from anywhere; needs only python3).

Sources: the W3C WebAuthn Level 3 test vectors in Tests/WebAuthnTests/Vectors/w3c-webauthn-l3/*.json
(attestation objects, authenticator data, COSE keys), the ML-DSA vectors in Tests/WebAuthnTests/Vectors/mldsa
(COSE AKP keys; signatures for the mldsa target), plus small hand-built CBOR items and authenticator
data with extensions. File names are stable and descriptive, so re-running only rewrites identical files.
"""
import base64, glob, hashlib, json, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTORS = os.path.join(ROOT, "Tests/WebAuthnTests/Vectors/w3c-webauthn-l3")
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
    for target in ("cbor", "cose", "authdata", "attestation", "mldsa"):
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

    for target in ("cbor", "cose", "authdata", "attestation", "mldsa"):
        d = os.path.join(CORPUS, target)
        files = os.listdir(d)
        print(f"{target}: {len(files)} seeds, {sum(os.path.getsize(os.path.join(d, f)) for f in files)} bytes")


if __name__ == "__main__":
    sys.exit(main())
