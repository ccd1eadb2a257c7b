import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// What `passkey-options` answers: options for the linked person, a fallback to the hand-off, or a closed request.
public enum InlineOptionsAnswer: Sendable, Hashable {
    case options(InlinePasskeyOptions)
    /// `reason` is `not_linked` or `no_passkey`.
    case fallback(reason: String, url: String, setupURL: String)
    case closed(InlineOutcome)
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

/// An outcome of the public endpoints, with its optional code; codes never identify anyone.
public struct InlineOutcome: Sendable, Hashable {
    public let outcome: String
    public let code: String?

    public static let verified = InlineOutcome(outcome: "verified", code: nil)
    public static let wrongIdentity = InlineOutcome(outcome: "wrong_identity", code: nil)
    public static let challengeExpired = InlineOutcome(outcome: "expired", code: "challenge_expired")
    public static let requestExpired = InlineOutcome(outcome: "expired", code: "request_expired")
    public static let linkChanged = InlineOutcome(outcome: "failed", code: "link_changed")
    public static let assertionInvalid = InlineOutcome(outcome: "failed", code: "assertion_invalid")
    public static let userNotVerified = InlineOutcome(outcome: "failed", code: "user_not_verified")
    public static let unknownRequest = InlineOutcome(outcome: "failed", code: "unknown_request")
    public static let requestClosed = InlineOutcome(outcome: "failed", code: "request_closed")
    public static let completionFailed = InlineOutcome(outcome: "failed", code: "completion_failed")

    /// Every code the endpoints can emit.
    public static let allCodes: Set<String> = [
        "challenge_expired", "request_expired", "link_changed", "assertion_invalid", "user_not_verified", "unknown_request",
        "request_closed", "completion_failed",
    ]
}

/// How a `passkey-complete` or hand-off completion ended: the outcome the client sees and, for anything but
/// `verified`, the operator's reason (the WebAuthn core's code, a domain reason, or the outcome's own code).
public struct InlineCompletion: Sendable, Hashable {
    /// What the public endpoint answers.
    public let outcome: InlineOutcome
    /// Why it did not verify, for metrics and the request log only; `nil` when verified.
    public let reason: String?

    init(_ outcome: InlineOutcome, reason: String?) {
        self.outcome = outcome
        self.reason = outcome == .verified ? nil : reason ?? outcome.code ?? outcome.outcome
    }
}

/// The result of checking an assertion: genuine, or refused with the reason code for the operator.
enum AssertionCheck {
    case genuine(VerifiedAssertion)
    case refused(reason: String)
}

/// A genuine assertion: whose passkey it was, and what to store after the ceremony completes.
struct VerifiedAssertion {
    let owner: UserRecord
    let credentialRecordID: String
    let verified: VerifiedAuthentication

    /// Stores the sign count, backup state and last use (§7.2 step 24). A concurrent use that moved the count first
    /// wins; the completed request stands either way.
    func recordUse(_ sesame: Sesame, at now: Date) {
        _ = try? sesame.store.credentials.updateAfterAuthentication(
            id: credentialRecordID, newSignCount: Int64(verified.newSignCount), backedUp: verified.backedUp,
            userVerified: verified.userVerified, at: now
        )
    }
}

/// The inline passkey (spec §1.4, §1.5): options for the person linked to a request, and the check of their answer.
/// The request ID is the only credential; no inline failure closes the request.
public struct InlinePasskeyService: Sendable {
    let sesame: Sesame

    /// How long an inline challenge works: 5 minutes.
    public static let challengeLifetime: TimeInterval = 300
    /// `passkey-options` and `passkey-complete` calls allowed per request, each.
    public static let callsPerRequest = 10
    static let purpose = "inline-verification"

    /// The relying party policy of inline assertions: `https://{rpId}` (iOS apps), the hosted pages' origin, and each
    /// approved Android app's `android:apk-key-hash:` origin. User verification is checked separately, after identity.
    public func policy(project: Project) throws(SesameError) -> RelyingPartyPolicy {
        let apps = try sesame.partners.approvedPlatforms(projectID: project.id)
        let origins = ["https://\(project.relyingPartyID)", sesame.inline.appOrigin] + apps.flatMap { app -> [String] in
            if case .android = app { return app.origins(rpID: project.relyingPartyID) }
            return []
        }
        return RelyingPartyPolicy(id: project.relyingPartyID, origins: Array(Set(origins)).sorted(), requiresUserVerification: false,
                                  allowedAlgorithms: PasskeyService.algorithms)
    }

