import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// A verified passkey of a user.
public struct Passkey: Sendable, Hashable {
    public let id: String
    public let userID: String
    /// The relying party the passkey was created for (`localhost` for development passkeys).
    public let rpID: String
    public let name: String
    /// When it was verified.
    public let createdAt: Date
    /// When it was last renamed; `createdAt` until then.
    public let updatedAt: Date
    /// When it last signed in, if ever.
    public let lastUsedAt: Date?
}

/// A credential the authenticator must not register again (WebAuthn `excludeCredentials`).
public struct CredentialDescriptor: Sendable, Hashable {
    public let id: [UInt8]
    public let transports: [String]
}

/// A registration that started: what the client hands to its authenticator, and the pending passkey's ID.
public struct RegistrationStart: Sendable, Hashable {
    /// The pending passkey's ID, which finishing names.
    public let passkeyID: String
    /// 32 random bytes, valid once for ``PasskeyService/challengeLifetime``.
    public let challenge: [UInt8]
    public let rpID: String
    public let rpName: String
    /// The user's stable, opaque WebAuthn user handle.
    public let userHandle: [UInt8]
    /// The email (or the user ID without one).
    public let userName: String
    /// The user's name, or ``userName`` without one.
    public let userDisplayName: String
    /// The COSE algorithms offered, in order of preference.
    public let algorithms: [Int]
    /// The user's credentials on this relying party, which the authenticator must not register again.
    public let excludeCredentials: [CredentialDescriptor]
    public let createdAt: Date
    public let expiresAt: Date
    /// The hourly registration limit after this start.
    public let rateLimit: RateLimitDecision
    /// WebAuthn's attestation conveyance preference: `none`, or `direct` when the project's attestation policy needs
    /// an attestation (``AttestationPolicy/attestationConveyance``).
    public var attestation: String = "none"
}

/// A usernameless sign-in that started.
public struct SignInStart: Sendable, Hashable {
    /// What finishing names (the PasskeyChallenge's `$id`).
    public let challengeID: String
    public let challenge: [UInt8]
    public let rpID: String
    public let createdAt: Date
    public let expiresAt: Date
    /// The per-IP hourly limit after this start; `nil` for exempt (API-key) calls.
    public let rateLimit: RateLimitDecision?
}

/// The single-use token a passkey sign-in earns; exchanged for a session within ``PasskeyService/tokenLifetime``.
public struct SignInToken: Sendable, Hashable {
    public let id: String
    public let userID: String
    /// Shown once; stored only as a hash.
    public let secret: String
    public let createdAt: Date
    public let expiresAt: Date
    /// The per-IP hourly limit after this finish; `nil` for exempt (API-key) calls.
    public let rateLimit: RateLimitDecision?
}

/// Passkey registration, usernameless sign-in and passkey management, with every rule of the seed enforced here:
/// 5-minute single-use challenges, registration finished by the session that started it, 10-minute recent
/// authentication to register or delete, at most 10 passkeys counting pending registrations, user verification in
/// every ceremony, 10 registrations per user and 10 sign-in starts and finishes per IP each hour.
public struct PasskeyService: Sendable {
    let store: Store
    let clock: any SesameClock
    let secrets: SecretsAtRest
    /// Whether the 10 sign-ins per IP per hour hold (``Sesame/perIPLimits``).
    let perIPLimits: Bool

    /// How long a registration or sign-in challenge works: 5 minutes.
    public static let challengeLifetime: TimeInterval = CeremonyEngine.challengeLifetime
    /// How long a sign-in token works: 1 minute.
    public static let tokenLifetime: TimeInterval = 60
    /// The most passkeys a user may have, counting live pending registrations.
    public static let maximumPerUser = 10
    /// Registration starts per user, and sign-in starts and finishes per IP, each hour.
    public static let attemptsPerHour = 10
    /// ES256 and RS256, as offered in `pubKeyCredParams` and accepted at registration.
    public static let algorithms: [COSEAlgorithmIdentifier] = RelyingParties.algorithms
    static let signInPurpose = ChallengeBinding.signInPurpose
    static let tokenPrefix = "sesame_tk_"

    // MARK: Relying party

