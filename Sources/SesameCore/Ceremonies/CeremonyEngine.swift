import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// How the person of an authentication ceremony is known before it.
public enum CeremonyIdentification: Sendable, Hashable {
    /// Nobody: the credential names its user, and the response must carry that user's handle (Appwrite's sign-in).
    case usernameless
    /// A user identified before the ceremony: the credential must be theirs, and a returned user handle too.
    case identifiedUser(userID: String)
    /// The person a partner linked, or `nil` for whoever confirms: any passkey of the project may answer, a returned
    /// user handle must be its owner's, and only then must the owner be the linked person (`wrong_identity`, so a
    /// foreign credential ID learns nothing from a broken assertion).
    case linkedPerson(userID: String?)
}

/// When user verification (the UV flag) is enforced in an authentication ceremony.
public enum UserVerificationPolicy: Sendable, Hashable {
    /// The WebAuthn core refuses an assertion without it (§7.2 step 17, `user_verification_required`).
    case required
    /// Checked after identity, as its own refusal (`user_not_verified`; BotShield §1.5 step 8).
    case afterIdentity
}

/// A genuine assertion the engine accepted and recorded: whose passkey it was and what the core verified.
public struct AuthenticatedPasskey: Sendable {
    /// The passkey's owner, active.
    public let owner: UserRecord
    /// The stored passkey as it was read before this use (its sign count, backup state and last use are the old ones).
    public let stored: SesameStore.CredentialRecord
    /// The stored passkey's ID (not the credential ID).
    public var passkeyID: String { stored.id }
    /// What the WebAuthn core verified: the new sign count, the UV and backup flags.
    public let verified: VerifiedAuthentication
    /// The challenge the assertion answered, as it was issued (whom it was for, under which link).
    public let challenge: ChallengeRecord
}

/// The one path every face's passkey registration and sign-in take after the challenge is consumed: WebAuthn
/// verification against the relying party policy, the identification mode and the user-verification policy, then the
/// blocked-user check and the sign-count, backup-state and last-use update, which refuses a count that did not move
/// forward on every path.
///
/// A registration is also judged by the loaded FIDO metadata and the project's ``AttestationPolicy``.
///
/// Refusals are ``SesameError``s whose ``SesameError/reason`` is the WebAuthn core's code or a domain reason
/// (`unknown_credential`, `relying_party_changed`, `sign_count_regression`, `wrong_identity`, `user_not_verified`,
/// an ``AttestationPolicy/Refusal`` code).
public struct CeremonyEngine: Sendable {
    let store: Store
    let clock: any SesameClock

    /// How long a ceremony's challenge works: 5 minutes, on every face.
    public static let challengeLifetime: TimeInterval = 300
    /// The passkeys' public keys, parsed once per process.
    static let parsedKeys = ParsedKeys()

    /// Starts a ceremony: keeps a fresh 32-byte challenge bound to `binding`, for ``challengeLifetime``, where
    /// its finish takes it: in the database, so that any node can finish it, or, for an
    /// authentication on SQLite, in this process's memory (``Store/pendingChallenges``).
    /// - Parameters:
    ///   - id: the challenge's ID (what finishing names).
    ///   - rpID: the relying party the ceremony runs under; finishing under another is refused.
    ///   - userID: whom it is for, when known; `linkID`: the partner link it was issued under; `clientIP`: a
    ///     sign-in's caller; `name`: what the ceremony carries to its finish (an ID creation's new user handle).
    public func start(_ binding: ChallengeBinding, id: String, project: Project, rpID: String, userID: String? = nil, linkID: String? = nil,
                      clientIP: String? = nil, name: String? = nil) throws(SesameError) -> ChallengeRecord {
        let record = challengeRecord(binding, id: id, project: project, rpID: rpID, userID: userID, linkID: linkID, name: name, clientIP: clientIP)
        try StoreErrors.map { () throws(StoreError) in
            if let memory = store.challengeMemory(for: binding) { try memory.insert(record) } else { try store.challenges.create(record) }
        }
        return record
    }

