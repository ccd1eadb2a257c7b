import Foundation

/// An API key of a project; only a hash of its secret is stored.
public struct APIKeyRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var name: String
    /// A hash of the secret (the secret itself is shown once and never stored).
    public var secretHash: [UInt8]
    public var scopes: [String]
    public var createdAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    public init(
        id: String, projectID: String, name: String, secretHash: [UInt8], scopes: [String], createdAt: Date,
        lastUsedAt: Date? = nil, revokedAt: Date? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.name = name
        self.secretHash = secretHash
        self.scopes = scopes
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

/// Stores hashed API keys.
public struct APIKeyRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let columns = "id, project_id, name, secret_hash, scopes, created_at, last_used_at, revoked_at"

    /// Inserts a key.
    /// - Throws: ``StoreError/Code/conflict`` when the ID or the secret hash exists, ``StoreError/Code/notFound``
    ///   when the project does not.
    public func create(_ key: APIKeyRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO api_keys (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                .text(key.id), .text(key.projectID), .text(key.name), .blob(key.secretHash),
                try JSONColumn.encode(key.scopes), .date(key.createdAt), .date(key.lastUsedAt), .date(key.revokedAt),
            ]
        )
    }

    /// The unrevoked key with this secret hash, if any.
    ///
    /// The lookup is an index equality on the hash; since only hashes of high-entropy secrets are stored, its
    /// timing reveals nothing useful about a secret.
    public func find(secretHash: [UInt8]) throws(StoreError) -> APIKeyRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL", [.blob(secretHash)]
        ).map(Self.record)
    }

    /// The keys of a project (revoked ones included), oldest first.
    public func list(projectID: String) throws(StoreError) -> [APIKeyRecord] {
        try database.query(
            "SELECT \(Self.columns) FROM api_keys WHERE project_id = $1 ORDER BY created_at, id", [.text(projectID)]
        ).map(Self.record)
    }

    /// Revokes a key of a project.
    /// - Returns: whether an unrevoked key was revoked.
    @discardableResult
    public func revoke(projectID: String, id: String, at time: Date = Date()) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE api_keys SET revoked_at = $3 WHERE project_id = $1 AND id = $2 AND revoked_at IS NULL",
            [.text(projectID), .text(id), .date(time)]
        ) > 0
    }

    /// Records that a key was used (bookkeeping: see ``SQLDatabase/bookkeeping(_:_:)``).
    public func touch(id: String, at time: Date) throws(StoreError) {
        _ = try database.bookkeeping("UPDATE api_keys SET last_used_at = $2 WHERE id = $1", [.text(id), .date(time)])
    }

    private static func record(_ row: SQLRow) throws(StoreError) -> APIKeyRecord {
        APIKeyRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), name: try row.text("name"),
            secretHash: try row.blob("secret_hash"), scopes: try JSONColumn.decode([String].self, from: row, "scopes"),
            createdAt: try row.date("created_at"), lastUsedAt: try row.optionalDate("last_used_at"),
            revokedAt: try row.optionalDate("revoked_at")
        )
    }
}
