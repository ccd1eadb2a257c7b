#!/usr/bin/env python3
"""Writes mldsa-acvp-sigver.json: a subset of NIST's ACVP ML-DSA sigVer (FIPS 204) known answers.

Usage: extract-mldsa-acvp.py PATH/TO/ML-DSA-sigVer-FIPS204/internalProjection.json > mldsa-acvp-sigver.json

The input is usnistgov/ACVP-Server gen-val/json-files/ML-DSA-sigVer-FIPS204/internalProjection.json (release
v1.1.0.35), here taken from the copy the dilithium-py 1.5.1 source distribution on PyPI ships as
assets/ML-DSA-sigVer-FIPS204/internalProjection.json (`pip download --no-binary :all: dilithium-py==1.5.1`).
From each of the three test groups (ML-DSA-44, -65, -87) it keeps the first two passing tests and the first test
of each failing reason, unchanged. The tests run ML-DSA.Verify_internal: "message" is M' itself.
"""

import json
import sys

source = json.load(open(sys.argv[1]))
groups = []
for group in source["testGroups"]:
    kept, reasons, passing = [], set(), 0
    for test in group["tests"]:
        if test["testPassed"]:
            if passing == 2:
                continue
            passing += 1
        elif test["reason"] in reasons:
            continue
        else:
            reasons.add(test["reason"])
        kept.append({key: test[key] for key in ("tcId", "testPassed", "reason", "message", "signature")})
    groups.append({"tgId": group["tgId"], "parameterSet": group["parameterSet"], "pk": group["pk"], "tests": kept})

json.dump({
    "source": "usnistgov/ACVP-Server v1.1.0.35, gen-val/json-files/ML-DSA-sigVer-FIPS204/internalProjection.json "
              "(vsId 42), as shipped in the dilithium-py 1.5.1 sdist; subset made by extract-mldsa-acvp.py",
    "interface": "ML-DSA.Verify_internal (FIPS 204 Algorithm 8): message is M'",
    "testGroups": groups,
}, sys.stdout, indent=1)
print()