    /// The relying party of a passkey ceremony of `project` for a request with this `Origin` (``RelyingParties``).
    /// - Throws: `unsupported` when passkeys are off; `no_relying_party` when no platform gives the relying party an
    ///   origin.
    public func relyingParty(_ project: Project, requestOrigin: String?) throws(SesameError) -> RelyingPartyPolicy {
        guard project.authMethods["passkey"] != false else { throw SesameError(.unsupported, "passkeys are switched off") }
        return try RelyingParties.policy(for: project.configuration, requestOrigin: requestOrigin)
    }

    // MARK: Registration

    /// Starts registering a passkey for the session's user: a pending passkey bound to this session, living 5 minutes.
    /// - Parameters:
    ///   - passkeyID: a custom ID, or `nil` / `unique()` for a new one.
    ///   - name: at most 128 characters; empty by default.
    /// - Throws: `unsupported`, `reauthentication_required`, `invalid_argument`, `rate_limited`, `limit_reached`,
    ///   `conflict` (the ID is taken).
    public func beginRegistration(project: Project, user: User, session: Session, passkeyID: String?, name: String?,
                                  requestOrigin: String?) throws(SesameError) -> RegistrationStart {
        try beginRegistration(project: project, user: user, session: session, passkeyID: passkeyID, name: name,
                              policy: try relyingParty(project, requestOrigin: requestOrigin))
    }

    /// ``beginRegistration(project:user:session:passkeyID:name:requestOrigin:)`` under a given relying party policy
    /// (the hosted setup page's).
    func beginRegistration(project: Project, user: User, session: Session, passkeyID: String?, name: String?,
                           policy: RelyingPartyPolicy) throws(SesameError) -> RegistrationStart {
        let now = clock.now()
        guard session.isRecentlyAuthenticated(at: now) else {
            throw SesameError(.reauthenticationRequired, "the session signed in more than 10 minutes ago")
        }
        let id = try UserService.checkID(passkeyID)
        let name = try UserService.checkOptionalName(name)
        // The limit is checked before the hourly rate, so a full account is told so without spending an attempt.
        // The insert below re-checks it atomically.
        let used = try StoreErrors.map { () throws(StoreError) in
            try store.credentials.count(userID: user.id)
                + store.challenges.countActive(userID: user.id, purpose: ChallengeRecord.registrationPurpose, now: now)
        }
        guard used < Self.maximumPerUser else { throw SesameError(.limitReached, "10 passkeys, counting pending registrations") }
        let decision = try RateLimiter(store: store, clock: clock)
            .hit("passkey-registration:\(user.id)", limit: Self.attemptsPerHour, window: 3600)
        guard decision.allowed else { throw SesameError(.rateLimited, "10 registrations per user per hour", rateLimit: decision) }
        let existing = try StoreErrors.map { () throws(StoreError) in try store.credentials.get(id: id) }
        guard existing == nil else { throw SesameError(.conflict, "the passkey ID is taken") }
        let record = try CeremonyEngine(store: store, clock: clock).startRegistration(
            .accountSession(userID: user.id, sessionID: session.id), id: id, project: project, rpID: policy.id, name: name, limit: Self.maximumPerUser
        )
        guard let record else { throw SesameError(.limitReached, "10 passkeys, counting pending registrations") }
        let excluded = try StoreErrors.map { () throws(StoreError) in try store.credentials.list(userID: user.id) }
            .filter { $0.rpID == policy.id }
            .map { CredentialDescriptor(id: $0.credentialID, transports: $0.transports) }
        let userName = user.email ?? user.id
        return RegistrationStart(
            passkeyID: id, challenge: record.challenge, rpID: policy.id, rpName: project.relyingPartyName, userHandle: user.userHandle,
            userName: userName, userDisplayName: user.name.isEmpty ? userName : user.name,
            algorithms: Self.algorithms.map(\.rawValue), excludeCredentials: excluded, createdAt: record.createdAt, expiresAt: record.expiresAt,
            rateLimit: decision, attestation: project.attestationPolicy.attestationConveyance
        )
    }

