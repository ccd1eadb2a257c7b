#!/usr/bin/env bash
# Regenerates the attestation certificates the test fixtures use. Run from this folder; output is committed.
# Valid for 20 years from generation (2026-11-29 to 2046-11-29 for the committed set); tests judge chains at
# 2030-01-01 (inside) and 2020-01-01 (before notBefore).
set -euo pipefail
days=7305
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out attestation-root.key.pem
openssl req -x509 -new -key attestation-root.key.pem -subj "/C=US/O=Sesame Test/CN=Sesame Test Attestation Root" \
    -days $days -out attestation-root.pem -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign"
cat > leaf.ext <<EXT
basicConstraints=critical,CA:FALSE
1.3.6.1.4.1.45724.1.1.4=DER:04:10:5E:5A:4E:30:00:00:40:00:80:00:00:00:00:00:00:01
EXT
# Packed attestation certificate (§8.2.1 subject), with the AAGUID extension.
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out attestation-packed.key.pem
openssl req -new -key attestation-packed.key.pem \
    -subj "/C=US/O=Sesame Test/OU=Authenticator Attestation/CN=Sesame Test Packed" -out leaf.csr
openssl x509 -req -in leaf.csr -CA attestation-root.pem -CAkey attestation-root.key.pem -set_serial 2 \
    -days $days -extfile leaf.ext -out attestation-packed.pem
# A packed certificate whose OU is wrong (violates §8.2.1).
openssl req -new -key attestation-packed.key.pem -subj "/C=US/O=Sesame Test/OU=Wrong Unit/CN=Sesame Test Bad OU" -out bad.csr
openssl x509 -req -in bad.csr -CA attestation-root.pem -CAkey attestation-root.key.pem -set_serial 3 \
    -days $days -extfile leaf.ext -out attestation-packed-bad-ou.pem
# fido-u2f attestation certificate (any subject; P-256 key).
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out attestation-u2f.key.pem
openssl req -new -key attestation-u2f.key.pem -subj "/CN=Sesame Test U2F" -out u2f.csr
openssl x509 -req -in u2f.csr -CA attestation-root.pem -CAkey attestation-root.key.pem -set_serial 4 \
    -days $days -out attestation-u2f.pem
# A second, unrelated root: chains to it must fail.
openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out other-root.key.pem
openssl req -x509 -new -key other-root.key.pem -subj "/C=US/O=Other/CN=Other Root" -days $days -out other-root.pem \
    -addext "basicConstraints=critical,CA:TRUE"
rm -f leaf.csr bad.csr u2f.csr leaf.ext other-root.key.pem
