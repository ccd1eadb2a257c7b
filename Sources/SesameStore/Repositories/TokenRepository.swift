import Foundation

/// A short-lived, single-use sign-in token of a user (for example from a passkey sign-in), stored as a hash.
public struct TokenRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var userID: String
    public var secretHash: [UInt8]
    /// How the token was earned, for example `passkey`.
    public var kind: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(id: String, projectID: String, userID: String, secretHash: [UInt8], kind: String, createdAt: Date, expiresAt: Date) {
        self.id = id
        self.projectID = projectID
        self.userID = userID
        self.secretHash = secretHash
        self.kind = kind
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// Whether the token is expired at `now` (its expiry is at or before it).
    public func isExpired(at now: Date) -> Bool { now.millisecondsSince1970 >= expiresAt.millisecondsSince1970 }
}

/// Stores sign-in tokens and consumes each at most once. The table is keyed by the secret's hash, the only way a
/// token is looked up (migration 16).
public struct TokenRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    static let columns = "id, project_id, user_id, secret_hash, kind, created_at, expires_at"

    /// Inserts a token.
    /// - Throws: ``StoreError/Code/conflict`` when the hash exists, ``StoreError/Code/notFound`` when the user
    ///   or project does not.
    ///   In a PostgreSQL transaction the insert goes out with the next statement or the commit (``SQLDatabase/enqueue(_:_:)``),
    ///   which then throws these.
    public func create(_ token: TokenRecord) throws(StoreError) {
        try database.enqueue(
            Self.insert,
            [
                .text(token.id), .text(token.projectID), .text(token.userID), .blob(token.secretHash), .text(token.kind),
                .date(token.createdAt), .date(token.expiresAt),
            ]
        )
    }

    private static let insert = "INSERT INTO tokens (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7)"

    /// Deletes tokens that expired at or before `time`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteExpired(before time: Date) throws(StoreError) -> Int {
        try database.execute("DELETE FROM tokens WHERE expires_at <= $1", [.date(time)])
    }

    /// Deletes and returns the project's token with this secret hash in one statement, so at most one caller gets it.
    /// - Returns: the token, or `nil` when it is absent or expired at `now` (an expired one is deleted too).
    public func consume(projectID: String, secretHash: [UInt8], now: Date) throws(StoreError) -> TokenRecord? {
        let row = try database.queryFirst(Self.consume, [.blob(secretHash), .text(projectID)])
        return try row.flatMap { row throws(StoreError) in try Self.unexpired(row, at: now) }
    }

    static let columnCount = sqlColumnNames(columns).count
    private static let consume = "DELETE FROM tokens WHERE secret_hash = $1 AND project_id = $2 RETURNING \(columns)"

    /// The token a row holds, or `nil` when it expired at `now`.
    static func unexpired(_ row: SQLRow, at now: Date) throws(StoreError) -> TokenRecord? {
        let token = TokenRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), userID: try row.text("user_id"),
            secretHash: try row.blob("secret_hash"), kind: try row.text("kind"), createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
        return token.isExpired(at: now) ? nil : token
    }
}