    /// ``start(_:id:project:rpID:userID:linkID:clientIP:name:)`` for a binding whose challenges are database rows, with
    /// the insert made by `insert`, which writes it only while a condition of the caller's holds (checked in the same
    /// statement) and says whether it did.
    /// - Returns: the challenge, or `nil` when `insert` wrote nothing, or when `binding`'s challenges are kept in memory
    ///   (the caller then checks its condition and calls ``start(_:id:project:rpID:userID:linkID:clientIP:name:)``).
    public func start(_ binding: ChallengeBinding, id: String, project: Project, rpID: String,
                      insertingWith insert: (ChallengeRecord) throws(StoreError) -> Bool) throws(SesameError) -> ChallengeRecord? {
        guard store.challengeMemory(for: binding) == nil else { return nil }
        let record = challengeRecord(binding, id: id, project: project, rpID: rpID, userID: nil)
        return try StoreErrors.map { () throws(StoreError) in try insert(record) } ? record : nil
    }

    /// Starts a registration for the account session of `binding`: a pending passkey named `name`, stored only while
    /// the user has fewer than `limit` passkeys and pending registrations (checked atomically).
    /// - Returns: the pending registration, or `nil` when the limit is reached.
    public func startRegistration(_ binding: ChallengeBinding, id: String, project: Project, rpID: String, name: String?, limit: Int)
        throws(SesameError) -> ChallengeRecord?
    {
        guard case .accountSession(let userID, _) = binding else { preconditionFailure("a registration is bound to an account session") }
        let record = challengeRecord(binding, id: id, project: project, rpID: rpID, userID: userID, name: name)
        let created = try StoreErrors.map { () throws(StoreError) in try store.challenges.createIfUnderLimit(record, limit: limit) }
        return created ? record : nil
    }

    private func challengeRecord(_ binding: ChallengeBinding, id: String, project: Project, rpID: String, userID: String?, linkID: String? = nil,
                                 name: String? = nil, clientIP: String? = nil) -> ChallengeRecord {
        let now = clock.now()
        var sessionID: String?, requestID: String?
        switch binding {
        case .accountSession(_, let session): sessionID = session
        case .signIn: requestID = clientIP
        case .idCreation: break
        case .verificationRequest(let request), .handOff(let request): requestID = request
        case .actionRegistration(let action), .action(let action): requestID = action
        }
        return ChallengeRecord(
            id: id, projectID: project.id, purpose: binding.purpose, challenge: SecureRandom.bytes(count: ChallengeService.byteCount), userID: userID,
            sessionID: sessionID, requestID: requestID, expiresAt: now.addingTimeInterval(Self.challengeLifetime), createdAt: now, rpID: rpID,
            name: name, linkID: linkID
        )
    }

    /// Finishes a registration (WebAuthn §7.1) with the `RegistrationResponseJSON` against the consumed `challenge`, then
    /// judges it by the loaded FIDO metadata and the project's attestation policy (``judge(_:project:at:)``).
    /// - Parameters:
    ///   - project: whose attestation policy applies (the challenge's project).
    /// - Throws: `expired` (`relying_party_changed`), `verification_failed` with the core's code (a refusing metadata
    ///   status as `authenticator_revoked` and its siblings) or an ``AttestationPolicy/Refusal`` code.
    public func finishRegistration(_ credentialJSON: [UInt8], challenge: ChallengeRecord, project: Project, policy: RelyingPartyPolicy)
        throws(SesameError) -> VerifiedRegistration
    {
        guard challenge.rpID == policy.id else {
            throw SesameError(.expired, "the relying party changed during the ceremony", reason: "relying_party_changed")
        }
        guard challenge.projectID == project.id else { throw Self.challengeExpired }
        let now = clock.now()
        let verified: VerifiedRegistration
        do {
            // §7.1 steps 1-3: parse the response; steps 5-27 are the core's.
            let credential = try RegistrationCredential(json: credentialJSON)
            verified = try RegistrationVerifier.verify(credential, expectations: RegistrationExpectations(policy: policy, challenge: challenge.challenge),
                                                       at: now)
        } catch {
            throw SesameError.verification(error)
        }
        try judge(verified, project: project, at: now)
        return verified
    }

