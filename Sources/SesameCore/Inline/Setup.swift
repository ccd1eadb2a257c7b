import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// A ceremony the setup page started: what finishing names, and the options for the authenticator.
public struct SetupCeremonyStart<Options: Sendable & Hashable>: Sendable, Hashable {
    /// What the finish names (`challenge_id`).
    public let challengeID: String
    /// The WebAuthn options for `navigator.credentials.create` or `.get`.
    public let options: Options
}

/// A session on the hosted pages that a passkey ceremony of the setup page opened; the secret is shown once.
public struct SetupSignIn: Sendable, Hashable {
    /// The new session (provider `passkey`, ``SetupService/sessionLifetime``).
    public let session: Session
    /// The session secret, for the page's HttpOnly cookie; stored only as a hash.
    public let secret: String
    /// The signed-in person.
    public let person: User
}

/// What the setup page shows the signed-in person: their ID's name and their passkeys.
public struct SetupAccount: Sendable, Hashable {
    /// The signed-in person.
    public let person: User
    /// The ID's name (`<Brand> ID •1a2b`), what the passkey sheets show.
    public let idName: String
    /// The person's verified passkeys, oldest first.
    public let passkeys: [Passkey]
}

/// The server side of the hosted setup page (`setup_url`, `{app}/app/account/passkey`, BotShield §2.8): a person of
/// the ID project (``InlineConfiguration/idProjectID``) signs in with a passkey, or creates an ID (the person and their
/// first passkey in one registration), then adds passkeys. Every ceremony runs on the ceremony engine under the hosted
/// pages' origin (``RelyingParties/setupPolicy(for:appOrigin:)``), with the account API's rules for sign-ins and
/// additional passkeys (``PasskeyService``).
///
/// A session here is an ordinary session of the ID project, opened only by a passkey ceremony on the page (provider
/// `passkey`), living ``sessionLifetime``: the recent-authentication window, so a signed-in page may always add a
/// passkey, and a forgotten one stops working soon.
public struct SetupService: Sendable {
    let sesame: Sesame

    /// How long a setup session works: 10 minutes (``Session/recentAuthenticationWindow``).
    public static let sessionLifetime: TimeInterval = Session.recentAuthenticationWindow

    /// The ID project and the policy of its setup ceremonies.
    /// - Throws: `unsupported` when the ID project does not exist or has passkeys off; `no_relying_party`.
    func context() throws(SesameError) -> (Project, RelyingPartyPolicy) {
        let project: Project
        do { project = try sesame.projects.get(sesame.inline.idProjectID) } catch where error.code == .notFound {
            throw SesameError(.unsupported, "the ID project \(sesame.inline.idProjectID) does not exist (--id-project)")
        }
        guard project.authMethods["passkey"] != false else { throw SesameError(.unsupported, "passkeys are switched off") }
        guard !project.relyingPartyID.isEmpty else { throw SesameError(.noRelyingParty, "the ID project has no relying party ID") }
        return (project, RelyingParties.setupPolicy(for: project.configuration, appOrigin: sesame.inline.appOrigin))
    }

