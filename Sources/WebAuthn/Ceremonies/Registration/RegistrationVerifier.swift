import Foundation
import SesameCrypto

/// What a relying party expects of one registration ceremony.
public struct RegistrationExpectations: Sendable {
    /// The relying party's rules.
    public var policy: RelyingPartyPolicy
    /// The challenge the relying party issued for this ceremony.
    public var challenge: [UInt8]
    /// False only for conditional create, where the authenticator may register without user presence.
    public var requiresUserPresence: Bool
    /// Roots an attestation certificate chain of any format must reach. With none here and none in
    /// ``trustAnchorsByFormat`` for the format, attestation chains are reported, not judged.
    public var trustAnchors: [Certificate]
    /// More roots for one attestation format each, keyed by `fmt` (for example Apple's root under `apple`); a
    /// chain of that format must reach one of these or of ``trustAnchors``.
    public var trustAnchorsByFormat: [String: [Certificate]]
    /// The relying party's choices inside the format verification procedures.
    public var attestationOptions: AttestationOptions

    /// Creates the expectations of one registration.
    public init(policy: RelyingPartyPolicy, challenge: [UInt8], requiresUserPresence: Bool = true,
                trustAnchors: [Certificate] = [], trustAnchorsByFormat: [String: [Certificate]] = [:],
                attestationOptions: AttestationOptions = AttestationOptions()) {
        self.policy = policy
        self.challenge = challenge
        self.requiresUserPresence = requiresUserPresence
        self.trustAnchors = trustAnchors
        self.trustAnchorsByFormat = trustAnchorsByFormat
        self.attestationOptions = attestationOptions
    }

    /// The roots a chain of the format `fmt` must reach: ``trustAnchors`` and the format's own.
    /// - Parameter fmt: an attestation statement format identifier, such as `apple`.
    /// - Returns: the anchors; empty when chains of this format are reported, not judged.
    public func trustAnchors(forFormat fmt: String) -> [Certificate] {
        trustAnchors + (trustAnchorsByFormat[fmt] ?? [])
    }
}

/// A credential that passed registration, with everything a relying party stores about it.
public struct VerifiedRegistration: Sendable {
    public let credentialID: [UInt8]
    /// The credential public key, parsed; `publicKey.cborEncoded` is what to store.
    public let publicKey: COSEKey
    /// The attestation statement format, such as `packed`.
    public let format: String
    public let attestationType: AttestationType
    /// The attestation certificate chain as sent, leaf first; empty for none and self attestation.
    public let attestationTrustPath: [Certificate]
    /// The authenticator model's AAGUID in lowercase UUID form.
    public let aaguid: String
    public let signCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
    public let transports: [String]
}

/// Verifies registration ceremonies exactly as WebAuthn Level 3 §7.1 specifies.
///
/// Pure: it reads no clock, network or database. The caller still has to check that the credential ID is not
/// registered yet (§7.1 step 25) and store the result (step 26).
///
/// - SeeAlso: [WebAuthn §7.1](https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential)
public enum RegistrationVerifier {
    /// The longest credential ID a relying party accepts (§7.1 step 24).
    public static let maximumCredentialIDLength = 1023

    /// Verifies a registration response against the relying party's expectations.
    /// - Parameters:
    ///   - credential: the client's response.
    ///   - expectations: relying party, challenge and attestation trust.
    ///   - time: the moment at which certificate chains are judged.
    /// - Returns: the verified credential.
    /// - Throws: ``WebAuthnError`` whose code names the first failed step.
    public static func verify(_ credential: RegistrationCredential, expectations: RegistrationExpectations,
                              at time: Date) throws(WebAuthnError) -> VerifiedRegistration {
        let policy = expectations.policy
        // §7.1 steps 5-6: decode clientDataJSON as UTF-8 and parse it as JSON (C).
        let clientData = try CollectedClientData(jsonBytes: credential.clientDataJSON)
        // §7.1 steps 7-10: C.type, C.challenge, C.origin, C.topOrigin.
        try SharedChecks.verify(clientData, type: "webauthn.create", challenge: expectations.challenge, policy: policy,
                                section: "§7.1", steps: (7, 8, 9, 10))
        // §7.1 step 11: hash = SHA-256(clientDataJSON).
        let clientDataHash = Digest.sha256(credential.clientDataJSON)
        // §7.1 step 12: CBOR-decode the attestation object into fmt, authData and attStmt.
        let attestation = try AttestationObject(cborEncoded: credential.attestationObject)
        let authData = attestation.authenticatorData
        // §7.1 steps 13-16: rpIdHash, UP, UV, and BS only with BE.
        try SharedChecks.verify(authData, policy: policy, requiresUserPresence: expectations.requiresUserPresence,
                                section: "§7.1", steps: (13, 14, 15, 16))
        // §7.1 step 17: BE/BS are reported to the caller, whose policy decides on them.
        guard let attested = authData.attestedCredentialData else {
            throw WebAuthnError(.malformedAuthenticatorData, "§7.1 step 18: AT flag not set, no credential data")
        }
        // §7.1 step 18: the credential public key's alg is one of pubKeyCredParams.
        let publicKey = try COSEKey(cborEncoded: attested.credentialPublicKey)
        guard policy.allowedAlgorithms.contains(publicKey.algorithm) else {
            throw WebAuthnError(.algorithmNotAllowed, "§7.1 step 18: alg \(publicKey.algorithm) was not offered")
        }
        // §7.1 step 19: no extensions are requested, so there are no client extension outputs to check.
        // §7.1 step 20: determine the attestation statement format.
        let format = try AttestationFormats.format(named: attestation.format)
        // §7.1 step 21: verify the attestation statement.
        let context = AttestationContext(time: time, options: expectations.attestationOptions)
        let result = try format.verify(statement: attestation.statement, authenticatorData: authData,
                                       clientDataHash: clientDataHash, credentialPublicKey: publicKey, context: context)
        // §7.1 steps 22-23: judge the trust path against the configured trust anchors, at the ceremony's time.
        let anchors = expectations.trustAnchors(forFormat: attestation.format)
        if !anchors.isEmpty, let leaf = result.trustPath.first {
            do {
                try CertificateChain.validate(leaf: leaf, intermediates: Array(result.trustPath.dropFirst()),
                                              trustAnchors: anchors, at: time)
            } catch {
                throw WebAuthnError(.untrustedAttestation, "§7.1 step 23: attestation chain: \(error.debugDescription)")
            }
        }
        // §7.1 step 24: credentialId is at most 1023 bytes.
        guard attested.credentialID.count <= maximumCredentialIDLength else {
            throw WebAuthnError(.credentialIDTooLong, "§7.1 step 24: credentialId is \(attested.credentialID.count) bytes")
        }
        // The response's rawId names the credential the authenticator attested.
        guard credential.rawID == attested.credentialID else {
            throw WebAuthnError(.credentialIDMismatch, "§7.1 step 24: rawId differs from the attested credentialId")
        }
        // §7.1 steps 25-27 (unique ID, storing the record) belong to the caller.
        return VerifiedRegistration(
            credentialID: attested.credentialID, publicKey: publicKey, format: attestation.format,
            attestationType: result.type, attestationTrustPath: result.trustPath, aaguid: attested.aaguidString,
            signCount: authData.signCount, userVerified: authData.isUserVerified,
            backupEligible: authData.isBackupEligible, backedUp: authData.isBackedUp, transports: credential.transports)
    }
}
