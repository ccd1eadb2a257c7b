import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// What `passkey-options` answers: options for the linked person, a fallback to the hand-off, or a closed request.
public enum InlineOptionsAnswer: Sendable, Hashable {
    case options(InlinePasskeyOptions)
    case fallback(InlineFallback, url: String, setupURL: String)
    case closed(InlineVerdict)
}

/// Why `passkey-options` sends the person to the hand-off instead of offering a passkey.
public enum InlineFallback: Sendable, Hashable, CaseIterable {
    /// The request's ref has no linked person.
    case notLinked
    /// The linked person has no usable passkey (none yet, or blocked).
    case noPasskey
}

/// WebAuthn request options for the linked person, and the links every panel keeps.
public struct InlinePasskeyOptions: Sendable, Hashable {
    public let rpID: String
    /// 32 random bytes, valid once for 5 minutes.
    public let challenge: [UInt8]
    /// Only the linked person's passkeys, with their stored transports.
    public let allowCredentials: [CredentialDescriptor]
    /// A random UUID naming the challenge record.
    public let challengeID: String
    /// The earlier of the challenge's and the request's expiry.
    public let expiresAt: Date
    public let url: String
    public let setupURL: String
}

/// How a public inline or hand-off call ends for the app, before a face gives it its wire shape (BotShield's
/// `{outcome, code}` lives in BotShieldAPI); no verdict identifies anyone.
public enum InlineVerdict: Sendable, Hashable, CaseIterable {
    case verified
    /// A genuine assertion by someone else's passkey (§1.5 step 7).
    case wrongIdentity
    case challengeExpired, requestExpired, linkChanged
    /// The answer did not verify (§1.5 steps 1, 5, 6).
    case assertionInvalid
    case userNotVerified, unknownRequest, requestClosed, completionFailed
    /// Hand-off only: the ref is linked to someone else already, or the person declined.
    case alreadyLinked, declined

    /// The verdict as the operator's reason code (metrics, request log).
    public var reason: String {
        switch self {
        case .verified: "verified"
        case .wrongIdentity: "wrong_identity"
        case .challengeExpired: "challenge_expired"
        case .requestExpired: "request_expired"
        case .linkChanged: "link_changed"
        case .assertionInvalid: "assertion_invalid"
        case .userNotVerified: "user_not_verified"
        case .unknownRequest: "unknown_request"
        case .requestClosed: "request_closed"
        case .completionFailed: "completion_failed"
        case .alreadyLinked: "already_linked"
        case .declined: "user_denied"
        }
    }
}

/// How a `passkey-complete` or hand-off completion ended: the outcome the client sees and, for anything but
/// `verified`, the operator's reason (the WebAuthn core's code, a domain reason, or the outcome's own code).
public struct InlineCompletion: Sendable, Hashable {
    /// What the public endpoint answers.
    public let outcome: InlineVerdict
    /// Why it did not verify, for metrics and the request log only; `nil` when verified.
    public let reason: String?

    init(_ outcome: InlineVerdict, reason: String?) {
        self.outcome = outcome
        self.reason = outcome == .verified ? nil : reason ?? outcome.reason
    }
}

/// The steps the inline passkey and the hand-off page share (spec §1.5 steps 2, 3 and 5-10), on the ceremony engine,
/// remembering the operator's reason of the outcome that ends a completion.
struct InlineCeremony {
    let service: InlinePasskeyService
    private(set) var reason: String?

    /// Runs a completion, returning its outcome with the reason `body` recorded.
    static func run(_ service: InlinePasskeyService, _ body: (inout InlineCeremony) throws(SesameError) -> InlineVerdict) throws(SesameError)
        -> InlineCompletion
    {
        var ceremony = InlineCeremony(service: service)
        let outcome = try body(&ceremony)
        return InlineCompletion(outcome, reason: ceremony.reason)
    }