    /// `passkey-options`, in the order of spec §1.4. Never changes the request.
    /// - Parameter clientIP: for the per-IP limit.
    /// - Throws: `rate_limited`, or a storage error.
    public func options(requestID: String, clientIP: String?) throws(SesameError) -> InlineOptionsAnswer {
        let request: VerificationRequestRecord, now: Date
        switch try openRequest(requestID, clientIP: clientIP, counting: .options) {
        case .closed(let outcome): return .closed(outcome)
        case .open(let open, let time): (request, now) = (open, time)
        }
        let url = sesame.inline.handOffURL(requestID: request.id)
        let setupURL = sesame.inline.setupURL
        guard let link = try currentLink(of: request) else { return .fallback(reason: "not_linked", url: url, setupURL: setupURL) }
        let project = try project(of: request)
        let credentials = try usableCredentials(userID: link.userID, project: project)
        guard !credentials.isEmpty else { return .fallback(reason: "no_passkey", url: url, setupURL: setupURL) }
        let challenge = ChallengeRecord(
            id: Identifiers.uuid(), projectID: project.id, purpose: Self.purpose, challenge: SecureRandom.bytes(count: ChallengeService.byteCount),
            userID: link.userID, requestID: request.id, expiresAt: now.addingTimeInterval(Self.challengeLifetime), createdAt: now,
            rpID: project.relyingPartyID, linkID: link.id
        )
        try StoreErrors.map { () throws(StoreError) in try sesame.store.challenges.create(challenge) }
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
        var reason: String?
        let outcome = try complete(requestID: requestID, challengeID: challengeID, credentialJSON: credentialJSON, clientIP: clientIP,
                                   reason: &reason)
        return InlineCompletion(outcome, reason: reason)
    }

    private func complete(requestID: String, challengeID: String, credentialJSON: [UInt8], clientIP: String?, reason: inout String?)
        throws(SesameError) -> InlineOutcome
    {
        // Step 2: the request is known, unexpired and pending.
        let request: VerificationRequestRecord, now: Date
        switch try openRequest(requestID, clientIP: clientIP, counting: .complete) {
        case .closed(let outcome): return outcome
        case .open(let open, let time): (request, now) = (open, time)
        }
        // Step 3: the challenge is consumed only if it is this request's; any attempt past here uses it up.
        let consumed = try StoreErrors.map { () throws(StoreError) in
            try sesame.store.challenges.consume(id: challengeID, requestID: request.id, purpose: Self.purpose, now: now)
        }
        guard let consumed, let personID = consumed.userID else { return .challengeExpired }
        // Step 4: the ref still has the link the options were issued under.
        guard let link = try currentLink(of: request), link.id == consumed.linkID else { return .linkChanged }
        // Steps 5-6: the credential by rawId, and WebAuthn §7.2 against its stored key and the consumed challenge.
        let project = try project(of: request)
        let assertion: VerifiedAssertion
        switch try verifyAssertion(credentialJSON, project: project, challenge: consumed.challenge, policy: try policy(project: project)) {
        case .genuine(let genuine): assertion = genuine
        case .refused(let refusal):
            reason = refusal
            return .assertionInvalid
        }
        let owner = assertion.owner, verified = assertion.verified
        // Step 7: a genuine assertion, but by someone else's passkey.
        guard owner.id == personID, owner.id == link.userID else { return .wrongIdentity }
        // Step 8: the person unlocked the passkey.
        guard verified.userVerified else { return .userNotVerified }
        // Step 9: the completion routine the hand-off uses too; then the credential's counters.
        do {
            try CompletionRoutine(sesame: sesame).complete(request, linked: true)
        } catch {
            return error == .requestClosed ? .requestClosed : .completionFailed
        }
        assertion.recordUse(sesame, at: now)
        // Step 10.
        return .verified
    }

