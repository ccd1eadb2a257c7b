import SesameCrypto

/// The `tpm` format: a TPM's attestation identity key (AIK) certifies the credential key's public area.
///
/// The Level 3 procedure is a list without numbers; `// §8.3 step N` counts its items in order (1 syntax,
/// 2 pubArea, 3 attToBeSigned, 4 certInfo integrity, 5 certInfo validity, 6 result).
///
/// - SeeAlso: [WebAuthn §8.3](https://www.w3.org/TR/webauthn-3/#sctn-tpm-attestation)
enum TPMAttestation: AttestationFormat {
    static let identifier = "tpm"
    /// tcg-kp-AIKCertificate, the extended key usage an AIK certificate must carry.
    static let aikCertificateKeyPurpose = "2.23.133.8.3"
    /// tcg-at-tpmManufacturer, tcg-at-tpmModel and tcg-at-tpmVersion: the SAN directoryName attributes.
    static let manufacturerOID = "2.23.133.2.1", modelOID = "2.23.133.2.2", versionOID = "2.23.133.2.3"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.3 step 1: attStmt is valid CBOR of the syntax {ver: "2.0", alg, x5c, sig, certInfo, pubArea}.
        func field(_ name: String) throws(WebAuthnError) -> [UInt8] {
            guard let bytes = statement[name]?.bytes else {
                throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 1: \(name) is missing or not bytes")
            }
            return bytes
        }
        guard statement["ver"]?.text == "2.0" else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 1: ver is not \"2.0\"")
        }
        guard let algValue = statement["alg"]?.integerValue, let alg = Int(exactly: algValue) else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 1: alg is missing")
        }
        let sig = try field("sig"), certInfoBytes = try field("certInfo"), pubAreaBytes = try field("pubArea")
        let pubArea: TPMTPublic, certInfo: TPMSAttest
        do { pubArea = try TPMTPublic(bytes: pubAreaBytes) } catch {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 1: pubArea: \(error.reason)")
        }
        do { certInfo = try TPMSAttest(bytes: certInfoBytes) } catch {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 1: certInfo: \(error.reason)")
        }
        // §8.3 step 2: the key in pubArea's parameters and unique is identical to the credentialPublicKey.
        guard let areaKey = pubArea.publicKey(), let credentialKey = credentialPublicKey.publicKey, areaKey.isSameKey(as: credentialKey) else {
            throw WebAuthnError(.attestationKeyMismatch, "§8.3 step 2: pubArea key is not the credential public key")
        }
        // §8.3 step 3: attToBeSigned = authenticatorData ‖ clientDataHash.
        let attToBeSigned = authenticatorData.rawBytes + clientDataHash
        // §8.3 step 4: verify the integrity of certInfo. x5c is present...
        guard statement["x5c"] != nil else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 4: x5c is missing")
        }
        let certificates = try AttestationFormats.certificates(statement["x5c"], format: identifier)
        let aikCert = certificates[0]
        // ...aikCert meets §8.3.1, and its AAGUID extension, if any, matches authData...
        try checkCertificateRequirements(aikCert, aaguid: authenticatorData.attestedCredentialData?.aaguid ?? [])
        // ...and sig is a valid signature over certInfo with aikCert's key and alg.
        let algorithm = COSEAlgorithmIdentifier(rawValue: alg)
        guard let scheme = algorithm.signatureAlgorithm, let hash = digest(for: algorithm) else {
            throw WebAuthnError(.unsupportedAlgorithm, "§8.3 step 4: attestation alg \(alg) is not supported")
        }
        let aikKey = try AttestationFormats.publicKey(of: aikCert, "§8.3 step 4")
        guard aikKey.isValidSignature(sig, for: certInfoBytes, algorithm: scheme) else {
            throw WebAuthnError(.invalidAttestationSignature, "§8.3 step 4: sig does not verify with the aikCert key")
        }
        // §8.3 step 5: certInfo is valid: magic is TPM_GENERATED_VALUE...
        guard certInfo.magic == TPMConstant.generatedValue else {
            throw WebAuthnError(.invalidTPMCertInfo, "§8.3 step 5: magic is not TPM_GENERATED_VALUE")
        }
        // ...type is TPM_ST_ATTEST_CERTIFY...
        guard certInfo.type == TPMConstant.attestCertify else {
            throw WebAuthnError(.invalidTPMCertInfo, "§8.3 step 5: type is not TPM_ST_ATTEST_CERTIFY")
        }
        // ...extraData is the hash of attToBeSigned with the hash algorithm of alg...
        guard certInfo.extraData == hash(attToBeSigned) else {
            throw WebAuthnError(.attestationNonceMismatch, "§8.3 step 5: extraData is not the hash of attToBeSigned")
        }
        // ...and attested is a TPMS_CERTIFY_INFO whose name is pubArea's Name (nameAlg ‖ H_nameAlg(pubArea)).
        let name: [UInt8]
        do { name = try certInfo.certifiedName() } catch {
            throw WebAuthnError(.malformedAttestationStatement, "§8.3 step 5: certInfo: \(error.reason)")
        }
        guard let nameDigest = TPMConstant.digest(nameAlg: pubArea.nameAlg) else {
            throw WebAuthnError(.invalidTPMCertInfo, "§8.3 step 5: pubArea nameAlg is not a supported hash")
        }
        let expectedName = [UInt8(pubArea.nameAlg >> 8), UInt8(pubArea.nameAlg & 0xFF)] + nameDigest(pubAreaBytes)
        guard name == expectedName else {
            throw WebAuthnError(.invalidTPMCertInfo, "§8.3 step 5: attested name is not the Name of pubArea")
        }
        // §8.3 step 6: AttCA, trust path x5c.
        return AttestationResult(type: .attCA, trustPath: certificates)
    }

    /// The hash a TPM signature algorithm uses for extraData ("for RS256, a SHA-256 digest").
    static func digest(for algorithm: COSEAlgorithmIdentifier) -> (([UInt8]) -> [UInt8])? {
        switch algorithm {
        case .rs1: Digest.sha1
        case .rs256, .ps256, .es256: Digest.sha256
        case .ps384, .es384: Digest.sha384
        case .ps512, .es512: Digest.sha512
        default: nil
        }
    }

    /// §8.3.1: TPM attestation statement certificate requirements.
    static func checkCertificateRequirements(_ certificate: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        func fail(_ reason: String) -> WebAuthnError {
            WebAuthnError(.invalidAttestationCertificate, "§8.3.1: \(reason)")
        }
        guard certificate.version == 3 else { throw fail("version is not 3") }
        guard certificate.subject.attributes.isEmpty else { throw fail("subject is not empty") }
        // TPMv2-EK-Profile §3.2.9: a critical SAN (the subject is empty) whose directoryName names the TPM.
        let san: SubjectAlternativeName?
        do { san = try certificate.subjectAlternativeName() } catch { throw fail("subjectAltName: \(error.reason)") }
        guard let san else { throw fail("subjectAltName is missing") }
        guard san.isCritical else { throw fail("subjectAltName is not critical") }
        guard let tpm = san.directoryNames.first(where: { $0.contains { $0.oid == manufacturerOID } }) else {
            throw fail("subjectAltName has no directoryName with tcg-at-tpmManufacturer")
        }
        for (oid, name) in [(manufacturerOID, "tpmManufacturer"), (modelOID, "tpmModel"), (versionOID, "tpmVersion")] {
            guard tpm.filter({ $0.oid == oid }).count == 1, let value = tpm.first(where: { $0.oid == oid })?.value,
                  !value.isEmpty
            else { throw fail("subjectAltName does not have exactly one non-empty \(name)") }
        }
        let usages: [String]?
        do { usages = try certificate.extendedKeyUsages() } catch { throw fail("extKeyUsage: \(error.reason)") }
        guard usages?.contains(aikCertificateKeyPurpose) == true else {
            throw fail("extKeyUsage lacks tcg-kp-AIKCertificate (2.23.133.8.3)")
        }
        guard certificate.isCertificateAuthority != true else { throw fail("basic constraints CA is true") }
        if let ext = certificate.extensionValue(oid: PackedAttestation.aaguidExtensionOID) {
            // §8.3 step 4: id-fido-gen-ce-aaguid, an OCTET STRING of the 16-byte AAGUID, matches authData.
            guard ext.value == [0x04, 0x10] + aaguid else { throw fail("AAGUID extension does not match authData") }
        }
    }
}
