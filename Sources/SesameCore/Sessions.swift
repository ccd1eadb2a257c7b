import Foundation
import SesameCrypto
import SesameStore

/// A signed-in session. It records how and when it authenticated, for the recent-authentication rule.
public struct Session: Sendable, Hashable {
    public let id: String
    public let projectID: String
    public let userID: String
    /// How it signed in: `email` (password), `server` (minted with an API key), `passkey`, ...
    public let provider: String
    /// The factors it proved, for example `["password"]`.
    public let factors: [String]
    /// The client's address at sign-in.
    public let ip: String
    /// The client's user agent at sign-in.
    public let userAgent: String
    /// When it signed in.
    public let createdAt: Date
    public let updatedAt: Date
    public let expiresAt: Date
    /// When it last completed a multi-factor challenge, if ever.
    public let mfaUpdatedAt: Date?

    /// How long a session counts as freshly authenticated: 10 minutes.
    public static let recentAuthenticationWindow: TimeInterval = 600

    /// Whether it signed in or completed MFA within ``recentAuthenticationWindow`` before `now`.
    public func isRecentlyAuthenticated(at now: Date) -> Bool {
        let latest = max(createdAt, mfaUpdatedAt ?? createdAt)
        return now.timeIntervalSince(latest) <= Self.recentAuthenticationWindow
    }
}

/// Where a sign-in request came from.
public struct ClientInfo: Sendable, Hashable {
    /// The client's address (kept to 64 characters).
    public var ip: String
    /// The client's `User-Agent` (kept to 256 characters).
    public var userAgent: String
    /// Creates the description of a client.
    public init(ip: String, userAgent: String) {
        self.ip = ip
        self.userAgent = userAgent
    }
}

/// Creates, finds and ends sessions. Secrets are random, handed out once and stored as SHA-256 hashes; sign-in tokens,
/// which may be short, as HMAC-SHA256 under the token-hash key (``SecretsAtRest/tokenHash(_:)``).
public struct SessionService: Sendable {
    let store: Store
    let clock: any SesameClock
    let secrets: SecretsAtRest
    /// Whether the token exchanges per IP and user hold (``Sesame/perIPLimits``).
    let perIPLimits: Bool

    /// The lifetime of a session unless the caller asks for less: one year, like Appwrite's default.
    public static let defaultLifetime: TimeInterval = 365 * 24 * 3600
    /// Every session secret starts with this.
    public static let secretPrefix = "sesame_ss_"

    /// Password attempts allowed per email address per hour (against guessing); API-key callers are exempt.
    public static let passwordAttemptsPerHour = 10

    /// Signs in with email and password and opens a session (`provider` `email`, factors `password`).
    /// - Parameters:
    ///   - lifetime: seconds, 60 to ``defaultLifetime``; the default when `nil`.
    ///   - rateLimited: whether the attempt counts toward ``passwordAttemptsPerHour`` (false for API keys).
    /// - Throws: `invalid_argument` for a bad lifetime or an email that is no address; `rate_limited`; `invalid_credentials`;
    ///   `blocked`.
    public func signIn(projectID: String, email: String, password: String, lifetime: TimeInterval?, rateLimited: Bool = true,
                       client: ClientInfo) throws(SesameError) -> (session: Session, secret: String) {
        let lifetime = try Self.checkLifetime(lifetime)
        // Not an address (a NUL or a control character in it): bad input, before it costs a rate-limit write.
        let email = try UserService.checkEmail(email)
        if rateLimited {
            let decision = try RateLimiter(store: store, clock: clock)
                .hit("password:\(projectID):\(email)", limit: Self.passwordAttemptsPerHour, window: 3600)
            guard decision.allowed else { throw SesameError(.rateLimited, "10 password attempts per email per hour", rateLimit: decision) }
        }
        let user = try UserService(store: store, clock: clock).authenticate(projectID: projectID, email: email, password: password)
        return try create(projectID: projectID, userID: user.id, provider: "email", factors: ["password"], lifetime: lifetime,
                          client: client)
    }

    /// Opens a session for a user without checking a credential (the caller did, or holds an API key).
    /// - Throws: `not_found` when the user does not exist; `blocked` when the user is blocked.
    public func create(projectID: String, userID: String, provider: String, factors: [String], lifetime: TimeInterval? = nil,
                       mfaUpdatedAt: Date? = nil, client: ClientInfo) throws(SesameError) -> (session: Session, secret: String) {
        let user = try UserService(store: store, clock: clock).get(projectID: projectID, id: userID)
        guard user.isActive else { throw SesameError(.blocked, "user is blocked") }
        let (record, secret) = newSession(projectID: projectID, userID: userID, provider: provider, factors: factors, lifetime: lifetime,
                                          mfaUpdatedAt: mfaUpdatedAt, client: client)
        try StoreErrors.map { () throws(StoreError) in try store.sessions.create(record) }
        return (Session(record: record), secret)
    }

