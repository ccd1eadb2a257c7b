import SesameCrypto

/// The `fido-u2f` format: a U2F authenticator's registration signature.
///
/// - SeeAlso: [WebAuthn §8.6](https://www.w3.org/TR/webauthn-3/#sctn-fido-u2f-attestation)
enum FIDOU2FAttestation: AttestationFormat {
    static let identifier = "fido-u2f"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.6 step 1: attStmt is {x5c: [attCert], sig}.
        guard let sig = statement["sig"]?.bytes else {
            throw WebAuthnError(.malformedAttestationStatement, "fido-u2f: sig is missing")
        }
        let certificates = try AttestationFormats.certificates(statement["x5c"], format: identifier)
        // §8.6 step 2: exactly one certificate, whose key is an EC key on P-256.
        guard certificates.count == 1 else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.6 step 2: x5c must hold exactly one certificate")
        }
        let key: PublicKey
        do { key = try certificates[0].publicKey() } catch {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.6 step 2: attCert key is unusable")
        }
        guard key.kind == .ellipticCurve(.p256) else {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.6 step 2: attCert key is not P-256")
        }
        // §8.6 step 3: rpIdHash, credentialId and credentialPublicKey from authData.
        guard let attested = authenticatorData.attestedCredentialData else {
            throw WebAuthnError(.malformedAuthenticatorData, "fido-u2f: no attested credential data")
        }
        // §8.6 step 4: the credential key is P-256 and becomes the 65-byte uncompressed point.
        guard credentialPublicKey.algorithm == .es256, let point = credentialPublicKey.publicKey?.ellipticCurvePoint else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.6 step 4: credential key is not an ES256 P-256 key")
        }
        let publicKeyU2F = [0x04] + point.x + point.y
        // §8.6 step 5: verificationData = 0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ publicKeyU2F.
        let verificationData = [0x00] + authenticatorData.rpIDHash + clientDataHash + attested.credentialID + publicKeyU2F
        // §8.6 step 6: verify sig with the certificate's key, ECDSA with SHA-256.
        guard key.isValidSignature(sig, for: verificationData, algorithm: .ecdsaSHA256) else {
            throw WebAuthnError(.invalidAttestationSignature, "§8.6 step 6: sig does not verify with attCert")
        }
        // §8.6 step 7: Basic or AttCA; without metadata Sesame reports basic.
        return AttestationResult(type: .basic, trustPath: certificates)
    }
}
