import SesameCrypto

/// The `packed` format: self attestation, or a signature by an attestation certificate (`x5c`).
///
/// - SeeAlso: [WebAuthn §8.2](https://www.w3.org/TR/webauthn-3/#sctn-packed-attestation)
enum PackedAttestation: AttestationFormat {
    static let identifier = "packed"
    /// id-fido-gen-ce-aaguid, the certificate extension carrying the AAGUID.
    static let aaguidExtensionOID = "1.3.6.1.4.1.45724.1.1.4"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.2.2 step 1: attStmt is valid CBOR of the syntax {alg, sig, x5c?}.
        guard let algValue = statement["alg"]?.integerValue, let alg = Int(exactly: algValue) else {
            throw WebAuthnError(.malformedAttestationStatement, "packed: alg is missing")
        }
        guard let sig = statement["sig"]?.bytes else {
            throw WebAuthnError(.malformedAttestationStatement, "packed: sig is missing")
        }
        let algorithm = COSEAlgorithmIdentifier(rawValue: alg)
        let signedData = authenticatorData.rawBytes + clientDataHash

        if statement["x5c"] != nil {
            // §8.2.2 step 2: x5c present; verify sig with the attestation certificate's key and alg.
            let certificates = try AttestationFormats.certificates(statement["x5c"], format: identifier)
            let leaf = certificates[0]
            guard let scheme = algorithm.signatureAlgorithm else {
                throw WebAuthnError(.unsupportedAlgorithm, "packed: attestation alg \(alg) is not supported")
            }
            let key: PublicKey
            do { key = try leaf.publicKey() } catch {
                throw WebAuthnError(.invalidAttestationCertificate, "packed: attestation certificate key is unusable")
            }
            guard key.isValidSignature(sig, for: signedData, algorithm: scheme) else {
                throw WebAuthnError(.invalidAttestationSignature, "§8.2.2 step 2: sig does not verify with attestnCert")
            }
            // §8.2.2 step 2: attestnCert meets §8.2.1 and its AAGUID extension, if any, matches authData.
            try checkCertificateRequirements(leaf, aaguid: authenticatorData.attestedCredentialData?.aaguid ?? [])
            return AttestationResult(type: .basic, trustPath: certificates)
        }
        // §8.2.2 step 3: self attestation; alg matches the credential's, sig verifies with the credential key.
        guard algorithm == credentialPublicKey.algorithm else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.2.2 step 3: alg differs from the credential's")
        }
        guard credentialPublicKey.isValidSignature(sig, for: signedData) else {
            throw WebAuthnError(.invalidAttestationSignature, "§8.2.2 step 3: self-attestation sig does not verify")
        }
        return AttestationResult(type: .self, trustPath: [])
    }

    /// §8.2.1: packed attestation statement certificate requirements.
    static func checkCertificateRequirements(_ certificate: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        func fail(_ reason: String) -> WebAuthnError {
            WebAuthnError(.invalidAttestationCertificate, "§8.2.1: \(reason)")
        }
        guard certificate.version == 3 else { throw fail("version is not 3") }
        let subject = certificate.subject
        guard let country = subject.countryName, country.count == 2 else { throw fail("subject C is missing") }
        guard subject.organizationName?.isEmpty == false else { throw fail("subject O is missing") }
        guard subject.organizationalUnitName == "Authenticator Attestation" else {
            throw fail("subject OU is not 'Authenticator Attestation'")
        }
        guard subject.commonName?.isEmpty == false else { throw fail("subject CN is missing") }
        if let ext = certificate.extensionValue(oid: aaguidExtensionOID) {
            // The extension must not be critical and holds an OCTET STRING of the 16-byte AAGUID.
            guard !ext.critical else { throw fail("AAGUID extension is critical") }
            guard ext.value == [0x04, 0x10] + aaguid else { throw fail("AAGUID extension does not match authData") }
        }
        guard certificate.isCertificateAuthority != true else { throw fail("basic constraints CA is true") }
    }
}