    /// Finishes a registration with the authenticator's `RegistrationResponseJSON`. Any attempt consumes the pending
    /// registration.
    /// - Throws: `not_found` (no such pending registration of this user), `expired` (expired, another session, or the
    ///   relying party changed), `verification_failed`, `conflict` (the credential is registered), `unsupported`.
    public func finishRegistration(project: Project, user: User, session: Session, passkeyID: String, credentialJSON: [UInt8],
                                   requestOrigin: String?) throws(SesameError) -> Passkey {
        try finishRegistration(project: project, user: user, session: session, passkeyID: passkeyID, credentialJSON: credentialJSON,
                               policy: try relyingParty(project, requestOrigin: requestOrigin))
    }

    /// ``finishRegistration(project:user:session:passkeyID:credentialJSON:requestOrigin:)`` under a given relying
    /// party policy (the hosted setup page's).
    func finishRegistration(project: Project, user: User, session: Session, passkeyID: String, credentialJSON: [UInt8],
                            policy: RelyingPartyPolicy) throws(SesameError) -> Passkey {
        let now = clock.now()
        let engine = CeremonyEngine(store: store, clock: clock)
        let consumed = try engine.consume(passkeyID, binding: .accountSession(userID: user.id, sessionID: session.id), project: project)
        let verified = try engine.finishRegistration(credentialJSON, challenge: consumed, project: project, policy: policy)
        let record = SesameStore.CredentialRecord(verified, id: passkeyID, projectID: project.id, userID: user.id, rpID: policy.id,
                                                  name: consumed.name ?? "", createdAt: now)
        let inserted = try StoreErrors.map { () throws(StoreError) in
            try store.credentials.createIfUnderLimit(record, limit: Self.maximumPerUser, now: now)
        }
        guard inserted else { throw SesameError(.limitReached, "10 passkeys") }
        return Passkey(record: record)
    }

    // MARK: Management

    /// The user's verified passkeys, oldest first.
    public func list(userID: String) throws(SesameError) -> [Passkey] {
        try StoreErrors.map { () throws(StoreError) in try store.credentials.list(userID: userID).map(Passkey.init) }
    }

    /// One of the user's verified passkeys.
    /// - Throws: `not_found`.
    public func get(userID: String, id: String) throws(SesameError) -> Passkey {
        let record = try StoreErrors.map { () throws(StoreError) in try store.credentials.get(id: id) }
        guard let record, record.userID == userID else { throw SesameError(.notFound, "passkey") }
        return Passkey(record: record)
    }

    /// Renames one of the user's passkeys (1 to 128 characters).
    /// - Throws: `invalid_argument`, `not_found`.
    public func rename(userID: String, id: String, name: String) throws(SesameError) -> Passkey {
        let name = try ProjectService.checkName(name)
        let renamed = try StoreErrors.map { () throws(StoreError) in
            try store.credentials.rename(userID: userID, id: id, name: name, at: clock.now())
        }
        guard renamed else { throw SesameError(.notFound, "passkey") }
        return try get(userID: userID, id: id)
    }

    /// Deletes one of the user's passkeys. With a `session` (not an API key), it must be recently authenticated.
    /// - Throws: `reauthentication_required`, `not_found`.
    public func delete(userID: String, id: String, session: Session?) throws(SesameError) {
        if let session, !session.isRecentlyAuthenticated(at: clock.now()) {
            throw SesameError(.reauthenticationRequired, "the session signed in more than 10 minutes ago")
        }
        let deleted = try StoreErrors.map { () throws(StoreError) in try store.credentials.delete(userID: userID, id: id) }
        guard deleted else { throw SesameError(.notFound, "passkey") }
    }

    // MARK: Usernameless sign-in

    /// Starts a usernameless sign-in: a 5-minute single-use challenge bound to no user.
    /// - Parameter clientIP: the caller's address for the 10-per-hour limit; `nil` exempts the call (API keys).
    /// - Throws: `unsupported`, `rate_limited`.
    public func beginSignIn(project: Project, requestOrigin: String?, clientIP: String?) throws(SesameError) -> SignInStart {
        try beginSignIn(project: project, policy: try relyingParty(project, requestOrigin: requestOrigin), clientIP: clientIP)
    }