    /// Judges a verified registration by the loaded FIDO metadata and then by the project's attestation policy
    /// (``AttestationPolicy/judge(_:entry:at:)``). The entry is found by AAGUID, or by attestation certificate key
    /// identifier for U2F; an authenticator metadata does not know passes the metadata and meets the policy without
    /// an entry.
    /// - Throws: `verification_failed` with the core's code as the reason (`authenticator_revoked`, …,
    ///   `untrusted_attestation`) or a policy refusal; `attestation_policy_unreadable` when the project's stored
    ///   policy no longer reads; a storage error.
    func judge(_ verified: VerifiedRegistration, project: Project, at time: Date) throws(SesameError) {
        let policy = try project.readableAttestationPolicy()
        let entry = try MetadataIdentifier(verified).flatMap { identifier throws(SesameError) in
            try MetadataService(store: store, clock: clock).entry(identifier)
        }
        _ = try policy.judge(verified, entry: entry, at: time)
    }

    /// Records the use of a verified `assertion` in `transaction`, then applies the refusals that come after a recorded
    /// use. §7.2 steps 23-24: the new sign count and backup state are stored atomically, only if the count moved
    /// forward; a concurrent use of the same count loses here, whatever the face.
    /// - Returns: `nil` when the ceremony succeeds; else the refusal to report: `verification_failed`
    ///   (`sign_count_regression`, nothing recorded), `wrong_identity` or `user_not_verified` (the use recorded).
    /// - Parameter readForUse: whether `transaction` read the passkey for this use
    ///   (``CredentialRepository/findWithOwner(rpID:credentialID:forUse:)``) before `assertion` was verified against it:
    ///   the row is locked since that read, so a concurrent use lost at the verifier already, and the write, which cannot
    ///   miss, is sent unanswered.
    private func recordUse(_ assertion: AuthenticatedPasskey, identification: CeremonyIdentification, userVerification: UserVerificationPolicy,
                           in transaction: StoreTransaction, readForUse: Bool) throws(StoreError) -> SesameError? {
        let verified = assertion.verified, newSignCount = Int64(verified.newSignCount), time = clock.now()
        if readForUse {
            try transaction.credentials.recordUseOfReadPasskey(id: assertion.passkeyID, newSignCount: newSignCount, backedUp: verified.backedUp,
                                                               userVerified: verified.userVerified, at: time)
        } else {
            guard try transaction.credentials.updateAfterAuthentication(id: assertion.passkeyID, newSignCount: newSignCount,
                                                                        backedUp: verified.backedUp, userVerified: verified.userVerified, at: time)
            else { return Self.signCountRegression }
        }
        return Self.refusalAfterUse(assertion, identification: identification, userVerification: userVerification)
    }

    /// Finishes an authentication whose challenge `challengeID` is still stored, in one write transaction, for a person
    /// known before the ceremony as `identification`: see
    /// ``finishAuthentication(_:challengeID:binding:project:policy:userVerification:acknowledgement:prefetch:admit:prepare:effect:)``.
    public func finishAuthentication<T>(_ credentialJSON: [UInt8], challengeID: String, binding: ChallengeBinding, project: Project,
                                        policy: RelyingPartyPolicy, identification: CeremonyIdentification,
                                        userVerification: UserVerificationPolicy, acknowledgement: FinishAcknowledgement = .durable,
                                        prefetch: ((StoreTransaction, _ credentialID: [UInt8]) throws(StoreError) -> Void)? = nil,
                                        effect: (StoreTransaction, AuthenticatedPasskey) throws(StoreError) -> T) throws(SesameError) -> T
    {
        try finishAuthentication(credentialJSON, challengeID: challengeID, binding: binding, project: project, policy: policy,
                                 userVerification: userVerification, acknowledgement: acknowledgement, prefetch: prefetch,
                                 admit: { _, _ throws(StoreError) in .verify(identification) }, prepare: { _ in () },
                                 effect: { transaction, assertion, _ throws(StoreError) in try effect(transaction, assertion) })
    }