    /// A new session's record and its secret (stored only as a hash).
    func newSession(projectID: String, userID: String, provider: String, factors: [String], lifetime: TimeInterval? = nil,
                            mfaUpdatedAt: Date? = nil, client: ClientInfo) -> (SessionRecord, String) {
        let now = clock.now()
        let secret = Identifiers.secret(prefix: Self.secretPrefix)
        let record = SessionRecord(
            id: Identifiers.unique(), projectID: projectID, userID: userID, secretHash: Identifiers.hash(secret), provider: provider,
            factors: factors, ip: String(client.ip.prefix(64)), userAgent: String(client.userAgent.prefix(256)), createdAt: now,
            updatedAt: now, expiresAt: now.addingTimeInterval(lifetime ?? Self.defaultLifetime), mfaUpdatedAt: mfaUpdatedAt
        )
        return (record, secret)
    }

    /// Token exchanges allowed per IP address and user per hour for guests (short server-made tokens can be guessed).
    public static let tokenAttemptsPerHour = 10

    /// Mints a sign-in token for a user, as an administrator: `length` characters (4 to 128) of `a-z0-9`, living
    /// `lifetime` seconds (60 to one year). The secret is shown once and stored as HMAC-SHA256 under the token-hash
    /// key, which is sealed under the master key: a copy of the database cannot test guesses, and online guesses meet
    /// ``tokenAttemptsPerHour``.
    /// - Throws: `invalid_argument`; `not_found`; `master_key_required` or `master_key_mismatch`.
    public func createToken(projectID: String, userID: String, length: Int?, lifetime: TimeInterval?) throws(SesameError)
        -> (id: String, secret: String, createdAt: Date, expiresAt: Date)
    {
        let length = length ?? 6, lifetime = lifetime ?? 900
        guard (4...128).contains(length), lifetime >= 60, lifetime <= Self.defaultLifetime, lifetime.rounded() == lifetime else {
            throw SesameError(.invalidArgument, "length is 4 to 128 and expire 60 to \(Int(Self.defaultLifetime)) seconds")
        }
        _ = try UserService(store: store, clock: clock).get(projectID: projectID, id: userID)
        let now = clock.now()
        // Short secrets can collide with another user's live token (hashes are unique): draw again.
        for _ in 0..<5 {
            let secret = Self.randomCode(length: length)
            let token = TokenRecord(id: Identifiers.unique(), projectID: projectID, userID: userID, secretHash: try secrets.tokenHash(secret),
                                    kind: "token", createdAt: now, expiresAt: now.addingTimeInterval(lifetime))
            do {
                try store.tokens.create(token)
                return (token.id, secret, now, token.expiresAt)
            } catch where error.code == .conflict {
                continue
            } catch {
                throw StoreErrors.translate(error)
            }
        }
        throw SesameError(.internalFailure, "no free token secret after five draws")
    }

    /// `length` characters of `a-z0-9`, each uniform (bytes of 252 and above are drawn again: 252 = 7 × 36).
    static func randomCode(length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var code: [Character] = []
        code.reserveCapacity(length)
        while code.count < length {
            for byte in SecureRandom.bytes(count: length) where byte < 252 && code.count < length {
                code.append(alphabet[Int(byte) % alphabet.count])
            }
        }
        return String(code)
    }

    /// Exchanges a sign-in token (from a passkey sign-in) for a session; the token works once. A passkey session has
    /// provider `passkey`, factors `["passkey"]` and counts as multi-factor (`mfaUpdatedAt` is its sign-in time).
    /// - Parameter clientIP: for the hourly limit per IP and user; `nil` exempts the call (API keys).
    /// - Throws: `rate_limited`; `expired` for an unknown, used or expired token or another user's; `blocked`.
    public func createFromToken(projectID: String, userID: String, secret: String, clientIP: String? = nil, client: ClientInfo)
        throws(SesameError) -> (session: Session, secret: String)
    {
        if perIPLimits, let clientIP {
            let decision = try RateLimiter(store: store, clock: clock)
                .hit("token:\(projectID):\(clientIP):\(userID)", limit: Self.tokenAttemptsPerHour, window: 3600)
            guard decision.allowed else { throw SesameError(.rateLimited, "10 token exchanges per IP and user per hour", rateLimit: decision) }
        }
        let now = clock.now()
        guard secret.utf8.count <= 256 else { throw SesameError(.expired, "the token is unknown, used or expired") }
        let hash = try secrets.tokenHash(secret)
        // The session each kind of token opens; the store takes the token back (used up whatever follows) and stores its
        // kind's session together, in one transaction.
        let (passkeySession, sessionSecret) = newSession(projectID: projectID, userID: userID, provider: "passkey", factors: ["passkey"],
                                                         mfaUpdatedAt: now, client: client)
        var tokenSession = passkeySession
        tokenSession.provider = "token"
        tokenSession.factors = ["token"]
        tokenSession.mfaUpdatedAt = nil
        let exchange = try StoreErrors.map { () throws(StoreError) -> TokenExchange in
            try store.exchangeToken(projectID: projectID, secretHash: hash, userID: userID, now: now,
                                    sessions: ["passkey": passkeySession, "token": tokenSession])
        }
        switch exchange {
        case .created(let record): return (Session(record: record), sessionSecret)
        case .unknownToken: throw SesameError(.expired, "the token is unknown, used or expired")
        case .blocked: throw SesameError(.blocked, "user is blocked")
        }
    }

