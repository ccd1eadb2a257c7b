import Foundation
import SesameStore
import WebAuthn

/// How the transaction of a verified sign-in ended.
enum SignInCompletion {
    case completed(owner: AuthsignalUserRecord, passkey: AuthenticatedPasskey, details: AuthsignalPasskeyDetails?)
    /// The passkey's owner is not a user of the face.
    case notOurs
    /// The backend decided the action's state meanwhile (`BLOCK`, a review).
    case closed
}

/// Who calls the client API: an app with only the tenant ID (tenant Basic), or one holding a track or result token.
public enum AuthsignalClientCaller: Sendable {
    case tenant(Project)
    case token(AuthsignalTokenClaims, Project)

    /// The tenant either way.
    public var project: Project {
        switch self {
        case .tenant(let project), .token(_, let project): project
        }
    }
}

/// A passkey registration or sign-in that started: what finishing names, and the options for the authenticator.
public struct ActionCeremonyStart<Options: Sendable & Hashable>: Sendable, Hashable {
    public let challengeID: String
    public let options: Options
}

/// Why a finished passkey ceremony did not verify, as the client API must tell it apart.
public enum ActionPasskeyRefusal: Sendable, Hashable {
    /// No passkey of the tenant has this credential ID (the SDKs then tell the OS to forget it).
    case unknownCredential
    /// A passkey of another user than the token's.
    case otherUsersCredential
    /// Anything else: `{"isVerified": false}`.
    case notVerified
}

/// A verified passkey ceremony of an action: the result token and who it was.
public struct ActionPasskeyResult: Sendable, Hashable {
    /// The result token (10 minutes, `read:authenticators add:authenticators`), for the backend's `validate`.
    public let token: String
    /// The integrator's user ID.
    public let userID: String
    public let authenticator: AuthsignalAuthenticator
    public let username: String?
    public let displayName: String?
}

/// How a passkey ceremony of an action ended; `reason` is the operator's code (empty when verified).
public enum ActionCeremonyOutcome: Sendable, Hashable {
    case verified(ActionPasskeyResult)
    case refused(ActionPasskeyRefusal, reason: String)
}

/// The client API's passkey ceremonies (spec §3), bound to actions on the ceremony engine: a registration or sign-in
/// challenge is bound to the action its token (or `challenge`) names, and finishing completes that action.
extension AuthsignalService {
    /// The most credential IDs one passkey lookup reads.
    public static let maximumLookupIDs = 20
    static let resultScopes: Set<AuthenticatorScope> = [.read, .add]

    // MARK: C1-C2 registration