    /// Finishes an authentication whose challenge `challengeID` is still stored: the challenge is taken back for
    /// `binding`, `admit` judges it, the answer is verified against it (reads only), `prepare` runs, and the use is
    /// recorded and `effect` run in one write transaction. Any attempt uses the challenge up, a refused one too (then
    /// that is its only write); of concurrent finishes of one challenge exactly one gets it, and a transaction that
    /// does not commit gives it back.
    ///
    /// Where the challenge is a database row (PostgreSQL), it is taken inside the transaction, and admitted, the answer
    /// verified and `prepare` run there, the passkey's read sent ahead with the taking, which saves the round trips of
    /// reading both beforehand; a refusal then commits the taking alone. That read locks the passkey's row until the
    /// commit, so the use's write needs no answer and goes out with the commit. Where it is held in memory (SQLite,
    /// whose writers are serialized), taking it costs nothing, and the admission, the verification and `prepare` run
    /// before the write transaction, outside the write lock; the challenge goes back to memory if the transaction
    /// fails.
    /// - Parameters:
    ///   - prefetch: reads `admit` and `effect` will make, sent ahead with the taking (a round trip fewer on
    ///     PostgreSQL), given the credential ID the answer names; called only where the answer is verified inside the
    ///     transaction.
    ///   - admit: given the challenge and where to read (the transaction, or the store before it): whom the answer must
    ///     come from, or the outcome that ends the finish before any verification, the challenge used up.
    ///   - prepare: work on the verified assertion that must not hold the write lock (minting a token), once per
    ///     challenge.
    ///   - effect: what a verified ceremony writes besides the use (a sign-in token), in the same transaction.
    ///   - acknowledgement: when the transaction counts as done; see ``FinishAcknowledgement``.
    /// - Throws: what ``verifyAuthentication(_:challenge:project:policy:identification:userVerification:)`` throws, the
    ///   refusals of ``recordUse(_:identification:userVerification:in:readForUse:)``, and `expired` (`challenge_expired`) when the
    ///   challenge is unknown, used, expired or not `binding`'s.
    public func finishAuthentication<P, T>(_ credentialJSON: [UInt8], challengeID: String, binding: ChallengeBinding, project: Project,
                                           policy: RelyingPartyPolicy, userVerification: UserVerificationPolicy,
                                           acknowledgement: FinishAcknowledgement = .durable,
                                           prefetch: ((StoreTransaction, _ credentialID: [UInt8]) throws(StoreError) -> Void)? = nil,
                                           admit: (ChallengeRecord, any Repositories) throws(StoreError) -> Admission<T>,
                                           prepare: (AuthenticatedPasskey) -> P,
                                           effect: (StoreTransaction, AuthenticatedPasskey, P) throws(StoreError) -> T) throws(SesameError) -> T
    {
        // An account session or an action registration binds registrations, which no authentication may take.
        switch binding {
        case .accountSession, .actionRegistration, .idCreation: throw Self.challengeExpired
        case .signIn, .verificationRequest, .handOff, .action: break
        }
        let memory = store.challengeMemory(for: binding)
        let inFlight = acknowledgement == .inFlight && memory != nil
        var verifiedFirst: (assertion: AuthenticatedPasskey, identification: CeremonyIdentification, prepared: P)?
        if memory != nil {  // taken, admitted and verified before the transaction; a row is taken and verified inside it
            // Any attempt past here uses the challenge up: of concurrent finishes, the others find it gone.
            guard let taken = try StoreErrors.map({ () throws(StoreError) in try take(challengeID, binding: binding, project: project, now: clock.now(),
                                                                                     from: store) })
            else { throw Self.challengeExpired }
            let identification: CeremonyIdentification
            switch try StoreErrors.map({ () throws(StoreError) in try admit(taken, store) }) {
            case .end(let value): return value
            case .verify(let admitted): identification = admitted
            }
            let assertion = try verifyAuthentication(credentialJSON, challenge: taken, project: project, policy: policy,
                                                     identification: identification, userVerification: userVerification)
            verifiedFirst = (assertion, identification, prepare(assertion))
        }
        /// §7.2 steps 23-24 for an assertion verified against its challenge, then the ceremony's own writes; `prepared`
        /// only once the use is recorded.
        func recordUseThenEffect(_ assertion: AuthenticatedPasskey, _ identification: CeremonyIdentification, readForUse: Bool,
                                 prepared: () -> P, in transaction: StoreTransaction) throws(StoreError) -> FinishOutcome<T> {
            if let refusal = try recordUse(assertion, identification: identification, userVerification: userVerification, in: transaction,
                                           readForUse: readForUse) {
                return .refused(refusal)
            }
            return .done(try effect(transaction, assertion, prepared()))
        }
        let now = clock.now()
        let outcome: FinishOutcome<T>
        do {
            outcome = try StoreErrors.map { () throws(StoreError) -> FinishOutcome<T> in
                try (inFlight ? store.bookkeeping : store.transaction) { transaction throws(StoreError) -> FinishOutcome<T> in
                    if let verifiedFirst {
                        return try recordUseThenEffect(verifiedFirst.assertion, verifiedFirst.identification, readForUse: false,
                                                       prepared: { verifiedFirst.prepared }, in: transaction)
                    }
                    // Verified in the transaction: the passkey's read goes out with the taking (one round trip on PostgreSQL).
                    let parsed = try? AuthenticationCredential(json: credentialJSON)
                    if let parsed {
                        try transaction.credentials.prefetchWithOwnerForUse(rpID: policy.id, credentialID: parsed.rawID)
                        try prefetch?(transaction, parsed.rawID)
                    }
                    guard let taken = try take(challengeID, binding: binding, project: project, now: now, from: transaction) else { return .used }
                    let identification: CeremonyIdentification
                    switch try admit(taken, transaction) {
                    case .end(let value): return .done(value)  // the transaction commits the challenge's taking alone
                    case .verify(let admitted): identification = admitted
                    }
                    let assertion: AuthenticatedPasskey
                    do throws(SesameError) {
                        assertion = try verifyAuthentication(credentialJSON, parsed: parsed, challenge: taken, project: project, policy: policy,
                                                             identification: identification, userVerification: userVerification,
                                                             reading: transaction, forUse: true)
                    } catch where error.code == .unavailable || error.code == .internalFailure {
                        // A storage failure is no refusal: the transaction rolls back with it (the challenge stays), and
                        // it is reported as itself.
                        throw StoreError(error.code == .unavailable ? .unavailable : .internalFailure, error.detail)
                    } catch {
                        // Refused: the transaction commits the challenge's taking alone.
                        return .refused(error)
                    }
                    return try recordUseThenEffect(assertion, identification, readForUse: true, prepared: { prepare(assertion) }, in: transaction)
                }
            }
        } catch {
            // A transaction that did not commit gives a challenge taken from memory back, as it would its row.
            if let memory, let taken = verifiedFirst?.assertion.challenge { memory.restore(taken) }
            throw error
        }
        switch outcome {
        case .done(let value): return value
        case .used: throw Self.challengeExpired
        case .refused(let refusal): throw refusal
        }
    }

