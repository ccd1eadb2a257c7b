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

/// The steps the inline passkey and the hand-off page share (spec §1.5 steps 2, 3 and 5-8), on the ceremony engine,
/// remembering the operator's reason of the outcome that ends a completion.
struct InlineCeremony {
    let service: InlinePasskeyService
    private(set) var reason: String?

    /// The outcome that ends the completion, or what it goes on with.
    enum Step<Value> {
        case next(Value)
        case done(InlineVerdict)
    }

    /// An open request with its project and the challenge taken back for it.
    struct Opened {
        let request: VerificationRequestRecord
        let project: Project
        let challenge: ChallengeRecord
        let binding: ChallengeBinding
    }

    /// Runs a completion, returning its outcome with the reason `body` recorded.
    static func run(_ service: InlinePasskeyService, _ body: (inout InlineCeremony) throws(SesameError) -> InlineVerdict) throws(SesameError)
        -> InlineCompletion
    {
        var ceremony = InlineCeremony(service: service)
        let outcome = try body(&ceremony)
        return InlineCompletion(outcome, reason: ceremony.reason)
    }

    /// Steps 2-3: the open request named by `requestID`, and its challenge taken back for `binding`.
    mutating func open(_ requestID: String, challengeID: String, clientIP: String?, binding: (String) -> ChallengeBinding)
        throws(SesameError) -> Step<Opened>
    {
        let request: VerificationRequestRecord
        switch try service.openRequest(requestID, clientIP: clientIP, counting: .complete) {
        case .closed(let outcome): return .done(outcome)
        case .open(let open, _): request = open
        }
        let project = try service.project(of: request)
        let bound = binding(request.id)
        do {
            let challenge = try service.sesame.ceremonies.consume(challengeID, binding: bound, project: project)
            return .next(Opened(request: request, project: project, challenge: challenge, binding: bound))
        } catch where error.code == .expired {
            reason = error.reason
            return .done(.challengeExpired)
        }
    }

    /// Steps 5-9: the engine's verification of the answer (reads only), its refusal as the §1.5 outcome; then, in one
    /// transaction, the passkey's use recorded (the engine's sign count and refusals after use) and the completion
    /// that `prepare` makes from the genuine assertion written, so a verified request costs one durable commit.
    /// - Parameter prepare: the completion to write for the assertion's owner, or the outcome that ends it; when it
    ///   throws (the token could not be minted), `completion_failed`. The use is recorded whatever it gives.
    /// - Returns: the outcome; when the completion's link cannot be written (the ref or the person was linked
    ///   meanwhile), nothing of the transaction stays, the use included, and the request fails with `already_linked`.
    mutating func complete(_ credentialJSON: [UInt8], _ opened: Opened, policy: RelyingPartyPolicy, identification: CeremonyIdentification,
                           prepare: (AuthenticatedPasskey) throws(CompletionRefusal) -> Step<CompletionRoutine.Prepared>)
        throws(SesameError) -> InlineVerdict
    {
        let engine = service.sesame.ceremonies
        let userVerification = opened.binding.kind.userVerification
        let assertion: AuthenticatedPasskey
        do {
            assertion = try engine.verifyAuthentication(credentialJSON, challenge: opened.challenge, project: opened.project, policy: policy,
                                                        identification: identification, userVerification: userVerification)
        } catch {
            return try refusal(error)
        }
        let completion: Step<CompletionRoutine.Prepared>
        do { completion = try prepare(assertion) } catch { completion = .done(.completionFailed) }
        let written: Written
        do {
            written = try service.sesame.store.transaction { transaction throws(StoreError) -> Written in
                if let refusal = try engine.recordUse(assertion, identification: identification, userVerification: userVerification,
                                                      in: transaction) {
                    return .refused(refusal)
                }
                switch completion {
                case .done(let outcome): return .ended(outcome)
                case .next(let prepared): return .ended(try CompletionRoutine.write(prepared, in: transaction) ? .verified : .requestClosed)
                }
            }
        } catch where error.code == .conflict {
            guard case .next(let prepared) = completion, prepared.link != nil else { return .completionFailed }
            _ = try StoreErrors.map { () throws(StoreError) in
                try service.sesame.store.verificationRequests.fail(id: opened.request.id, reason: InlineVerdict.alreadyLinked.reason,
                                                                   at: service.sesame.clock.now())
            }
            return .alreadyLinked
        } catch {
            // The request stays pending.
            return .completionFailed
        }
        switch written {
        case .ended(let outcome): return outcome
        case .refused(let error): return try refusal(error)
        }
    }

    /// How the transaction of ``complete(_:_:policy:identification:prepare:)`` ended.
    private enum Written {
        case ended(InlineVerdict)
        case refused(SesameError)
    }

    /// The §1.5 outcome of the engine's refusal, its reason remembered; any other error is thrown.
    private mutating func refusal(_ error: SesameError) throws(SesameError) -> InlineVerdict {
        guard let outcome = InlinePasskeyService.outcome(refusing: error) else { throw error }
        reason = error.reason
        return outcome
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
            // Steps 2-3: the request is known, unexpired and pending; the challenge is consumed only if it is this
            // request's, and any attempt past here uses it up.
            let opened: InlineCeremony.Opened
            switch try ceremony.open(requestID, challengeID: challengeID, clientIP: clientIP, binding: ChallengeBinding.verificationRequest) {
            case .done(let outcome): return outcome
            case .next(let next): opened = next
            }
            guard let personID = opened.challenge.userID else { return .challengeExpired }
            // Step 4: the ref still has the link the options were issued under.
            guard let link = try currentLink(of: opened.request), link.id == opened.challenge.linkID else { return .linkChanged }
            // Steps 5-8 in the engine: the credential by rawId, WebAuthn §7.2 against its stored key and the consumed
            // challenge (sign count included), then identity (a genuine assertion by someone else's passkey), then UV.
            // Steps 9-10: the completion routine the hand-off uses too, committed with the passkey's use; `verified`.
            let routine = CompletionRoutine(sesame: sesame)
            let relyingParty = try policy(project: opened.project, widgetOrigin: opened.request.widgetOrigin)
            return try ceremony.complete(credentialJSON, opened, policy: relyingParty,
                                         identification: .linkedPerson(userID: personID)) { authenticated throws(CompletionRefusal) in
                guard authenticated.owner.id == link.userID else { return .done(.wrongIdentity) }
                return .next(try routine.prepare(opened.request, linked: true))
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

    /// The current link of the request's ref, if it has one.
    func currentLink(of request: VerificationRequestRecord) throws(SesameError) -> PartnerLink? {
        guard let ref = request.partnerUserRef, let environment = PartnerEnvironment(rawValue: request.environment) else { return nil }
        return try sesame.partners.currentLink(partnerID: request.partnerID, environment: environment, partnerUserRef: ref)
    }

    func project(of request: VerificationRequestRecord) throws(SesameError) -> Project {
        try sesame.projects.get(try sesame.partners.get(request.partnerID).projectID)
    }
}
