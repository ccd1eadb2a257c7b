"""A small software authenticator: P-256 discoverable credentials, `none` attestation, UP and UV set, a counter.

It produces the browser's JSON shapes (`PublicKeyCredential.toJSON()`) from the options the server sends, so the
compatibility suite can run real WebAuthn ceremonies through the Appwrite SDK.
"""
import base64
import hashlib
import json
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def cbor(value) -> bytes:
    """Encodes the CBOR subset WebAuthn needs: unsigned and negative integers, bytes, text, maps."""
    def head(major, n):
        if n < 24:
            return bytes([major << 5 | n])
        for size, code in ((1, 24), (2, 25), (4, 26), (8, 27)):
            if n < 1 << (8 * size):
                return bytes([major << 5 | code]) + n.to_bytes(size, "big")
        raise ValueError("integer too large")

    if isinstance(value, bool):
        raise TypeError("booleans are not needed here")
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        data = value.encode()
        return head(3, len(data)) + data
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(f"cannot encode {type(value)}")


class SoftwareAuthenticator:
    """Holds credentials per relying party; `user_verified` and `origin` are under the test's control."""

    def __init__(self, user_verified=True):
        self.user_verified = user_verified
        self.credentials = []  # dicts: id, rp_id, key, user_handle, counter

    def _flags(self, attested):
        return 0x01 | (0x04 if self.user_verified else 0) | (0x40 if attested else 0)

    def create(self, options: dict, origin: str) -> dict:
        """Answers PublicKeyCredentialCreationOptionsJSON with a RegistrationResponseJSON."""
        rp_id = options["rp"]["id"]
        excluded = {unb64url(d["id"]) for d in options.get("excludeCredentials") or []}
        if any(c["id"] in excluded for c in self.credentials):
            raise RuntimeError("InvalidStateError: the authenticator holds an excluded credential")
        key = ec.generate_private_key(ec.SECP256R1())
        credential_id = os.urandom(16)
        numbers = key.public_key().public_numbers()
        cose_key = cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([self._flags(True)]) + (0).to_bytes(4, "big")
                     + bytes(16) + len(credential_id).to_bytes(2, "big") + credential_id + cose_key)
        client_data = json.dumps({"type": "webauthn.create", "challenge": options["challenge"], "origin": origin,
                                  "crossOrigin": False}, separators=(",", ":")).encode()
        self.credentials.append({"id": credential_id, "rp_id": rp_id, "key": key,
                                 "user_handle": unb64url(options["user"]["id"]), "counter": 0})
        return {
            "id": b64url(credential_id), "rawId": b64url(credential_id), "type": "public-key",
            "authenticatorAttachment": "platform", "clientExtensionResults": {},
            "response": {"clientDataJSON": b64url(client_data), "transports": ["internal"],
                         "attestationObject": b64url(cbor({"fmt": "none", "attStmt": {}, "authData": auth_data}))},
        }

    def get(self, options: dict, origin: str) -> dict:
        """Answers PublicKeyCredentialRequestOptionsJSON (usernameless) with an AuthenticationResponseJSON."""
        rp_id = options["rpId"]
        usable = [c for c in self.credentials if c["rp_id"] == rp_id]
        if not usable:
            raise RuntimeError("NotAllowedError: no credential for this relying party")
        credential = usable[-1]
        credential["counter"] += 1
        auth_data = hashlib.sha256(rp_id.encode()).digest() + bytes([self._flags(False)]) + credential["counter"].to_bytes(4, "big")
        client_data = json.dumps({"type": "webauthn.get", "challenge": options["challenge"], "origin": origin,
                                  "crossOrigin": False}, separators=(",", ":")).encode()
        signature = credential["key"].sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(credential["id"]), "rawId": b64url(credential["id"]), "type": "public-key",
            "authenticatorAttachment": "platform", "clientExtensionResults": {},
            "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                         "signature": b64url(signature), "userHandle": b64url(credential["user_handle"])},
        }