    static let signCountRegression = SesameError(.verificationFailed, "the sign count did not move forward",
                                                 reason: WebAuthnError.Code.signCountRegression.rawValue)
    static let challengeExpired = SesameError(.expired, "the challenge is unknown, used or expired", reason: "challenge_expired")

    /// Verifies an authentication (WebAuthn §7.2 steps 1-22) with the `AuthenticationResponseJSON` against `challenge`,
    /// and the blocked-user check, writing nothing; ``finishAuthentication(_:challengeID:binding:project:policy:userVerification:acknowledgement:prefetch:admit:prepare:effect:)``
    /// then records the use in the transaction that writes what the ceremony completes.
    /// - Parameters:
    ///   - project: whose passkeys (on `policy.id`) may answer.
    ///   - identification: who the person is known to be before the ceremony.
    ///   - userVerification: when the UV flag is enforced; `policy.requiresUserVerification` is set from it.
    /// - Throws: `expired` (`relying_party_changed`), `verification_failed` (the core's code, `unknown_credential`),
    ///   `blocked`, or a storage error.
    public func verifyAuthentication(_ credentialJSON: [UInt8], challenge: ChallengeRecord, project: Project, policy: RelyingPartyPolicy,
                                     identification: CeremonyIdentification, userVerification: UserVerificationPolicy)
        throws(SesameError) -> AuthenticatedPasskey
    {
        try verifyAuthentication(credentialJSON, challenge: challenge, project: project, policy: policy, identification: identification,
                                 userVerification: userVerification, reading: store)
    }

