#!/usr/bin/env python3
"""ML-DSA cases for Sesame's verifier, made and judged by dilithium-py (pure Python FIPS 204, from PyPI).

For each parameter set (ML-DSA-44, -65, -87) it makes --keys key pairs and, per key, --messages random messages
(0 to 300 bytes, some with a random context string), signs each with dilithium-py's ML-DSA.Sign (hedged), and
derives tampered cases from every signature: a flipped bit in c̃, in z and in the hint bytes, a flipped message
bit, one extra message byte, a different context, and a flipped bit in the public key's t1. Every case, valid or
not, carries dilithium-py's own verdict (ML-DSA.Verify), so the Swift side checks agreement, not a guess.

Prints one JSON document on stdout: {"implementation": "dilithium-py X.Y.Z", "cases": [{parameterSet, pk,
message, context, signature, expected, kind}, ...]} with byte strings in lowercase hex.

    mldsa_cross_check.py [--keys N] [--messages N] [--seed S]
"""

import argparse
import importlib.metadata
import json
import random

from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87

SETS = {"ML-DSA-44": ML_DSA_44, "ML-DSA-65": ML_DSA_65, "ML-DSA-87": ML_DSA_87}


def flip(data, bit):
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=2)
    parser.add_argument("--messages", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    cases = []
    for name, scheme in SETS.items():
        # dilithium-py's KeyGen and hedged signing read os.urandom; the messages, contexts and tampering
        # positions come from the seeded generator so a failing run's shape can be reproduced.
        c_tilde_bytes = scheme.c_tilde_bytes
        hint_bytes = scheme.omega + scheme.k
        for _ in range(args.keys):
            pk, sk = scheme.keygen()
            for index in range(args.messages):
                message = rng.randbytes(rng.randrange(0, 301))
                context = rng.randbytes(rng.randrange(1, 40)) if index % 3 == 2 else b""
                signature = scheme.sign(sk, message, ctx=context)
                z_end = len(signature) - hint_bytes

                variants = [
                    ("valid", pk, message, context, signature),
                    ("c-tilde bit", pk, message, context, flip(signature, rng.randrange(0, 8 * c_tilde_bytes))),
                    ("z bit", pk, message, context, flip(signature, rng.randrange(8 * c_tilde_bytes, 8 * z_end))),
                    ("hint bit", pk, message, context, flip(signature, rng.randrange(8 * z_end, 8 * len(signature)))),
                    ("message bit", pk, flip(message, rng.randrange(0, 8 * len(message))) if message else b"\x00",
                     context, signature),
                    ("message byte added", pk, message + bytes([rng.randrange(256)]), context, signature),
                    ("other context", pk, message, context + b"x" if context else b"x", signature),
                    ("public key bit", flip(pk, rng.randrange(8 * 32, 8 * len(pk))), message, context, signature),
                ]
                for kind, v_pk, v_message, v_context, v_signature in variants:
                    cases.append({
                        "parameterSet": name,
                        "kind": kind,
                        "pk": v_pk.hex(),
                        "message": v_message.hex(),
                        "context": v_context.hex(),
                        "signature": v_signature.hex(),
                        "expected": scheme.verify(v_pk, v_message, v_signature, ctx=v_context),
                    })

    version = importlib.metadata.version("dilithium-py")
    print(json.dumps({"implementation": f"dilithium-py {version}", "cases": cases}))


if __name__ == "__main__":
    main()
