import SesameCrypto

/// The `apple` format: Apple's anonymization CA certifies the credential key, with a nonce over the ceremony.
///
/// - SeeAlso: [WebAuthn §8.8](https://www.w3.org/TR/webauthn-3/#sctn-apple-anonymous-attestation)
enum AppleAttestation: AttestationFormat {
    static let identifier = "apple"
    /// The credCert extension that carries the nonce: `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static let nonceExtensionOID = "1.2.840.113635.100.8.2"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.8 step 1: attStmt is valid CBOR of the syntax {x5c: [credCert, * caCert]}.
        let certificates = try AttestationFormats.certificates(statement["x5c"], format: identifier)
        let credCert = certificates[0]
        // §8.8 step 2: nonceToHash = authenticatorData ‖ clientDataHash.
        let nonceToHash = authenticatorData.rawBytes + clientDataHash
        // §8.8 step 3: nonce = SHA-256(nonceToHash).
        let nonce = Digest.sha256(nonceToHash)
        // §8.8 step 4: nonce equals the value of the extension 1.2.840.113635.100.8.2 in credCert.
        guard let ext = credCert.extensionValue(oid: nonceExtensionOID) else {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.8 step 4: credCert has no nonce extension")
        }
        let certified: ArraySlice<UInt8>
        do {
            let sequence = try DERReader.single(.sequence, in: ext.value[...])
            certified = try DERReader.single(.octetString, in: DERReader.single(.context(1), in: sequence))
        } catch {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.8 step 4: nonce extension: \(error.reason)")
        }
        guard certified.elementsEqual(nonce) else {
            throw WebAuthnError(.attestationNonceMismatch, "§8.8 step 4: credCert nonce differs from SHA-256(authData ‖ hash)")
        }
        // §8.8 step 5: the credential public key equals the Subject Public Key of credCert.
        let certificateKey = try AttestationFormats.publicKey(of: credCert, "§8.8 step 5")
        guard let credentialKey = credentialPublicKey.publicKey, certificateKey.isSameKey(as: credentialKey) else {
            throw WebAuthnError(.attestationKeyMismatch, "§8.8 step 5: credCert key is not the credential public key")
        }
        // §8.8 step 6: Anonymization CA, trust path x5c.
        return AttestationResult(type: .anonCA, trustPath: certificates)
    }
}