    /// The live session whose secret is `secret`, with its user; `nil` for an unknown, expired or malformed secret,
    /// or a blocked user (the request then counts as a guest's).
    public func authenticate(projectID: String, secret: String) throws(SesameError) -> (session: Session, user: User)? {
        guard secret.hasPrefix(Self.secretPrefix), secret.utf8.count < 200 else { return nil }
        let hash = Identifiers.hash(secret)
        return try StoreErrors.map { () throws(StoreError) -> (Session, User)? in
            guard let record = try store.sessions.find(projectID: projectID, secretHash: hash, now: clock.now()),
                  constantTimeEquals(record.secretHash, hash),
                  let user = try store.users.get(projectID: projectID, id: record.userID), user.status == UserRecord.active
            else { return nil }
            return (Session(record: record), User(record: user))
        }
    }

    /// The user's live sessions, oldest first.
    public func list(projectID: String, userID: String) throws(SesameError) -> [Session] {
        try StoreErrors.map { () throws(StoreError) in
            try store.sessions.list(projectID: projectID, userID: userID, now: clock.now()).map(Session.init)
        }
    }

    /// One live session of the user.
    /// - Throws: `not_found`.
    public func get(projectID: String, userID: String, id: String) throws(SesameError) -> Session {
        guard let session = try list(projectID: projectID, userID: userID).first(where: { $0.id == id }) else {
            throw SesameError(.notFound, "session")
        }
        return session
    }

    /// Extends one of the user's live sessions to a full lifetime from now (its sign-in time, and so its recency,
    /// stays).
    /// - Throws: `not_found`.
    public func refresh(projectID: String, userID: String, id: String) throws(SesameError) -> Session {
        let now = clock.now()
        let extended = try StoreErrors.map { () throws(StoreError) in
            try store.sessions.extend(projectID: projectID, userID: userID, id: id, expiresAt: now.addingTimeInterval(Self.defaultLifetime), at: now)
        }
        guard extended else { throw SesameError(.notFound, "session") }
        return try get(projectID: projectID, userID: userID, id: id)
    }

    /// Ends one session of the user.
    /// - Throws: `not_found`.
    public func delete(projectID: String, userID: String, id: String) throws(SesameError) {
        let deleted = try StoreErrors.map { () throws(StoreError) in try store.sessions.delete(projectID: projectID, userID: userID, id: id) }
        guard deleted else { throw SesameError(.notFound, "session") }
    }

    /// Ends every session of the user, or every one but `keeping`.
    public func deleteAll(projectID: String, userID: String, keeping: String? = nil) throws(SesameError) {
        _ = try StoreErrors.map { () throws(StoreError) in try store.sessions.deleteAll(projectID: projectID, userID: userID, keeping: keeping) }
    }

    static func checkLifetime(_ lifetime: TimeInterval?) throws(SesameError) -> TimeInterval? {
        guard let lifetime else { return nil }
        guard lifetime >= 60, lifetime <= defaultLifetime, lifetime.rounded() == lifetime else {
            throw SesameError(.invalidArgument, "duration must be a whole number of seconds between 60 and \(Int(defaultLifetime))")
        }
        return lifetime
    }
}

extension Session {
    init(record: SessionRecord) {
        self.init(id: record.id, projectID: record.projectID, userID: record.userID, provider: record.provider,
                  factors: record.factors, ip: record.ip, userAgent: record.userAgent, createdAt: record.createdAt,
                  updatedAt: record.updatedAt, expiresAt: record.expiresAt, mfaUpdatedAt: record.mfaUpdatedAt)
    }
}
