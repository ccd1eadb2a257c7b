import SesameCrypto

/// The `android-key` format: Android Keystore's attestation certificate chain for the credential key.
///
/// Which authorization lists count is the relying party's choice (§8.4); Sesame reads `origin` and `purpose` from
/// `teeEnforced` only, unless ``AttestationOptions/androidKeyAcceptsSoftwareEnforced`` adds `softwareEnforced`.
///
/// - SeeAlso: [WebAuthn §8.4](https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation)
enum AndroidKeyAttestation: AttestationFormat {
    static let identifier = "android-key"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.4 step 1: attStmt is valid CBOR of the syntax {alg, sig, x5c: [credCert, * caCert]}.
        guard let algValue = statement["alg"]?.integerValue, let alg = Int(exactly: algValue) else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.4 step 1: alg is missing")
        }
        guard let sig = statement["sig"]?.bytes else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.4 step 1: sig is missing")
        }
        let certificates = try AttestationFormats.certificates(statement["x5c"], format: identifier)
        let credCert = certificates[0]
        // §8.4 step 2: sig is a valid signature over authenticatorData ‖ clientDataHash with the first
        // certificate's public key and alg.
        guard let scheme = COSEAlgorithmIdentifier(rawValue: alg).signatureAlgorithm else {
            throw WebAuthnError(.unsupportedAlgorithm, "§8.4 step 2: attestation alg \(alg) is not supported")
        }
        let certificateKey = try AttestationFormats.publicKey(of: credCert, "§8.4 step 2")
        guard certificateKey.isValidSignature(sig, for: authenticatorData.rawBytes + clientDataHash, algorithm: scheme) else {
            throw WebAuthnError(.invalidAttestationSignature, "§8.4 step 2: sig does not verify with the credCert key")
        }
        // §8.4 step 3: the first certificate's public key matches the credentialPublicKey.
        guard let credentialKey = credentialPublicKey.publicKey, certificateKey.isSameKey(as: credentialKey) else {
            throw WebAuthnError(.attestationKeyMismatch, "§8.4 step 3: credCert key is not the credential public key")
        }
        let description: AndroidKeyDescription
        guard let ext = credCert.extensionValue(oid: AndroidKeyDescription.oid) else {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.4 step 4: credCert has no key description extension")
        }
        do { description = try AndroidKeyDescription(derEncoded: ext.value) } catch {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.4 step 4: key description: \(error.reason)")
        }
        // §8.4 step 4: attestationChallenge is identical to clientDataHash.
        guard description.attestationChallenge == clientDataHash else {
            throw WebAuthnError(.attestationNonceMismatch, "§8.4 step 4: attestationChallenge is not clientDataHash")
        }
        try checkAuthorizations(description, acceptsSoftwareEnforced: context.options.androidKeyAcceptsSoftwareEnforced)
        // §8.4 step 6: Basic, trust path x5c.
        return AttestationResult(type: .basic, trustPath: certificates)
    }

    /// §8.4 step 5: the authorization lists scope the key to its relying party, and it was generated for signing.
    static func checkAuthorizations(_ description: AndroidKeyDescription,
                                    acceptsSoftwareEnforced: Bool) throws(WebAuthnError) {
        func fail(_ reason: String) -> WebAuthnError {
            WebAuthnError(.invalidAndroidKeyAuthorization, "§8.4 step 5: \(reason)")
        }
        // allApplications is present on neither list: the credential must be scoped to the RP ID.
        guard !description.softwareEnforced.allApplications, !description.teeEnforced.allApplications else {
            throw fail("allApplications is present")
        }
        // teeEnforced only, or the union with softwareEnforced when the relying party accepts software keys.
        let lists = acceptsSoftwareEnforced ? [description.teeEnforced, description.softwareEnforced] : [description.teeEnforced]
        let origins = lists.compactMap(\.origin)
        guard !origins.isEmpty, origins.allSatisfy({ $0 == AndroidKeyDescription.originGenerated }) else {
            throw fail("origin is not KM_ORIGIN_GENERATED (\(origins))")
        }
        let purposes = lists.compactMap(\.purposes)
        guard !purposes.isEmpty, purposes.reduce(into: Set(), { $0.formUnion($1) }) == [AndroidKeyDescription.purposeSign] else {
            throw fail("purpose is not KM_PURPOSE_SIGN (\(purposes))")
        }
    }
}