    /// ``beginSignIn(project:requestOrigin:clientIP:)`` under a given relying party policy (the hosted setup page's).
    func beginSignIn(project: Project, policy: RelyingPartyPolicy, clientIP: String?) throws(SesameError) -> SignInStart {
        let decision = try limitSignIn("start", clientIP)
        let record = try CeremonyEngine(store: store, clock: clock).start(.signIn, id: Identifiers.unique(), project: project, rpID: policy.id,
                                                                           clientIP: clientIP)
        return SignInStart(challengeID: record.id, challenge: record.challenge, rpID: policy.id, createdAt: record.createdAt, expiresAt: record.expiresAt,
                           rateLimit: decision)
    }

    /// Finishes a usernameless sign-in with the authenticator's `AuthenticationResponseJSON`: the credential names its
    /// user. Any attempt consumes the challenge. Updates the sign count, backup state and last use, and returns a
    /// 60-second single-use token for a session. Where the challenge was held in memory (SQLite) the write does not wait
    /// for the disk (``FinishAcknowledgement/inFlight``): the token's exchange is the durable step.
    /// - Throws: `unsupported`, `rate_limited`, `expired` (unknown, used or expired challenge, or the relying party
    ///   changed), `verification_failed` (including an unknown credential), `blocked`.
    public func finishSignIn(project: Project, challengeID: String, credentialJSON: [UInt8], requestOrigin: String?,
                             clientIP: String?) throws(SesameError) -> SignInToken {
        let policy = try relyingParty(project, requestOrigin: requestOrigin)
        let decision = try limitSignIn("finish", clientIP)
        let now = clock.now()
        let secret = Identifiers.secret(prefix: Self.tokenPrefix)
        let secretHash = try secrets.tokenHash(secret)
        let binding = ChallengeBinding.signIn
        // One write transaction: the challenge taken back, the passkey's use recorded and the token stored together.
        // The token is ceremony state in flight, good only for its exchange, whose durable commit opens the session.
        let token = try CeremonyEngine(store: store, clock: clock).finishAuthentication(
            credentialJSON, challengeID: challengeID, binding: binding, project: project, policy: policy, identification: .usernameless,
            userVerification: binding.kind.userVerification, acknowledgement: .inFlight
        ) { transaction, passkey throws(StoreError) -> TokenRecord in
            let token = TokenRecord(id: Identifiers.unique(), projectID: project.id, userID: passkey.owner.id, secretHash: secretHash,
                                    kind: "passkey", createdAt: now, expiresAt: now.addingTimeInterval(Self.tokenLifetime))
            try store.holdSignInToken(token, in: transaction)
            return token
        }
        return SignInToken(id: token.id, userID: token.userID, secret: secret, createdAt: now, expiresAt: token.expiresAt, rateLimit: decision)
    }

    /// Counts a sign-in `step` (`start`, `finish`) against the 10 per IP per hour; `nil` when exempt.
    func limitSignIn(_ step: String, _ clientIP: String?) throws(SesameError) -> RateLimitDecision? {
        guard perIPLimits, let clientIP else { return nil }
        let decision = try RateLimiter(store: store, clock: clock).hit("passkey-signin-\(step):\(clientIP)", limit: Self.attemptsPerHour, window: 3600)
        guard decision.allowed else { throw SesameError(.rateLimited, "10 passkey sign-ins per IP per hour", rateLimit: decision) }
        return decision
    }
}

extension Passkey {
    init(record: SesameStore.CredentialRecord) {
        self.init(id: record.id, userID: record.userID, rpID: record.rpID, name: record.name ?? "", createdAt: record.createdAt,
                  updatedAt: record.updatedAt, lastUsedAt: record.lastUsedAt)
    }
}

extension SesameStore.CredentialRecord {
    /// The stored form of a passkey the ceremony engine verified.
    init(_ verified: VerifiedRegistration, id: String, projectID: String, userID: String, rpID: String, name: String, createdAt: Date) {
        self.init(
            id: id, projectID: projectID, userID: userID, rpID: rpID, credentialID: verified.credentialID,
            publicKey: verified.publicKey.cborEncoded, algorithm: Int64(verified.publicKey.algorithm.rawValue),
            signCount: Int64(verified.signCount), backupEligible: verified.backupEligible, backedUp: verified.backedUp,
            userVerified: verified.userVerified, aaguid: verified.aaguid, transports: verified.transports,
            attestationFormat: verified.format, name: name, createdAt: createdAt
        )
    }
}