    /// ``verifyAuthentication(_:challenge:project:policy:identification:userVerification:)`` reading the passkey and its
    /// owner from `repositories` (a transaction's, so that it needs no second connection).
    /// - Parameters:
    ///   - parsed: `credentialJSON` as the caller parsed it already.
    ///   - forUse: read the passkey for the use the same transaction records
    ///     (``CredentialRepository/findWithOwner(rpID:credentialID:forUse:)``).
    private func verifyAuthentication(_ credentialJSON: [UInt8], parsed: AuthenticationCredential? = nil, challenge: ChallengeRecord,
                                      project: Project, policy: RelyingPartyPolicy, identification: CeremonyIdentification,
                                      userVerification: UserVerificationPolicy, reading repositories: some Repositories, forUse: Bool = false)
        throws(SesameError) -> AuthenticatedPasskey
    {
        guard challenge.rpID == policy.id else {
            throw SesameError(.expired, "the relying party changed during the ceremony", reason: "relying_party_changed")
        }
        // §7.2 steps 1-3: parse the response (unless the caller did).
        let credential: AuthenticationCredential
        if let parsed {
            credential = parsed
        } else {
            do { credential = try AuthenticationCredential(json: credentialJSON) } catch { throw SesameError.verification(error) }
        }
        // §7.2 steps 5-7: the credential by rawId among the project's passkeys on this relying party, and its owner.
        let found = try StoreErrors.map { () throws(StoreError) in
            try repositories.credentials.findWithOwner(rpID: policy.id, credentialID: credential.rawID, forUse: forUse)
        }
        guard let (stored, owner) = found, stored.projectID == project.id, owner.projectID == project.id
        else { throw SesameError(.verificationFailed, "unknown credential", reason: "unknown_credential") }
        let userIdentification: UserIdentification
        switch identification {
        case .usernameless: userIdentification = .usernameless
        // The owner is known from the record: a returned handle must name it.
        case .linkedPerson: userIdentification = .identified(expectedUserHandle: nil)
        case .identifiedUser(let userID):
            let user = try StoreErrors.map { () throws(StoreError) in try repositories.users.get(projectID: project.id, id: userID) }
            guard let user else { throw SesameError(.verificationFailed, "the identified user is gone", reason: "unknown_credential") }
            userIdentification = .identified(expectedUserHandle: user.userHandle)
        }
        var policy = policy
        policy.requiresUserVerification = userVerification == .required
        let verified: VerifiedAuthentication
        do {
            let record = WebAuthn.CredentialRecord(
                id: stored.credentialID, publicKey: try Self.parsedKeys.key(stored.publicKey), signCount: UInt32(clamping: stored.signCount),
                backupEligible: stored.backupEligible, userHandle: owner.userHandle
            )
            // §7.2 steps 6 and 8-22 (user handle, client data, authenticator data, signature, sign count): the core's.
            verified = try AuthenticationVerifier.verify(
                credential, expectations: AuthenticationExpectations(policy: policy, challenge: challenge.challenge, identification: userIdentification),
                record: record
            )
        } catch {
            throw SesameError.verification(error)
        }
        // A blocked person's passkeys count for nothing; said only after a genuine assertion.
        guard owner.status == UserRecord.active else { throw SesameError(.blocked, "user is blocked") }
        return AuthenticatedPasskey(owner: owner, stored: stored, verified: verified, challenge: challenge)
    }

