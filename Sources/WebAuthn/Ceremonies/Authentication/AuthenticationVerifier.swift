import SesameCrypto

/// What a relying party knows about a stored credential (its credential record).
///
/// - SeeAlso: [WebAuthn §4 credential record](https://www.w3.org/TR/webauthn-3/#credential-record)
public struct CredentialRecord: Sendable {
    public var id: [UInt8]
    public var publicKey: COSEKey
    public var signCount: UInt32
    /// The BE flag as it was at registration, which never changes for a credential; nil when unknown (then
    /// §7.2 step 19 is skipped, as for a record kept by a relying party that did not store the flag).
    public var backupEligible: Bool?
    /// The user handle of the account the credential belongs to, when known.
    public var userHandle: [UInt8]?

    /// Creates a credential record.
    public init(id: [UInt8], publicKey: COSEKey, signCount: UInt32, backupEligible: Bool?, userHandle: [UInt8]? = nil) {
        self.id = id
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.userHandle = userHandle
    }
}

/// How the relying party learnt who is signing in, which decides what §7.2 step 6 checks.
///
/// - SeeAlso: [WebAuthn §7.2 step 6](https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion)
public enum UserIdentification: Sendable, Hashable {
    /// The user was identified before the ceremony (by username, by session, or because the caller holds the
    /// credential record) and owns the credential record.
    ///
    /// A returned `userHandle` is optional; when present it must name the same user: `expectedUserHandle` when
    /// given, else the record's ``CredentialRecord/userHandle`` when known. With neither, it is only reported.
    /// When both `expectedUserHandle` and the record's owner are known, they must be the same account.
    case identified(expectedUserHandle: [UInt8]?)
    /// Usernameless (discoverable) sign-in: the response must carry `userHandle`, and it must name the record's
    /// owner when the record knows it.
    case usernameless
}

/// What a relying party expects of one authentication ceremony.
public struct AuthenticationExpectations: Sendable {
    public var policy: RelyingPartyPolicy
    /// The challenge the relying party issued for this ceremony.
    public var challenge: [UInt8]
    /// The `allowCredentials` IDs; empty for usernameless (discoverable) sign-in.
    public var allowedCredentialIDs: [[UInt8]]
    /// How the user was identified, which decides what §7.2 step 6 checks.
    public var identification: UserIdentification

    /// Creates the expectations of one authentication with the user identified as `identification` says
    /// (usernameless unless told).
    public init(policy: RelyingPartyPolicy, challenge: [UInt8], allowedCredentialIDs: [[UInt8]] = [],
                identification: UserIdentification = .usernameless) {
        self.policy = policy
        self.challenge = challenge
        self.allowedCredentialIDs = allowedCredentialIDs
        self.identification = identification
    }
}

/// The outcome of a successful authentication: what to update in the credential record.
public struct VerifiedAuthentication: Sendable {
    public let credentialID: [UInt8]
    public let newSignCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
}

