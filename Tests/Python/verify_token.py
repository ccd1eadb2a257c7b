#!/usr/bin/env python3
"""Verifies a Sesame verification token the way a partner would, with PyJWT (an off-the-shelf JOSE library).

The partner check of the BotShield spec (section 2.4): exactly 3 parts; header alg ES256 (never none, HS*, RS*);
kid found in the JWKS (PyJWKClient refreshes once on a miss); signature valid; iss equals the issuer; aud equals
the partner's own org id; exp > now and iat <= now (60 s leeway); chosen claims equal what the partner expects.

On success prints the claims as JSON on stdout and exits 0. On rejection prints "rejected: <reason>" on stderr
and exits 1. Usage errors exit 2.

    verify_token.py (--jwks-url URL | --jwks-file PATH) --token T --issuer ISS --audience AUD
                    [--claim NAME=VALUE ...] [--leeway SECONDS] [--now UNIX_TIME]

A --claim value is compared with a string claim as text, and with any other claim as compact JSON
(`--claim verified=true`, `--claim ver=1`).
"""

import argparse
import json
import sys
import time

import jwt


def reject(reason):
    print(f"rejected: {reason}", file=sys.stderr)
    sys.exit(1)


def signing_key(args, token, kid):
    if args.jwks_url:
        client = jwt.PyJWKClient(args.jwks_url, cache_keys=False, timeout=10)
        # Looks the kid up, fetching the set again once when it is missing.
        return client.get_signing_key_from_jwt(token).key
    with open(args.jwks_file, encoding="utf-8") as file:
        key_set = jwt.PyJWKSet.from_json(file.read())
    try:
        return key_set[kid].key
    except KeyError:
        reject(f"kid {kid!r} is not in the JWKS")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--jwks-url")
    source.add_argument("--jwks-file")
    parser.add_argument("--token", required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--audience", required=True)
    parser.add_argument("--claim", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--leeway", type=int, default=60)
    parser.add_argument("--now", type=int, help="the current Unix time, for tokens minted by a test clock")
    args = parser.parse_args()

    expected = {}
    for item in args.claim:
        name, separator, value = item.partition("=")
        if not separator:
            parser.error(f"--claim {item!r} is not NAME=VALUE")
        expected[name] = value

    try:
        if args.token.count(".") != 2:
            reject("a compact JWS has exactly 3 parts")
        header = jwt.get_unverified_header(args.token)
        if header.get("alg") != "ES256":
            reject(f"alg must be ES256, got {header.get('alg')!r}")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            reject("kid is missing")
        key = signing_key(args, args.token, kid)
        now = args.now if args.now is not None else int(time.time())
        claims = jwt.decode(
            args.token,
            key,
            algorithms=["ES256"],
            audience=args.audience,
            issuer=args.issuer,
            leeway=args.leeway,
            # PyJWT checks exp and iat against its own clock; with --now they are checked below instead.
            options={"require": ["exp", "iat", "iss", "aud"], "verify_exp": args.now is None, "verify_iat": args.now is None},
        )
    except jwt.PyJWTError as error:
        reject(f"{type(error).__name__}: {error}")

    for name in ("exp", "iat"):
        if not isinstance(claims[name], int) or isinstance(claims[name], bool):
            reject(f"{name} must be an integer")
    if claims["exp"] + args.leeway <= now:
        reject("ExpiredSignatureError: Signature has expired")
    if claims["iat"] - args.leeway > now:
        reject("ImmatureSignatureError: The token is not yet valid (iat)")
    for name, value in expected.items():
        actual = claims.get(name)
        text = actual if isinstance(actual, str) else json.dumps(actual, separators=(",", ":"))
        if name not in claims or text != value:
            reject(f"claim {name} is {text!r}, expected {value!r}")

    print(json.dumps(claims, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