    /// C1: starts registering a passkey for the token's user.
    /// - Throws: `unauthorized`/`expired` (token), `forbidden` (a `BLOCK` action, or a user with an authenticator and a
    ///   token without `add:authenticators`), `invalid_argument`, `no_relying_party`, `unsupported`, `limit_reached`.
    public func registrationOptions(token: String, username: String?, displayName: String?, requestOrigin: String?) throws(SesameError)
        -> ActionCeremonyStart<CreationOptionsJSON>
    {
        let (claims, project) = try verifyToken(token)
        let action = try tokenAction(claims, project)
        guard action.state != ActionState.block.rawValue else { throw SesameError(.forbidden, "the action is blocked") }
        let username = try username.map { text throws(SesameError) in try Self.checkAttribute(text, "username") }
        let displayName = try displayName.map { text throws(SesameError) in try Self.checkAttribute(text, "displayName") }
        var user = try ensureUser(project: project, userID: claims.sub)
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: requestOrigin)
        let existing = try authenticators(of: user)
        if !existing.isEmpty, !claims.scopes.contains(.add) {
            throw SesameError(.forbidden, "the user has an authenticator: adding a passkey needs add:authenticators")
        }
        guard existing.filter({ $0.passkey != nil }).count < PasskeyService.maximumPerUser else {
            throw SesameError(.limitReached, "\(PasskeyService.maximumPerUser) passkeys")
        }
        if username != nil || displayName != nil {
            user.apply(AuthsignalUserAttributes(username: username, displayName: displayName), at: clock.now())
            let updated = user
            _ = try StoreErrors.map { () throws(StoreError) in try store.authsignal.updateUser(updated) }
        }
        guard let owner = try StoreErrors.map({ () throws(StoreError) in try store.users.get(projectID: project.id, id: user.userID) }) else {
            throw SesameError(.notFound, "user")
        }
        let binding = ChallengeBinding.actionRegistration(actionID: action.id)
        let challenge = try sesame.ceremonies.start(binding, id: Identifiers.uuid(), project: project, rpID: policy.id, userID: user.userID)
        let name = user.username ?? user.email ?? user.externalID
        let excluded = try StoreErrors.map { () throws(StoreError) in try store.credentials.list(userID: user.userID) }
            .filter { $0.rpID == policy.id }
            .map { CredentialDescriptorJSON(CredentialDescriptor(id: $0.credentialID, transports: $0.transports)) }
        var options = CreationOptionsJSON(
            rp: .init(id: policy.id, name: project.relyingPartyName),
            user: .init(id: Base64URL.encode(owner.userHandle), name: name, displayName: user.displayName ?? name),
            challenge: Base64URL.encode(challenge.challenge), pubKeyCredParams: PasskeyService.algorithms.map { .init(alg: $0.rawValue) },
            timeout: binding.kind.timeoutMilliseconds, excludeCredentials: excluded,
            authenticatorSelection: .init(userVerification: binding.kind.userVerification.requested)
        )
        options.attestation = project.attestationPolicy.attestationConveyance
        return ActionCeremonyStart(challengeID: challenge.id, options: options)
    }

    /// C2: finishes the registration with the authenticator's `RegistrationResponseJSON`; any attempt uses the challenge
    /// up. A verified passkey completes the token's action (`CHALLENGE_SUCCEEDED`, `PASSKEY`) and earns a result token.
    /// - Throws: `unauthorized`/`expired` (token), `expired` (`challenge_expired`: unknown, used or expired challenge),
    ///   `conflict` (the credential is registered), `limit_reached`, `no_relying_party`, `unsupported`.
    public func addPasskey(token: String, challengeID: String, credentialJSON: [UInt8], deviceID: String?, requestOrigin: String?)
        throws(SesameError) -> ActionCeremonyOutcome
    {
        let (claims, project) = try verifyToken(token)
        let action = try tokenAction(claims, project)
        let deviceID = try deviceID.map { text throws(SesameError) in try Self.checkAttribute(text, "deviceId") }
        let user = try ensureUser(project: project, userID: claims.sub)
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: requestOrigin)
        let engine = sesame.ceremonies
        let consumed = try engine.consume(challengeID, binding: .actionRegistration(actionID: action.id), project: project)
        guard consumed.userID == user.userID else { throw CeremonyEngine.challengeExpired }
        let verified: VerifiedRegistration
        do { verified = try engine.finishRegistration(credentialJSON, challenge: consumed, project: project, policy: policy) } catch where error.code == .verificationFailed {
            return .refused(.notVerified, reason: error.reason)
        }
        let now = clock.now()
        let record = SesameStore.CredentialRecord(verified, id: Identifiers.unique(), projectID: project.id, userID: user.userID, rpID: policy.id,
                                                  name: "", createdAt: now)
        let details = AuthsignalPasskeyDetails(credentialRowID: record.id, deviceID: deviceID, username: user.username, displayName: user.displayName)
        let inserted = try StoreErrors.map { () throws(StoreError) -> Bool in
            try store.transaction { transaction throws(StoreError) -> Bool in
                guard try transaction.credentials.createIfUnderLimit(record, limit: PasskeyService.maximumPerUser, now: now) else { return false }
                try transaction.authsignal.createPasskeyDetails(details)
                try transaction.authsignal.setState(id: action.id, state: ActionState.challengeSucceeded.rawValue,
                                                    verificationMethod: passkeyVerificationMethod, at: now,
                                                    onlyFrom: ActionState.ceremonyOpen.map(\.rawValue))
                return true
            }
        }
        guard inserted else { throw SesameError(.limitReached, "\(PasskeyService.maximumPerUser) passkeys") }
        let result = try tokens.mint(projectID: project.id, userID: user.externalID, action: action.view, scopes: Self.resultScopes)
        return .verified(ActionPasskeyResult(token: result, userID: user.externalID,
                                             authenticator: AuthsignalAuthenticator(record, details: details, user: user),
                                             username: user.username, displayName: user.displayName))
    }

    // MARK: C3-C5 sign-in

    /// C3: a new action without a user for a usernameless sign-in; returns the ID that C4 names as `challengeId`.
    /// - Throws: `invalid_argument` (action code, an idempotency key in use).
    public func initiateChallenge(project: Project, actionCode: String, idempotencyKey: String?) throws(SesameError) -> String {
        try signInAction(project: project, actionCode: try Self.checkActionCode(actionCode),
                         idempotencyKey: try idempotencyKey.map { key throws(SesameError) in try Self.checkIdentifier(key, "idempotencyKey") }).id
    }

    /// C4: starts a passkey sign-in. With tenant Basic it is usernameless, for the action C3 made (`challengeID`) or a
    /// new `signInWithPasskey` one; with a token it is the token's action and user, offering that user's passkeys.
    /// - Throws: `expired` (`challenge_expired`: unknown action), `forbidden` (a `BLOCK` action), `no_relying_party`,
    ///   `unsupported`.
    public func authenticationOptions(caller: AuthsignalClientCaller, challengeID: String?, requestOrigin: String?) throws(SesameError)
        -> ActionCeremonyStart<RequestOptionsJSON>
    {
        let project = caller.project
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: requestOrigin)
        let action: AuthsignalActionRecord
        var allowed: [CredentialDescriptor] = []
        var userID: String?
        switch caller {
        case .token(let claims, _):
            action = try tokenAction(claims, project)
            if let user = try StoreErrors.map({ () throws(StoreError) in try store.authsignal.user(projectID: project.id, externalID: claims.sub) }) {
                userID = user.userID
                allowed = try StoreErrors.map { () throws(StoreError) in try store.credentials.list(userID: user.userID) }
                    .filter { $0.rpID == policy.id }.map { CredentialDescriptor(id: $0.credentialID, transports: $0.transports) }
            }
        case .tenant:
            // Where challenges are rows (PostgreSQL), the action's check goes with the challenge's insert, in one
            // statement; only a refused one reads the action, to say why.
            if let challengeID, let challenge = try sesame.ceremonies.start(
                .action(actionID: challengeID), id: Identifiers.uuid(), project: project, rpID: policy.id,
                insertingWith: { challenge throws(StoreError) in
                    try store.authsignal.createChallenge(challenge, forUsernamelessActionNotIn: ActionState.block.rawValue)
                }
            ) {
                return Self.options(for: challenge, policy: policy, allowed: [])
            }
            if let challengeID {
                let found = try StoreErrors.map { () throws(StoreError) in try actionRecord(id: challengeID) }
                guard let found, found.projectID == project.id, found.externalUserID == nil else { throw CeremonyEngine.challengeExpired }
                action = found
            } else {
                action = try signInAction(project: project, actionCode: Self.defaultSignInAction, idempotencyKey: nil)
            }
        }
        guard action.state != ActionState.block.rawValue else { throw SesameError(.forbidden, "the action is blocked") }
        let challenge = try sesame.ceremonies.start(.action(actionID: action.id), id: Identifiers.uuid(), project: project, rpID: policy.id,
                                                    userID: userID)
        return Self.options(for: challenge, policy: policy, allowed: allowed)
    }

    /// C4's answer for an action's new challenge.
    private static func options(for challenge: ChallengeRecord, policy: RelyingPartyPolicy, allowed: [CredentialDescriptor])
        -> ActionCeremonyStart<RequestOptionsJSON>
    {
        ActionCeremonyStart(challengeID: challenge.id, options: RequestOptionsJSON(rpID: policy.id, challenge: challenge.challenge,
                                                                                   allowCredentials: allowed, kind: ChallengeBinding.Kind.action))
    }

    /// C5: finishes a passkey sign-in with the authenticator's `AuthenticationResponseJSON`, in one transaction with the
    /// action's completion; any attempt uses the challenge up. A usernameless sign-in learns its user here.
    /// - Throws: `expired` (`challenge_expired`: unknown, used or expired challenge, or another token's), `no_relying_party`,
    ///   `unsupported`.
    public func verifyPasskey(caller: AuthsignalClientCaller, challengeID: String, credentialJSON: [UInt8], requestOrigin: String?)
        throws(SesameError) -> ActionCeremonyOutcome
    {
        let project = caller.project
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: requestOrigin)
        let bound = try StoreErrors.map { () throws(StoreError) -> (challenge: ChallengeRecord, action: AuthsignalActionRecord)? in
            guard let memory = store.challengeMemory(forPurpose: ChallengeBinding.actionPurpose) else {
                return try store.authsignal.pendingChallenge(id: challengeID, purpose: ChallengeBinding.actionPurpose)
            }
            guard let challenge = try memory.get(id: challengeID), challenge.purpose == ChallengeBinding.actionPurpose, let actionID = challenge.requestID,
                  let action = try actionRecord(id: actionID) else { return nil }
            return (challenge, action)
        }
        guard let (pending, action) = bound, pending.projectID == project.id else { throw CeremonyEngine.challengeExpired }
        if case .token(let claims, _) = caller, claims.other.idempotencyKey != action.idempotencyKey { throw CeremonyEngine.challengeExpired }
        var identification = CeremonyIdentification.usernameless
        if let external = action.externalUserID,
           let user = try StoreErrors.map({ () throws(StoreError) in try store.authsignal.user(projectID: project.id, externalID: external) }) {
            identification = .identifiedUser(userID: user.userID)
        }
        let now = clock.now()
        let finished: SignInCompletion
        do {
            finished = try sesame.ceremonies.finishAuthentication(
                credentialJSON, challengeID: challengeID, binding: .action(actionID: action.id), project: project, policy: policy,
                identification: identification, userVerification: ChallengeBinding.Kind.action.userVerification,
                prefetch: { transaction, credentialID throws(StoreError) in
                    try transaction.authsignal.prefetchUser(rpID: policy.id, passkeyCredentialID: credentialID)
                }
            ) { transaction, passkey throws(StoreError) -> SignInCompletion in
                // A passkey of a project user the face does not know (another face's account) is no passkey here.
                guard let (owner, details) = try transaction.authsignal.user(rpID: policy.id, passkeyCredentialID: passkey.stored.credentialID),
                      owner.userID == passkey.owner.id
                else { return .notOurs }
                let concluded = try conclude(action, as: .challengeSucceeded, verificationMethod: passkeyVerificationMethod,
                                             externalUserID: owner.externalID, from: ActionState.ceremonyOpen, at: now, in: transaction)
                return concluded ? .completed(owner: owner, passkey: passkey, details: details) : .closed
            }
        } catch where error.code == .verificationFailed || error.code == .blocked {
            try markFailed(action)
            if error.reason == "unknown_credential" { return .refused(.unknownCredential, reason: error.reason) }
            if error.reason == WebAuthnError.Code.userHandleMismatch.rawValue, case .identifiedUser = identification {
                return .refused(.otherUsersCredential, reason: error.reason)
            }
            return .refused(.notVerified, reason: error.reason)
        }
        let owner: AuthsignalUserRecord, passkey: AuthenticatedPasskey, details: AuthsignalPasskeyDetails?
        switch finished {
        case .notOurs:
            try markFailed(action)
            return .refused(.unknownCredential, reason: "unknown_credential")
        case .closed: return .refused(.notVerified, reason: "action_closed")
        case .completed(let user, let used, let read): (owner, passkey, details) = (user, used, read)
        }
        // The passkey as this use left it.
        var credential = passkey.stored
        credential.signCount = Int64(passkey.verified.newSignCount)
        credential.backedUp = passkey.verified.backedUp
        credential.lastUsedAt = now
        let authenticator = AuthsignalAuthenticator(credential, details: details, user: owner)
        let result = try tokens.mint(projectID: project.id, userID: owner.externalID, action: action.view, scopes: Self.resultScopes)
        return .verified(ActionPasskeyResult(token: result, userID: owner.externalID, authenticator: authenticator,
                                             username: authenticator.username, displayName: authenticator.displayName))
    }

    // MARK: C6-C7

    /// C6: the first of these credential IDs (base64url, as the app stored it) that names a passkey of the tenant, and
    /// when it was verified; `nil` when none does.
    /// - Throws: `invalid_argument` (more than ``maximumLookupIDs``), `no_relying_party`, `unsupported`.
    public func passkey(project: Project, credentialIDs: [String], requestOrigin: String?) throws(SesameError) -> (credentialID: String, verifiedAt: Date)? {
        guard credentialIDs.count <= Self.maximumLookupIDs else { throw SesameError(.invalidArgument, "at most \(Self.maximumLookupIDs) credential IDs") }
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: requestOrigin)
        for text in credentialIDs {
            guard text.utf8.count <= 1400, let id = try? Base64URL.decode(text), !id.isEmpty else { continue }
            let found = try StoreErrors.map { () throws(StoreError) in try store.credentials.find(rpID: policy.id, credentialID: id) }
            if let found, found.projectID == project.id { return (text, found.createdAt) }
        }
        return nil
    }

    /// C7: the token user's authenticators.
    /// - Throws: `forbidden` without `read:authenticators`.
    public func authenticators(claims: AuthsignalTokenClaims, project: Project) throws(SesameError) -> [AuthsignalAuthenticator] {
        guard claims.scopes.contains(.read) else { throw SesameError(.forbidden, "the token lacks read:authenticators") }
        return try authenticators(project: project, userID: claims.sub)
    }

    // MARK: Shared

    /// The action a genuine token names.
    /// - Throws: `unauthorized` (`token_invalid`) when it is gone (its user was deleted) or is not the token's.
    func tokenAction(_ claims: AuthsignalTokenClaims, _ project: Project) throws(SesameError) -> AuthsignalActionRecord {
        let record = try StoreErrors.map { () throws(StoreError) in
            try store.authsignal.action(projectID: project.id, idempotencyKey: claims.other.idempotencyKey)
        }
        guard let record, record.actionCode == claims.other.actionCode, record.externalUserID == nil || record.externalUserID == claims.sub else {
            throw SesameError(.unauthorized, "the token's action is gone", reason: "token_invalid")
        }
        return record
    }

    /// A usernameless sign-in's action: new, or the user-less one of this code its idempotency key names. A new one
    /// without an idempotency key is held in memory on SQLite (``Store/pendingActions``, unless full) until its
    /// verification writes it with its outcome; any other is written as bookkeeping (its commit does not wait for the
    /// disk): it lives for this ceremony, which a power cut would only fail, and the ceremony's outcome is written durably.
    private func signInAction(project: Project, actionCode: String, idempotencyKey: String?) throws(SesameError) -> AuthsignalActionRecord {
        let configured = try configuredOutcome(project: project, actionCode: actionCode)
        let record = try StoreErrors.map { () throws(StoreError) -> AuthsignalActionRecord? in
            if let idempotencyKey, let existing = try store.authsignal.action(projectID: project.id, idempotencyKey: idempotencyKey) {
                return existing.externalUserID == nil && existing.actionCode == actionCode ? existing : nil
            }
            let state: ActionState = configured == .block ? .block : .challengeRequired
            let now = clock.now()
            let record = AuthsignalActionRecord(id: Identifiers.uuid(), projectID: project.id, externalUserID: nil, actionCode: actionCode,
                                                idempotencyKey: idempotencyKey ?? Identifiers.uuid(), state: state.rawValue, stateUpdatedAt: now,
                                                createdAt: now)
            if idempotencyKey == nil, store.pendingActions?.insert(record) == true { return record }
            try store.authsignal.createAction(record, durability: .process)
            return record
        }
        guard let record else { throw SesameError(.invalidArgument, "the idempotency key belongs to another action") }
        return record
    }

    /// The action with this ID: held in memory while a usernameless sign-in is in flight on SQLite, else its row.
    private func actionRecord(id: String) throws(StoreError) -> AuthsignalActionRecord? {
        if let held = try store.pendingActions?.get(id: id) { return held }
        return try store.authsignal.action(id: id)
    }

    /// Gives a sign-in's action its outcome in `transaction`, unless its state is no longer one of `allowed` (the backend
    /// decided it meanwhile): an action held in memory is taken and written as a row (forgotten there once the
    /// transaction commits, given back if it does not), a row is updated.
    /// - Returns: whether the action took the outcome.
    private func conclude(_ action: AuthsignalActionRecord, as state: ActionState, verificationMethod: String? = nil, externalUserID: String? = nil,
                          from allowed: [ActionState], at time: Date, in transaction: StoreTransaction) throws(StoreError) -> Bool {
        guard let memory = store.pendingActions, let held = memory.take(id: action.id) else {
            return try transaction.authsignal.setState(id: action.id, state: state.rawValue, verificationMethod: verificationMethod,
                                                       externalUserID: externalUserID, at: time, onlyFrom: allowed.map(\.rawValue))
        }
        guard allowed.contains(where: { $0.rawValue == held.state }) else {
            memory.restore(id: held.id)
            return false
        }
        transaction.database.onRollback { memory.restore(id: held.id) }
        var concluded = held
        concluded.state = state.rawValue
        concluded.stateUpdatedAt = time
        concluded.verificationMethod = verificationMethod ?? held.verificationMethod
        concluded.externalUserID = externalUserID ?? held.externalUserID
        try transaction.authsignal.createAction(concluded)
        transaction.database.onCommit { memory.forget(id: held.id) }
        return true
    }

    /// A refused sign-in fails its action (unless the backend decided its state meanwhile). In a transaction, so that
    /// it takes turns with a concurrent verification of the same action as a row's update would.
    private func markFailed(_ action: AuthsignalActionRecord) throws(SesameError) {
        let now = clock.now()
        _ = try StoreErrors.map { () throws(StoreError) in
            try store.transaction { transaction throws(StoreError) in
                try conclude(action, as: .challengeFailed, from: [.challengeRequired, .allow], at: now, in: transaction)
            }
        }
    }
}
