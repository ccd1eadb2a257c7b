#!/usr/bin/env python3
"""Writes the ML-DSA WebAuthn vectors in this folder, in the layout of the W3C Level 3 vectors beside it.

    python3 -m pip install dilithium-py==1.5.1 && python3 generate.py

Keys come from dilithium-py's ML-DSA.KeyGen_internal on a seed derived from the vector's name, and signatures from
its deterministic ML-DSA.Sign (empty context, as COSE uses), so running this again writes the same bytes. Each
registration carries the credential as a COSE AKP key (RFC 9964: kty 7, alg -48/-49/-50, pub -1) and is signed
by the credential key itself (packed self attestation), or carries no attestation (fmt none); each authentication
is an assertion by the same credential.
"""

import base64
import hashlib
import json
import pathlib

from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87

RP_ID = "example.org"
ORIGIN = "https://example.org"
AAGUID = bytes.fromhex("5e5a3e11d1f94c0e9b1a2b3c4d5e6f70")
SETS = {-48: ("ML-DSA-44", ML_DSA_44), -49: ("ML-DSA-65", ML_DSA_65), -50: ("ML-DSA-87", ML_DSA_87)}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def derive(label, length=32):
    return hashlib.sha256(f"Sesame ML-DSA WebAuthn vectors: {label}".encode()).digest()[:length]


def cbor(value):
    """Canonical CBOR (RFC 8949 §4.2.1) of ints, byte strings, text and maps, as CTAP2 encodes them."""

    def head(major, argument):
        if argument < 24:
            return bytes([major << 5 | argument])
        for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
            if argument < 1 << (8 * size):
                return bytes([major << 5 | info]) + argument.to_bytes(size, "big")
        raise ValueError(argument)

    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        encoded = value.encode()
        return head(3, len(encoded)) + encoded
    if isinstance(value, dict):
        items = sorted((cbor(k), cbor(v)) for k, v in value.items())
        items.sort(key=lambda item: (len(item[0]), item[0]))
        return head(5, len(items)) + b"".join(k + v for k, v in items)
    raise TypeError(value)


def client_data(kind, challenge):
    return json.dumps({"type": kind, "challenge": b64url(challenge), "origin": ORIGIN, "crossOrigin": False},
                      separators=(",", ":")).encode()


def write(name, vector):
    path = pathlib.Path(__file__).with_name(f"{name}.json")
    path.write_text(json.dumps(vector, indent=2) + "\n")


def vectors(alg, fmt):
    set_name, scheme = SETS[alg]
    label = f"{set_name} {fmt}"
    pk, sk = scheme.key_derive(derive(f"{label} key"))
    credential_id = derive(f"{label} credential id")
    cose_key = cbor({1: 7, 3: alg, -1: pk})
    rp_id_hash = hashlib.sha256(RP_ID.encode()).digest()

    # Registration: flags UP | UV | AT, sign count 0, attested credential data.
    challenge = derive(f"{label} registration challenge")
    client_data_json = client_data("webauthn.create", challenge)
    auth_data = (rp_id_hash + bytes([0x45]) + (0).to_bytes(4, "big") + AAGUID
                 + len(credential_id).to_bytes(2, "big") + credential_id + cose_key)
    signed = auth_data + hashlib.sha256(client_data_json).digest()
    if fmt == "packed":
        statement = {"alg": alg, "sig": scheme.sign(sk, signed, deterministic=True)}
        attestation_type = "self"
    else:
        statement = {}
        attestation_type = "none"
    attestation_object = cbor({"fmt": fmt, "attStmt": statement, "authData": auth_data})
    slug = f"mldsa{set_name[-2:]}-{fmt}"
    write(f"registration-{slug}", {
        "name": f"{'Packed self attestation' if fmt == 'packed' else 'No attestation'} with an {set_name} credential",
        "ceremony": "registration", "rpId": RP_ID, "origin": ORIGIN, "challenge": b64url(challenge),
        "credentialId": b64url(credential_id), "clientDataJSON": b64url(client_data_json),
        "attestationObject": b64url(attestation_object), "credentialPublicKey": b64url(cose_key),
        "expected": {"fmt": fmt, "alg": alg, "attestationType": attestation_type,
                     "aaguid": "5e5a3e11-d1f9-4c0e-9b1a-2b3c4d5e6f70", "signCount": 0, "userPresent": True,
                     "userVerified": True, "backupEligible": False, "backedUp": False, "crossOrigin": False},
    })

    # Authentication: flags UP | UV, sign count 1.
    challenge = derive(f"{label} authentication challenge")
    client_data_json = client_data("webauthn.get", challenge)
    auth_data = rp_id_hash + bytes([0x05]) + (1).to_bytes(4, "big")
    signature = scheme.sign(sk, auth_data + hashlib.sha256(client_data_json).digest(), deterministic=True)
    assert scheme.verify(pk, auth_data + hashlib.sha256(client_data_json).digest(), signature)
    write(f"authentication-{slug}", {
        "name": f"Assertion by an {set_name} credential", "ceremony": "authentication", "rpId": RP_ID,
        "origin": ORIGIN, "challenge": b64url(challenge), "credentialId": b64url(credential_id),
        "clientDataJSON": b64url(client_data_json), "authenticatorData": b64url(auth_data),
        "signature": b64url(signature), "credentialPublicKey": b64url(cose_key),
        "expected": {"alg": alg, "signCount": 1, "userPresent": True, "userVerified": True, "backupEligible": False,
                     "backedUp": False, "crossOrigin": False},
    })


if __name__ == "__main__":
    for alg in SETS:
        vectors(alg, "packed")
    vectors(-49, "none")