    /// §1.5 steps 5-6: looks the credential up by `rawId` (which must name the same bytes as `id`) among the project's
    /// passkeys and verifies the assertion (WebAuthn §7.2) against its stored key, `challenge` and `policy`. A returned
    /// `userHandle` must be the owner's.
    /// - Returns: the owner and what to store, or the reason when the answer does not check out.
    func verifyAssertion(_ credentialJSON: [UInt8], project: Project, challenge: [UInt8], policy: RelyingPartyPolicy) throws(SesameError)
        -> AssertionCheck
    {
        let credential: AuthenticationCredential
        do { credential = try AuthenticationCredential(json: credentialJSON) } catch { return .refused(reason: error.code.rawValue) }
        let stored = try StoreErrors.map { () throws(StoreError) in
            try sesame.store.credentials.find(rpID: project.relyingPartyID, credentialID: credential.rawID)
        }
        guard let stored, stored.projectID == project.id,
              let owner = try StoreErrors.map({ () throws(StoreError) in try sesame.store.users.get(projectID: project.id, id: stored.userID) })
        else { return .refused(reason: "unknown_credential") }
        // A blocked person's passkeys count for nothing.
        guard owner.status == UserRecord.active else { return .refused(reason: SesameError.Code.blocked.rawValue) }
        do {
            let record = WebAuthn.CredentialRecord(
                id: stored.credentialID, publicKey: try COSEKey(cborEncoded: stored.publicKey), signCount: UInt32(clamping: stored.signCount),
                backupEligible: stored.backupEligible, userHandle: owner.userHandle
            )
            let verified = try AuthenticationVerifier.verify(
                credential, expectations: AuthenticationExpectations(policy: policy, challenge: challenge, identifiedUserHandle: owner.userHandle),
                record: record
            )
            return .genuine(VerifiedAssertion(owner: owner, credentialRecordID: stored.id, verified: verified))
        } catch {
            return .refused(reason: error.code.rawValue)
        }
    }

    /// A person's passkeys on the project's relying party; none while the person is blocked.
    func usableCredentials(userID: String, project: Project) throws(SesameError) -> [SesameStore.CredentialRecord] {
        try StoreErrors.map { () throws(StoreError) in
            guard try sesame.store.users.get(projectID: project.id, id: userID)?.status == UserRecord.active else { return [] }
            return try sesame.store.credentials.list(userID: userID).filter { $0.rpID == project.relyingPartyID }
        }
    }

    private func limit(_ clientIP: String?) throws(SesameError) {
        guard let clientIP else { return }
        let limit = sesame.inline.publicCallsPerMinutePerIP
        let decision = try sesame.rateLimiter.hit("inline-ip:\(clientIP)", limit: limit, window: 60)
        guard decision.allowed else { throw SesameError(.rateLimited, "\(limit) calls per IP per minute", rateLimit: decision) }
    }

    /// A request that can still complete, or the outcome that closes it.
    enum OpenRequest {
        case open(VerificationRequestRecord, now: Date)
        case closed(InlineOutcome)
    }

    /// The checks every public call starts with: the per-IP limit, then the request named by a well-formed ID (this
    /// call counted against its per-request limit), which must be known, unexpired and pending.
    func openRequest(_ requestID: String, clientIP: String?, counting counter: VerificationRequestRepository.CallCounter)
        throws(SesameError) -> OpenRequest
    {
        try limit(clientIP)
        guard VerificationService.isRequestID(requestID),
              let counted = try StoreErrors.map({ () throws(StoreError) in
                  try sesame.store.verificationRequests.countCall(id: requestID, counter: counter)
              })
        else { return .closed(.unknownRequest) }
        guard counted.calls <= Self.callsPerRequest else { throw SesameError(.rateLimited, "10 calls per request") }
        let now = sesame.clock.now()
        if counted.request.isExpired(at: now) { return .closed(.requestExpired) }
        guard counted.request.status == VerificationRequestRecord.pending else { return .closed(.requestClosed) }
        return .open(counted.request, now: now)
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
