import Foundation

/// A signed-in session of a user; only a hash of its secret is stored.
public struct SessionRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var userID: String
    /// A hash of the secret (the secret itself is handed to the client once and never stored).
    public var secretHash: [UInt8]
    /// How the session signed in, for example `email` (password), `server` or `passkey`.
    public var provider: String
    /// The factors the session has proven, for example `["password"]`.
    public var factors: [String]
    /// The client address at sign-in.
    public var ip: String
    /// The client's `User-Agent` at sign-in (may be empty).
    public var userAgent: String
    /// When the session signed in: the start of the recent-authentication window.
    public var createdAt: Date
    public var updatedAt: Date
    public var expiresAt: Date
    /// When the session last completed a multi-factor challenge, if ever.
    public var mfaUpdatedAt: Date?

    public init(
        id: String, projectID: String, userID: String, secretHash: [UInt8], provider: String, factors: [String],
        ip: String, userAgent: String, createdAt: Date, updatedAt: Date, expiresAt: Date, mfaUpdatedAt: Date? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.userID = userID
        self.secretHash = secretHash
        self.provider = provider
        self.factors = factors
        self.ip = ip
        self.userAgent = userAgent
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.mfaUpdatedAt = mfaUpdatedAt
    }
}

/// Stores sessions.
public struct SessionRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let columns =
        "id, project_id, user_id, secret_hash, provider, factors, ip, user_agent, created_at, updated_at, expires_at, mfa_updated_at"

    /// Inserts a session.
    /// - Throws: ``StoreError/Code/conflict`` when the secret hash, or the user's session ID, exists;
    ///   ``StoreError/Code/notFound`` when the user or project does not.
    ///   In a PostgreSQL transaction the insert goes out with the next statement or the commit (``SQLDatabase/enqueue(_:_:)``),
    ///   which then throws these.
    public func create(_ session: SessionRecord) throws(StoreError) {
        try database.enqueue(
            "INSERT INTO sessions (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            [
                .text(session.id), .text(session.projectID), .text(session.userID), .blob(session.secretHash),
                .text(session.provider), try JSONColumn.encode(session.factors), .text(session.ip), .text(session.userAgent),
                .date(session.createdAt), .date(session.updatedAt), .date(session.expiresAt), .date(session.mfaUpdatedAt),
            ]
        )
    }

    /// The session of the project with this secret hash that has not expired at `now`, if any.
    public func find(projectID: String, secretHash: [UInt8], now: Date) throws(StoreError) -> SessionRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM sessions WHERE secret_hash = $1 AND project_id = $2 AND expires_at > $3",
            [.blob(secretHash), .text(projectID), .date(now)]
        ).map(Self.record)
    }

    /// The user's session with this ID that has not expired at `now`, if any.
    public func get(projectID: String, userID: String, id: String, now: Date) throws(StoreError) -> SessionRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM sessions WHERE user_id = $1 AND id = $2 AND project_id = $3 AND expires_at > $4",
            [.text(userID), .text(id), .text(projectID), .date(now)]
        ).map(Self.record)
    }

    /// The project's JWT signing secret, created with `candidate` on first use (concurrent first uses agree).
    public func jwtSecret(projectID: String, candidate: [UInt8], now: Date) throws(StoreError) -> [UInt8] {
        if let row = try database.queryFirst("SELECT secret FROM jwt_secrets WHERE project_id = $1", [.text(projectID)]) {
            return try row.blob("secret")
        }
        try database.execute(
            "INSERT INTO jwt_secrets (project_id, secret, created_at) VALUES ($1, $2, $3) ON CONFLICT (project_id) DO NOTHING",
            [.text(projectID), .blob(candidate), .date(now)]
        )
        guard let row = try database.queryFirst("SELECT secret FROM jwt_secrets WHERE project_id = $1", [.text(projectID)]) else {
            throw StoreError(.notFound, "no JWT secret for the project")
        }
        return try row.blob("secret")
    }

    /// The user's sessions that have not expired at `now`, oldest first.
    public func list(projectID: String, userID: String, now: Date) throws(StoreError) -> [SessionRecord] {
        try database.query(
            "SELECT \(Self.columns) FROM sessions WHERE project_id = $1 AND user_id = $2 AND expires_at > $3 "
                + "ORDER BY created_at, id",
            [.text(projectID), .text(userID), .date(now)]
        ).map(Self.record)
    }

    /// Moves a live session's expiry to `expiresAt`.
    /// - Returns: whether the session exists for that user.
    @discardableResult
    public func extend(projectID: String, userID: String, id: String, expiresAt: Date, at now: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE sessions SET expires_at = $4, updated_at = $5 WHERE project_id = $1 AND user_id = $2 AND id = $3 AND expires_at > $5",
            [.text(projectID), .text(userID), .text(id), .date(expiresAt), .date(now)]
        ) > 0
    }

    /// Deletes one session of the user.
    /// - Returns: whether a session was deleted.
    @discardableResult
    public func delete(projectID: String, userID: String, id: String) throws(StoreError) -> Bool {
        try database.execute(
            "DELETE FROM sessions WHERE project_id = $1 AND user_id = $2 AND id = $3",
            [.text(projectID), .text(userID), .text(id)]
        ) > 0
    }

    /// Deletes every session of the user except `keeping`, if given.
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteAll(projectID: String, userID: String, keeping: String? = nil) throws(StoreError) -> Int {
        try database.execute(
            "DELETE FROM sessions WHERE project_id = $1 AND user_id = $2 AND id <> $3",
            [.text(projectID), .text(userID), .text(keeping ?? "")]
        )
    }

    /// Deletes sessions that expired before `now`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteExpired(before now: Date) throws(StoreError) -> Int {
        try database.execute("DELETE FROM sessions WHERE expires_at <= $1", [.date(now)])
    }

    private static func record(_ row: SQLRow) throws(StoreError) -> SessionRecord {
        SessionRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), userID: try row.text("user_id"),
            secretHash: try row.blob("secret_hash"), provider: try row.text("provider"),
            factors: try JSONColumn.decode([String].self, from: row, "factors"), ip: try row.text("ip"),
            userAgent: try row.text("user_agent"), createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"), expiresAt: try row.date("expires_at"),
            mfaUpdatedAt: try row.optionalDate("mfa_updated_at")
        )
    }
}