    /// What refuses a genuine assertion after its use is stored: a linked person's ceremony answered by another
    /// person's passkey, then a missing UV flag where it is checked after identity.
    private static func refusalAfterUse(_ assertion: AuthenticatedPasskey, identification: CeremonyIdentification,
                                        userVerification: UserVerificationPolicy) -> SesameError? {
        if case .linkedPerson(let personID?) = identification, assertion.owner.id != personID {
            return SesameError(.wrongIdentity, "a genuine assertion by another person's passkey")
        }
        if userVerification == .afterIdentity, !assertion.verified.userVerified {
            return SesameError(.userNotVerified, "the person did not unlock the passkey")
        }
        return nil
    }
}

/// When the write transaction of an authentication's finish counts as done
/// (``CeremonyEngine/finishAuthentication(_:challengeID:binding:project:policy:userVerification:acknowledgement:prefetch:admit:prepare:effect:)``).
public enum FinishAcknowledgement: Sendable, Hashable {
    /// Once stable storage has it (at `--durability full`): what the ceremony concludes (a session, a verified request,
    /// an action's outcome) must survive a power cut.
    case durable
    /// Where the challenge is held in memory (SQLite), as bookkeeping (its commit does not wait for the disk), for a
    /// finish whose write is still ceremony state in flight: it concludes nothing until a later durable step (a
    /// sign-in token's exchange for a session), whose flush carries this write with it. A power cut between them can
    /// lose the write, never bring the challenge back (a restart drops every challenge held in memory), so the
    /// assertion cannot be replayed. Where the challenge is a row (PostgreSQL), as ``durable``: a taking lost to a
    /// power cut would bring the challenge back.
    case inFlight
}

/// What an authentication's finish goes on with once it holds its challenge
/// (``CeremonyEngine/finishAuthentication(_:challengeID:binding:project:policy:userVerification:acknowledgement:prefetch:admit:prepare:effect:)``).
public enum Admission<T> {
    /// Verify the answer: it must come from the person known as this.
    case verify(CeremonyIdentification)
    /// End the finish with this outcome before any verification, the challenge used up (a request whose link changed
    /// since the challenge was issued, for example).
    case end(T)
}

/// How the write transaction of a finish ended.
private enum FinishOutcome<T> {
    case done(T)
    /// Another finish took the challenge first.
    case used
    /// Refused once its use was to be recorded (``CeremonyEngine/recordUse(_:identification:userVerification:in:readForUse:)``).
    case refused(SesameError)
}

/// What a ceremony's challenge is bound to; the engine takes it back exactly once, on any backend, under concurrency.
public enum ChallengeBinding: Sendable, Hashable {
    /// An account's passkey registration: the user and the session that started it.
    case accountSession(userID: String, sessionID: String)
    /// A usernameless sign-in of the project.
    case signIn
    /// A verification request's inline passkey.
    case verificationRequest(requestID: String)
    /// A verification request's hosted hand-off page.
    case handOff(requestID: String)
    /// A passkey registration for a tracked action (the Authsignal face's track token).
    case actionRegistration(actionID: String)
    /// A passkey sign-in for a tracked action (a named or tracked Authsignal action).
    case action(actionID: String)
    /// A new person and their first passkey, in one registration on the hosted setup page ("Create your ID"): the
    /// record carries the person's reserved user ID and, as its `name`, their new user handle (base64url); the person
    /// exists only once the registration verified.
    case idCreation

    static let signInPurpose = "passkey-signin"
    static let inlinePurpose = "inline-verification"
    static let handOffPurpose = "handoff"
    static let actionRegistrationPurpose = "action-registration"
    static let actionPurpose = "action-authentication"
    static let idCreationPurpose = "id-creation"
    /// The purposes of ceremonies that authenticate with a passkey the person has. A registration's pending passkey
    /// counts toward limits the database checks, so its challenge is always a row.
    static let authenticationPurposes: Set<String> = [signInPurpose, inlinePurpose, handOffPurpose, actionPurpose]