    /// The name of a person's ID, from their user handle: `<Brand> ID •` and 4 hex digits (nothing personal).
    public func idName(userHandle: [UInt8]) -> String {
        "\(sesame.inline.brandName) ID •" + userHandle.prefix(2).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// The creation options of the setup page (§2.8): the ID's name as `name` and `displayName`, ES256 and RS256, a
    /// discoverable credential with user verification, no attestation, the person's passkeys excluded, 60 seconds.
    func creationOptions(policy: RelyingPartyPolicy, project: Project, userHandle: [UInt8], challenge: [UInt8],
                         excluded: [CredentialDescriptor]) -> CreationOptionsJSON {
        let kind = ChallengeBinding.Kind.idCreation
        let name = idName(userHandle: userHandle)
        return CreationOptionsJSON(
            rp: .init(id: policy.id, name: project.relyingPartyName), user: .init(id: Base64URL.encode(userHandle), name: name, displayName: name),
            challenge: Base64URL.encode(challenge), pubKeyCredParams: RelyingParties.algorithms.map { .init(alg: $0.rawValue) },
            timeout: kind.timeoutMilliseconds, excludeCredentials: excluded.map(CredentialDescriptorJSON.init),
            authenticatorSelection: .init(userVerification: kind.userVerification.requested)
        )
    }

    // MARK: Create your ID

    /// Starts creating an ID: a new user handle and a reserved person ID, stored only in the challenge until the
    /// registration verifies.
    /// - Parameter clientIP: for the hourly limit per IP (``PasskeyService/attemptsPerHour``); `nil` exempts the call.
    /// - Throws: `unsupported`, `no_relying_party`, `rate_limited`.
    public func beginCreation(clientIP: String?) throws(SesameError) -> SetupCeremonyStart<CreationOptionsJSON> {
        let (project, policy) = try context()
        if sesame.perIPLimits, let clientIP {
            let decision = try sesame.rateLimiter.hit("id-creation:\(clientIP)", limit: PasskeyService.attemptsPerHour, window: 3600)
            guard decision.allowed else { throw SesameError(.rateLimited, "10 new IDs per IP per hour", rateLimit: decision) }
        }
        let userHandle = SecureRandom.bytes(count: 32)
        let challenge = try sesame.ceremonies.start(.idCreation, id: Identifiers.uuid(), project: project, rpID: policy.id, userID: Identifiers.unique(),
                                                    name: Base64URL.encode(userHandle))
        return SetupCeremonyStart(challengeID: challenge.id, options: creationOptions(policy: policy, project: project, userHandle: userHandle,
                                                                                     challenge: challenge.challenge, excluded: []))
    }

    /// Finishes creating an ID: the registration verified, the person, their passkey and a session are written in one
    /// transaction. Any attempt uses the challenge up.
    /// - Throws: `expired` (`challenge_expired`, `relying_party_changed`), `verification_failed` (the core's code),
    ///   `conflict` (the credential is registered), `unsupported`, `no_relying_party`.
    public func finishCreation(challengeID: String, credentialJSON: [UInt8], client: ClientInfo) throws(SesameError) -> SetupSignIn {
        let (project, policy) = try context()
        let engine = sesame.ceremonies
        let consumed = try engine.consume(challengeID, binding: .idCreation, project: project)
        guard let personID = consumed.userID, let encoded = consumed.name, let userHandle = try? Base64URL.decode(encoded), userHandle.count == 32
        else { throw CeremonyEngine.challengeExpired }
        let verified = try engine.finishRegistration(credentialJSON, challenge: consumed, project: project, policy: policy)
        let now = sesame.clock.now()
        let name = idName(userHandle: userHandle)
        let person = UserRecord(id: personID, projectID: project.id, name: name, userHandle: userHandle, createdAt: now, updatedAt: now)
        let passkey = SesameStore.CredentialRecord(verified, id: Identifiers.unique(), projectID: project.id, userID: personID, rpID: policy.id,
                                                   name: "", createdAt: now)
        let (session, secret) = sesame.sessions.newSession(projectID: project.id, userID: personID, provider: "passkey", factors: ["passkey"],
                                                           lifetime: Self.sessionLifetime, mfaUpdatedAt: now, client: client)
        try StoreErrors.map { () throws(StoreError) in
            try sesame.store.transaction { transaction throws(StoreError) in
                try transaction.users.create(person)
                try transaction.credentials.create(passkey)
                try transaction.sessions.create(session)
            }
        }
        return SetupSignIn(session: Session(record: session), secret: secret, person: User(record: person))
    }

    // MARK: Sign in

    /// Starts a usernameless sign-in on the setup page (any discoverable passkey of the ID project).
    /// - Throws: `unsupported`, `no_relying_party`, `rate_limited`.
    public func beginSignIn(clientIP: String?) throws(SesameError) -> SetupCeremonyStart<RequestOptionsJSON> {
        let (project, policy) = try context()
        let start = try sesame.passkeys.beginSignIn(project: project, policy: policy, clientIP: clientIP)
        return SetupCeremonyStart(challengeID: start.challengeID, options: start.options)
    }

    /// Finishes the sign-in: the assertion verified, its use recorded and a session opened in one transaction. Any
    /// attempt uses the challenge up.
    /// - Throws: `expired` (`challenge_expired`), `verification_failed` (the core's code, `unknown_credential`),
    ///   `blocked`, `rate_limited`, `unsupported`, `no_relying_party`.
    public func finishSignIn(challengeID: String, credentialJSON: [UInt8], clientIP: String?, client: ClientInfo) throws(SesameError)
        -> SetupSignIn
    {
        let (project, policy) = try context()
        _ = try sesame.passkeys.limitSignIn("finish", clientIP)
        let now = sesame.clock.now()
        let binding = ChallengeBinding.signIn
        let sessions = sesame.sessions
        let (record, secret, owner) = try sesame.ceremonies.finishAuthentication(
            credentialJSON, challengeID: challengeID, binding: binding, project: project, policy: policy, identification: .usernameless,
            userVerification: binding.kind.userVerification
        ) { transaction, passkey throws(StoreError) -> (SessionRecord, String, UserRecord) in
            let (record, secret) = sessions.newSession(projectID: project.id, userID: passkey.owner.id, provider: "passkey", factors: ["passkey"],
                                                       lifetime: Self.sessionLifetime, mfaUpdatedAt: now, client: client)
            try transaction.sessions.create(record)
            return (record, secret, passkey.owner)
        }
        return SetupSignIn(session: Session(record: record), secret: secret, person: User(record: owner))
    }

    // MARK: The signed-in person

    /// The person and session a setup session secret belongs to; `nil` for an unknown, expired or malformed secret, or
    /// a blocked person.
    public func authenticate(secret: String) throws(SesameError) -> (session: Session, person: User)? {
        let (project, _) = try context()
        guard let found = try sesame.sessions.authenticate(projectID: project.id, secret: secret) else { return nil }
        return (found.session, found.user)
    }

    /// The person's ID name and passkeys.
    public func account(_ person: User) throws(SesameError) -> SetupAccount {
        SetupAccount(person: person, idName: idName(userHandle: person.userHandle), passkeys: try sesame.passkeys.list(userID: person.id))
    }

    /// Ends the session.
    public func signOut(_ session: Session) throws(SesameError) {
        try sesame.sessions.delete(projectID: session.projectID, userID: session.userID, id: session.id)
    }

    /// Starts adding a passkey for the signed-in person, with the account API's rules (recent sign-in, 10 passkeys
    /// counting pending registrations, 10 registrations an hour) and the setup page's options; the person's passkeys
    /// are excluded.
    /// - Throws: `reauthentication_required`, `limit_reached`, `rate_limited`, `unsupported`, `no_relying_party`.
    public func beginAddition(session: Session, person: User) throws(SesameError) -> SetupCeremonyStart<CreationOptionsJSON> {
        let (project, policy) = try context()
        let start = try sesame.passkeys.beginRegistration(project: project, user: person, session: session, passkeyID: nil, name: nil, policy: policy)
        return SetupCeremonyStart(challengeID: start.passkeyID, options: creationOptions(
            policy: policy, project: project, userHandle: person.userHandle, challenge: start.challenge, excluded: start.excludeCredentials
        ))
    }

    /// Finishes adding a passkey; any attempt uses the pending registration up.
    /// - Throws: `not_found` (no such pending registration of this session's person), `expired`,
    ///   `verification_failed`, `conflict`, `limit_reached`.
    public func finishAddition(session: Session, person: User, challengeID: String, credentialJSON: [UInt8]) throws(SesameError) -> Passkey {
        let (project, policy) = try context()
        return try sesame.passkeys.finishRegistration(project: project, user: person, session: session, passkeyID: challengeID,
                                                      credentialJSON: credentialJSON, policy: policy)
    }
}