    /// Steps 2, 3 and 5-10, the last on the engine's finish, in one transaction: the request named by `requestID` (this
    /// call counted) must be open; the challenge is taken back for `binding` (any attempt past here uses it up), `admit`
    /// checks it (step 4), the engine verifies the answer (steps 5-8) and records the passkey's use, and the completion
    /// is minted and written (``CompletionRoutine``), so a verified request costs one durable commit. On PostgreSQL the
    /// challenge's taking, the link's read (sent ahead) and the passkey's read go out together.
    /// - Parameters:
    ///   - binding: the challenge's binding for the request's ID.
    ///   - policy: the relying party policy of the request's answers.
    ///   - admit: given the request and the challenge, who must answer, or the outcome that ends the completion (the
    ///     challenge used up).
    /// - Returns: the outcome; `completion_failed` when the token cannot be minted (the use is recorded all the same)
    ///   or the completion's transaction fails (nothing of it stays, the request left pending). When the completion's
    ///   link cannot be written (the ref or the person was linked meanwhile), nothing of the transaction stays, the use
    ///   included, and the request fails with `already_linked`.
    /// - Throws: `rate_limited`, a storage failure before the completion, or another error that is no refusal.
    mutating func finish(_ requestID: String, challengeID: String, credentialJSON: [UInt8], clientIP: String?, binding: (String) -> ChallengeBinding,
                         policy: (VerificationRequestRecord, Project) throws(SesameError) -> RelyingPartyPolicy,
                         admit: (VerificationRequestRecord, ChallengeRecord, any Repositories) throws(StoreError) -> Admission<InlineVerdict>)
        throws(SesameError) -> InlineVerdict
    {
        // Step 2: the request is known, unexpired and pending.
        let request: VerificationRequestRecord
        switch try service.openRequest(requestID, clientIP: clientIP, counting: .complete) {
        case .closed(let outcome): return outcome
        case .open(let open, _): request = open
        }
        let project = try service.project(of: request)
        let policy = try policy(request, project), bound = binding(request.id)
        let sesame = service.sesame
        // The signing key is read before the transaction; a failure to read it fails only a verified completion.
        let signer = Result { () throws(SesameError) in try sesame.tokenSigner.readied() }
        var completion: CompletionRoutine.Prepared?
        do {
            return try sesame.ceremonies.finishAuthentication(
                credentialJSON, challengeID: challengeID, binding: bound, project: project, policy: policy,
                userVerification: bound.kind.userVerification,
                prefetch: { transaction, _ throws(StoreError) in try InlinePasskeyService.prefetchLink(of: request, in: transaction) },
                admit: { challenge, repositories throws(StoreError) in try admit(request, challenge, repositories) },
                prepare: { assertion -> CompletionRoutine.Prepared? in
                    guard case .success(let signer) = signer else { return nil }
                    return try? CompletionRoutine.prepare(request, challenge: assertion.challenge, signer: signer, sesame: sesame)
                }
            ) { transaction, assertion, prepared throws(StoreError) -> InlineVerdict in
                guard let prepared else { return .completionFailed }
                completion = prepared
                return try CompletionRoutine.write(prepared, owner: assertion.owner, in: transaction) ? .verified : .requestClosed
            }
        } catch where completion != nil && error.code == .conflict {
            guard completion?.linking == true else { return .completionFailed }
            _ = try StoreErrors.map { () throws(StoreError) in
                try sesame.store.verificationRequests.fail(id: request.id, reason: InlineVerdict.alreadyLinked.reason, at: sesame.clock.now())
            }
            return .alreadyLinked
        } catch where completion != nil && (error.code == .unavailable || error.code == .internalFailure) {
            // Step 9's other error: nothing of the transaction stays, and the request stays pending.
            reason = error.reason
            return .completionFailed
        } catch {
            // The §1.5 outcome of the engine's refusal, its reason remembered; any other error is thrown.
            guard let outcome = InlinePasskeyService.outcome(refusing: error) else { throw error }
            reason = error.reason
            return outcome
        }
    }
}

/// The inline passkey (spec §1.4, §1.5): options for the person linked to a request, and the check of their answer.
/// The request ID is the only credential; no inline failure closes the request.
public struct InlinePasskeyService: Sendable {
    let sesame: Sesame

    /// How long an inline challenge works: 5 minutes.
    public static let challengeLifetime: TimeInterval = CeremonyEngine.challengeLifetime
    /// `passkey-options` and `passkey-complete` calls allowed per request, each.
    public static let callsPerRequest = 10
    static let purpose = ChallengeBinding.inlinePurpose