    /// The purpose the challenge record carries.
    var purpose: String {
        switch self {
        case .accountSession: ChallengeRecord.registrationPurpose
        case .signIn: Self.signInPurpose
        case .verificationRequest: Self.inlinePurpose
        case .handOff: Self.handOffPurpose
        case .actionRegistration: Self.actionRegistrationPurpose
        case .action: Self.actionPurpose
        case .idCreation: Self.idCreationPurpose
        }
    }
}

extension CeremonyEngine {
    /// Takes the challenge `id` of `project` back for `binding`, exactly once (concurrent finishes: one wins). Any
    /// attempt that gets it uses it up, whatever the ceremony's outcome; a challenge of a verification request or
    /// hand-off is taken only on its own path, so a probe on the other path leaves it usable.
    /// - Throws: `not_found` (no pending registration of this user with this ID, or already finished), `expired`
    ///   (`challenge_expired`: unknown, used, expired, or of another project or purpose; `session_mismatch`).
    public func consume(_ id: String, binding: ChallengeBinding, project: Project) throws(SesameError) -> ChallengeRecord {
        let now = clock.now()
        if case .accountSession(let userID, let sessionID) = binding {
            let pending = try StoreErrors.map { () throws(StoreError) in try store.challenges.get(id: id) }
            guard let pending, pending.purpose == binding.purpose, pending.projectID == project.id, pending.userID == userID
            else { throw SesameError(.notFound, "no pending registration with this ID") }
            let consumed = try StoreErrors.map { () throws(StoreError) in try store.challenges.consume(id: id, now: now) }
            guard let consumed else {
                throw pending.isExpired(at: now) ? Self.challengeExpired : SesameError(.notFound, "already finished", reason: "challenge_used")
            }
            guard consumed.sessionID == sessionID else {
                throw SesameError(.expired, "registration started in another session", reason: "session_mismatch")
            }
            return consumed
        }
        guard let consumed = try StoreErrors.map({ () throws(StoreError) in try take(id, binding: binding, project: project, now: now, from: store) })
        else { throw Self.challengeExpired }
        return consumed
    }

    /// Takes an authentication challenge back in `repositories`: `nil` when it is unknown, used, expired or not
    /// `binding`'s. A sign-in challenge of another project or purpose is burnt all the same (a probe must not keep it
    /// alive); one of a verification request or hand-off is taken only with its own request and purpose.
    fileprivate func take(_ id: String, binding: ChallengeBinding, project: Project, now: Date, from repositories: some Repositories)
        throws(StoreError) -> ChallengeRecord?
    {
        let consumed: ChallengeRecord?
        let memory = store.challengeMemory(for: binding)
        switch binding {
        case .accountSession: return nil  // a registration is taken back by consume, never here
        case .signIn, .idCreation:
            if let memory { consumed = try memory.take(id: id, now: now) } else { consumed = try repositories.challenges.consume(id: id, now: now) }
        case .verificationRequest(let requestID), .handOff(let requestID), .actionRegistration(let requestID), .action(let requestID):
            if let memory {
                consumed = try memory.take(id: id, requestID: requestID, purpose: binding.purpose, now: now)
            } else {
                consumed = try repositories.challenges.consume(id: id, requestID: requestID, purpose: binding.purpose, now: now)
            }
        }
        return consumed?.purpose == binding.purpose && consumed?.projectID == project.id ? consumed : nil
    }
}

extension Store {
    /// Where challenges of `purpose` are kept in memory: an authentication's on SQLite (``pendingChallenges``); `nil`
    /// when they are rows of the database.
    func challengeMemory(forPurpose purpose: String) -> PendingChallenges? {
        ChallengeBinding.authenticationPurposes.contains(purpose) ? pendingChallenges : nil
    }

    /// Where `binding`'s challenges are kept in memory, as ``challengeMemory(forPurpose:)``.
    func challengeMemory(for binding: ChallengeBinding) -> PendingChallenges? {
        challengeMemory(forPurpose: binding.purpose)
    }
}
