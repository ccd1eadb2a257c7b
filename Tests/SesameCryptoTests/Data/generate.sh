#!/bin/sh
# Regenerates every fixture in this folder with the openssl CLI (OpenSSL 3.0). Run from this folder.
# Outputs are random (keys, ECDSA/PSS signatures), so rerunning changes the files; the tests only
# rely on the relations between them and on the fixed validity dates below.
set -eu
printf 'Sesame fixed test message\n' > message.txt

# --- Signature fixtures: private key (PEM), public key (DER SPKI), signature over message.txt ---
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out es384-key.pem
openssl pkey -in es384-key.pem -pubout -outform DER -out es384-pub.der
openssl dgst -sha384 -sign es384-key.pem -out es384.sig message.txt

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out es512-key.pem
openssl pkey -in es512-key.pem -pubout -outform DER -out es512-pub.der
openssl dgst -sha512 -sign es512-key.pem -out es512.sig message.txt

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa2048-key.pem
openssl pkey -in rsa2048-key.pem -pubout -outform DER -out rsa2048-pub.der
openssl dgst -sha256 -sign rsa2048-key.pem -out rs256.sig message.txt
openssl dgst -sha256 -sign rsa2048-key.pem -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 \
    -sigopt rsa_mgf1_md:sha256 -out ps256.sig message.txt
openssl dgst -sha384 -sign rsa2048-key.pem -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:48 \
    -sigopt rsa_mgf1_md:sha384 -out ps384.sig message.txt
openssl dgst -sha512 -sign rsa2048-key.pem -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:64 \
    -sigopt rsa_mgf1_md:sha512 -out ps512.sig message.txt
openssl dgst -sha1 -sign rsa2048-key.pem -out rs1.sig message.txt

# Modulus as hex (for PublicKey(rsaModulus:publicExponent:)); the exponent is 65537.
openssl rsa -pubin -inform DER -in rsa2048-pub.der -noout -modulus | sed 's/^Modulus=//' > rsa2048-modulus.hex

# A P-256 key in SEC1 ("EC PRIVATE KEY") form, for PrivateKey(pemEncoded:).
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 | openssl ec -out p256-sec1.pem

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa1024-key.pem
openssl pkey -in rsa1024-key.pem -pubout -outform DER -out rsa1024-pub.der

# --- Certificates: root CA -> intermediate CA -> leaf, all P-256, fixed dates via `openssl ca` ---
rm -rf ca-work && mkdir ca-work && touch ca-work/index.txt && echo 1000 > ca-work/serial
cat > ca-work/ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
dir = ca-work
database = $dir/index.txt
serial = $dir/serial
new_certs_dir = $dir
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
[any]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_leaf]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
1.3.6.1.4.1.45724.1.1.4 = DER:04:10:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff
[v1_none]
CNF
ca() { openssl ca -batch -config ca-work/ca.cnf -notext "$@"; }
for k in root intermediate leaf expired v1 otherroot; do
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca-work/$k-key.pem
done
openssl req -new -key ca-work/root-key.pem -subj "/C=US/O=Sesame Test/CN=Sesame Test Root" -out ca-work/root.csr
ca -selfsign -keyfile ca-work/root-key.pem -in ca-work/root.csr -extensions v3_ca \
   -startdate 20200101000000Z -enddate 20400101000000Z -out root.pem
openssl req -new -key ca-work/intermediate-key.pem -subj "/C=US/O=Sesame Test/OU=Issuing/CN=Sesame Test Intermediate" -out ca-work/intermediate.csr
ca -cert root.pem -keyfile ca-work/root-key.pem -in ca-work/intermediate.csr -extensions v3_ca \
   -startdate 20200101000000Z -enddate 20350101000000Z -out intermediate.pem
openssl req -new -key ca-work/leaf-key.pem -subj "/C=SE/O=Sesame Authenticator/OU=Authenticator Attestation/CN=Sesame Leaf" -out ca-work/leaf.csr
ca -cert intermediate.pem -keyfile ca-work/intermediate-key.pem -in ca-work/leaf.csr -extensions v3_leaf \
   -startdate 20210101000000Z -enddate 20310101000000Z -out leaf.pem
openssl req -new -key ca-work/expired-key.pem -subj "/CN=Sesame Expired Leaf" -out ca-work/expired.csr
ca -cert intermediate.pem -keyfile ca-work/intermediate-key.pem -in ca-work/expired.csr -extensions v3_leaf \
   -startdate 20200101000000Z -enddate 20210101000000Z -out expired-leaf.pem
# No extensions section => `openssl ca` writes an X.509 v1 certificate.
openssl req -new -key ca-work/v1-key.pem -subj "/CN=Sesame V1" -out ca-work/v1.csr
ca -cert root.pem -keyfile ca-work/root-key.pem -in ca-work/v1.csr -extensions v1_none \
   -startdate 20200101000000Z -enddate 20300101000000Z -out v1.pem
openssl req -new -key ca-work/otherroot-key.pem -subj "/CN=Unrelated Root" -out ca-work/otherroot.csr
ca -selfsign -keyfile ca-work/otherroot-key.pem -in ca-work/otherroot.csr -extensions v3_ca \
   -startdate 20200101000000Z -enddate 20400101000000Z -out other-root.pem
openssl x509 -in leaf.pem -outform DER -out leaf.der
rm -rf ca-work