    /// The relying party policy of inline assertions: `https://{rpId}` (iOS apps), the hosted pages' origin, and each
    /// approved Android app's `android:apk-key-hash:` origin. User verification is checked separately, after identity.
    /// - Parameter widgetOrigin: the page origin of a widget request, under which its frame may run the passkey.
    public func policy(project: Project, widgetOrigin: String? = nil) throws(SesameError) -> RelyingPartyPolicy {
        RelyingParties.inlinePolicy(for: project.configuration, approvedApps: try sesame.partners.approvedPlatforms(projectID: project.id),
                                    appOrigin: sesame.inline.appOrigin, widgetOrigin: widgetOrigin)
    }

    /// `passkey-options`, in the order of spec §1.4. Never changes the request.
    /// - Parameter clientIP: for the per-IP limit.
    /// - Throws: `rate_limited`, or a storage error.
    public func options(requestID: String, clientIP: String?) throws(SesameError) -> InlineOptionsAnswer {
        let request: VerificationRequestRecord
        switch try openRequest(requestID, clientIP: clientIP, counting: .options) {
        case .closed(let outcome): return .closed(outcome)
        case .open(let open, _): request = open
        }
        let url = sesame.inline.handOffURL(requestID: request.id)
        let setupURL = sesame.inline.setupURL
        let project = try project(of: request)
        guard let (link, credentials) = try linkedPasskeys(of: request, project: project) else {
            return .fallback(.notLinked, url: url, setupURL: setupURL)
        }
        guard !credentials.isEmpty else { return .fallback(.noPasskey, url: url, setupURL: setupURL) }
        let challenge = try sesame.ceremonies.start(.verificationRequest(requestID: request.id), id: Identifiers.uuid(), project: project,
                                                    rpID: project.relyingPartyID, userID: link.userID, linkID: link.id)
        return .options(InlinePasskeyOptions(
            rpID: project.relyingPartyID, challenge: challenge.challenge,
            allowCredentials: credentials.map { CredentialDescriptor(id: $0.credentialID, transports: $0.transports) },
            challengeID: challenge.id, expiresAt: min(challenge.expiresAt, request.expiresAt), url: url, setupURL: setupURL
        ))
    }

    /// `passkey-complete`, in the check order of spec §1.5.
    /// - Parameter credentialJSON: the `AuthenticationResponseJSON`.
    /// - Throws: `rate_limited`, or a storage error.
    public func complete(requestID: String, challengeID: String, credentialJSON: [UInt8], clientIP: String?) throws(SesameError)
        -> InlineCompletion
    {
        try InlineCeremony.run(self) { ceremony throws(SesameError) in
            // Steps 2-3: the request is open, and the challenge is taken only if it is this request's. Steps 5-8 in the
            // engine: the credential by rawId, WebAuthn §7.2 against its stored key and the challenge (sign count
            // included), then identity (a genuine assertion by someone else's passkey), then UV. Steps 9-10: the
            // completion routine the hand-off uses too, committed with the passkey's use; `verified`.
            try ceremony.finish(requestID, challengeID: challengeID, credentialJSON: credentialJSON, clientIP: clientIP,
                                binding: ChallengeBinding.verificationRequest,
                                policy: { request, project throws(SesameError) in try policy(project: project, widgetOrigin: request.widgetOrigin) }
            ) { request, challenge, repositories throws(StoreError) in
                // An inline challenge is issued to the linked person only.
                guard let personID = challenge.userID else { return .end(.challengeExpired) }
                // Step 4: the ref still has the link the options were issued under.
                guard let link = try Self.link(of: request, in: repositories), link.id == challenge.linkID else { return .end(.linkChanged) }
                return .verify(.linkedPerson(userID: personID))
            }
        }
    }

    /// The §1.5 outcome of an assertion the engine refused (steps 3, 5-8); `nil` for an error that is no refusal.
    static func outcome(refusing error: SesameError) -> InlineVerdict? {
        switch error.code {
        case .verificationFailed, .blocked: .assertionInvalid
        case .expired: .challengeExpired
        case .wrongIdentity: .wrongIdentity
        case .userNotVerified: .userNotVerified
        default: nil
        }
    }