/// Verifies authentication ceremonies exactly as WebAuthn Level 3 §7.2 specifies.
///
/// Pure: the caller looks the credential record up by `rawID` (§7.2 step 7) and stores the updated sign count
/// and backup state afterwards (step 24).
///
/// - SeeAlso: [WebAuthn §7.2](https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion)
public enum AuthenticationVerifier {
    /// Verifies an authentication response against a stored credential.
    /// - Parameters:
    ///   - credential: the client's response.
    ///   - expectations: relying party, challenge and allowed credentials.
    ///   - record: the stored credential that `credential.rawID` names.
    /// - Returns: the new sign count and flags to store.
    /// - Throws: ``WebAuthnError`` whose code names the first failed step.
    public static func verify(_ credential: AuthenticationCredential, expectations: AuthenticationExpectations,
                              record: CredentialRecord) throws(WebAuthnError) -> VerifiedAuthentication {
        let policy = expectations.policy
        // §7.2 step 5: with allowCredentials, the credential is one of them.
        if !expectations.allowedCredentialIDs.isEmpty {
            guard expectations.allowedCredentialIDs.contains(credential.rawID) else {
                throw WebAuthnError(.credentialNotAllowed, "§7.2 step 5: credential not in allowCredentials")
            }
        }
        // §7.2 step 6: the credential belongs to the user. The record must be the one the response names.
        guard credential.rawID == record.id else {
            throw WebAuthnError(.credentialIDMismatch, "§7.2 step 6: response names another credential")
        }
        switch expectations.identification {
        case .identified(let expected):
            // §7.2 step 6: the user was identified before the ceremony: the credential is theirs, and a returned
            // userHandle maps to them too. The user is the expected one, else the record's owner.
            if let expected, let owner = record.userHandle, !constantTimeEquals(owner, expected) {
                throw WebAuthnError(.userHandleMismatch, "§7.2 step 6: credential belongs to another account")
            }
            if let returned = credential.userHandle, let user = expected ?? record.userHandle,
               !constantTimeEquals(returned, user) {
                throw WebAuthnError(.userHandleMismatch, "§7.2 step 6: userHandle is not the identified user")
            }
        case .usernameless:
            // §7.2 step 6: usernameless: the response must carry userHandle, and it must be the credential's owner.
            guard let returned = credential.userHandle else {
                throw WebAuthnError(.userHandleMissing, "§7.2 step 6: usernameless sign-in without userHandle")
            }
            if let owner = record.userHandle, !constantTimeEquals(returned, owner) {
                throw WebAuthnError(.userHandleMismatch, "§7.2 step 6: userHandle is not the credential's owner")
            }
        }
        // §7.2 step 7: the record was looked up by the caller. Step 8: cData, authData, sig.
        let authData = try AuthenticatorData(bytes: credential.authenticatorData)
        // §7.2 steps 9-10: decode clientDataJSON as UTF-8 and parse it as JSON (C).
        let clientData = try CollectedClientData(jsonBytes: credential.clientDataJSON)
        // §7.2 steps 11-14: C.type, C.challenge, C.origin, C.topOrigin.
        try SharedChecks.verify(clientData, type: "webauthn.get", challenge: expectations.challenge, policy: policy,
                                section: "§7.2", steps: (11, 12, 13, 14))
        // §7.2 steps 15-18: rpIdHash, UP, UV, and BS only with BE.
        try SharedChecks.verify(authData, policy: policy, requiresUserPresence: true, section: "§7.2", steps: (15, 16, 17, 18))
        // §7.2 step 19: BE is fixed at registration; a change means another credential or a broken authenticator.
        if let backupEligible = record.backupEligible, authData.isBackupEligible != backupEligible {
            throw WebAuthnError(.backupEligibilityChanged, "§7.2 step 19: BE differs from the credential record")
        }
        // §7.2 step 20: no extensions are requested, so there are no client extension outputs to check.
        // §7.2 step 21: hash = SHA-256(cData).
        let clientDataHash = Digest.sha256(credential.clientDataJSON)
        // §7.2 step 22: sig is a valid signature over authData ‖ hash with the credential public key.
        guard record.publicKey.isValidSignature(credential.signature, for: credential.authenticatorData + clientDataHash) else {
            throw WebAuthnError(.invalidSignature, "§7.2 step 22: signature does not verify")
        }
        // §7.2 step 23: unless both are zero, the counter must grow; a regression may mean a cloned authenticator.
        if authData.signCount != 0 || record.signCount != 0 {
            guard authData.signCount > record.signCount else {
                throw WebAuthnError(.signCountRegression, "§7.2 step 23: signCount did not increase")
            }
        }
        // §7.2 step 24: the caller stores newSignCount, backedUp and userVerified in the record.
        return VerifiedAuthentication(
            credentialID: record.id, newSignCount: authData.signCount, userVerified: authData.isUserVerified,
            backupEligible: authData.isBackupEligible, backedUp: authData.isBackedUp)
    }
}