    /// The current link of the request's ref and the linked person's passkeys on the project's relying party (none
    /// while the person is blocked), in one read; `nil` when the ref has no link.
    func linkedPasskeys(of request: VerificationRequestRecord, project: Project) throws(SesameError)
        -> (link: PartnerLink, passkeys: [SesameStore.CredentialRecord])?
    {
        guard let ref = request.partnerUserRef, PartnerEnvironment(rawValue: request.environment) != nil else { return nil }
        let found = try StoreErrors.map { () throws(StoreError) in
            try sesame.store.partners.findLinkWithPasskeys(partnerID: request.partnerID, environment: request.environment, partnerUserRef: ref,
                                                           projectID: project.id, rpID: project.relyingPartyID, status: UserRecord.active)
        }
        return found.map { (PartnerLink(record: $0.link), $0.passkeys) }
    }

    /// The per-IP limit of the public endpoints (the widget's included), then any `further` per-minute limits, counted
    /// in one transaction (a caller over its IP limit spends nothing of the further ones).
    func limit(_ clientIP: String?, further: [(key: String, limit: Int)] = []) throws(SesameError) {
        var limits = further
        if sesame.perIPLimits, let clientIP { limits.insert(("inline-ip:\(clientIP)", sesame.inline.publicCallsPerMinutePerIP), at: 0) }
        guard !limits.isEmpty else { return }
        let decision = try sesame.rateLimiter.hit(limits, window: 60)
        guard decision.allowed else { throw SesameError(.rateLimited, "\(decision.limit) calls per minute", rateLimit: decision) }
    }

    /// A request that can still complete, or the outcome that closes it.
    enum OpenRequest {
        case open(VerificationRequestRecord, now: Date)
        case closed(InlineVerdict)
    }

    /// The checks every public call starts with: the per-IP limit, then the request named by a well-formed ID (this
    /// call counted against its per-request limit), which must be known, unexpired and pending.
    func openRequest(_ requestID: String, clientIP: String?, counting counter: VerificationRequestRepository.CallCounter)
        throws(SesameError) -> OpenRequest
    {
        try limit(clientIP)
        let now = sesame.clock.now()
        guard VerificationService.isRequestID(requestID), let counted = try countCall(requestID, counter, now: now) else {
            return .closed(.unknownRequest)
        }
        guard counted.calls <= Self.callsPerRequest else { throw SesameError(.rateLimited, "10 calls per request") }
        if counted.request.isExpired(at: now) { return .closed(.requestExpired) }
        guard counted.request.status == VerificationRequestRecord.pending else { return .closed(.requestClosed) }
        return .open(counted.request, now: now)
    }

    /// Counts this call against the request's limit and reads the request: on SQLite in this process's memory
    /// (``Store/requestCallCounters``, a read of the row and no write), else, or when those are full, in the row.
    /// - Returns: the count after this call and the request, or `nil` when there is no such request.
    func countCall(_ requestID: String, _ counter: VerificationRequestRepository.CallCounter, now: Date) throws(SesameError)
        -> (calls: Int, request: VerificationRequestRecord)?
    {
        try StoreErrors.map { () throws(StoreError) in
            let requests = sesame.store.verificationRequests
            if let counters = sesame.store.requestCallCounters {
                guard let stored = try requests.storedCalls(id: requestID, counter: counter) else { return nil }
                if let calls = counters.count(requestID, counter, stored: stored.calls, expiresAt: stored.request.expiresAt, now: now) {
                    return (calls, stored.request)
                }
            }
            return try requests.countCall(id: requestID, counter: counter)
        }
    }

    /// The current link of the request's ref read in `repositories`, if it has one.
    static func link(of request: VerificationRequestRecord, in repositories: any Repositories) throws(StoreError) -> PartnerLinkRecord? {
        guard let ref = request.partnerUserRef else { return nil }
        return try repositories.partners.findLink(partnerID: request.partnerID, environment: request.environment, partnerUserRef: ref)
    }

    /// Sends ``link(of:in:)``'s read ahead in `transaction`.
    static func prefetchLink(of request: VerificationRequestRecord, in transaction: StoreTransaction) throws(StoreError) {
        guard let ref = request.partnerUserRef else { return }
        try transaction.partners.prefetchLink(partnerID: request.partnerID, environment: request.environment, partnerUserRef: ref)
    }

    func project(of request: VerificationRequestRecord) throws(SesameError) -> Project {
        try sesame.projects.get(try sesame.partners.get(request.partnerID).projectID)
    }
}
