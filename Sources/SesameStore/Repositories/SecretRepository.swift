import Foundation

/// A stored column that holds a secret the server must read back (sealed under the master key by the domain).
public enum SecretColumn: String, Sendable, CaseIterable {
    /// `deployment_keys.sealed`, by `name`.
    case deploymentKey = "deployment_key"
    /// `jwt_secrets.secret` (a blob), by `project_id`.
    case jwtSecret = "jwt_secret"
    /// `signing_keys.private_key`, by `id` (the `kid`).
    case signingKey = "signing_key"
    /// `verification_requests.token`, by `id` (`NULL` once erased).
    case verificationToken = "verification_token"
    /// `webhook_events.sealed_token`, by `id` (`NULL` once nothing is left to deliver).
    case webhookToken = "webhook_token"

    var table: String {
        switch self {
        case .deploymentKey: "deployment_keys"
        case .jwtSecret: "jwt_secrets"
        case .signingKey: "signing_keys"
        case .verificationToken: "verification_requests"
        case .webhookToken: "webhook_events"
        }
    }

    var column: String {
        switch self {
        case .deploymentKey: "sealed"
        case .jwtSecret: "secret"
        case .signingKey: "private_key"
        case .verificationToken: "token"
        case .webhookToken: "sealed_token"
        }
    }

    var key: String {
        switch self {
        case .deploymentKey: "name"
        case .jwtSecret: "project_id"
        case .signingKey, .verificationToken, .webhookToken: "id"
        }
    }

    /// Whether the column may be set to `NULL` (erased).
    public var isErasable: Bool { self == .verificationToken || self == .webhookToken }

    func bind(_ bytes: [UInt8]) -> SQLValue {
        self == .jwtSecret ? .blob(bytes) : .text(String(decoding: bytes, as: UTF8.self))
    }

    func read(_ row: SQLRow) throws(StoreError) -> [UInt8] {
        self == .jwtSecret ? try row.blob("value") : Array(try row.text("value").utf8)
    }
}

/// One stored secret value: where it is and its bytes as stored (text columns as UTF-8).
public struct StoredSecret: Sendable, Hashable {
    public var column: SecretColumn
    /// The row's key (project ID, key ID, request ID, event ID or name).
    public var rowID: String
    public var value: [UInt8]

    public init(column: SecretColumn, rowID: String, value: [UInt8]) {
        self.column = column
        self.rowID = rowID
        self.value = value
    }
}

/// A webhook event from before tokens were kept apart: its body still holds the verification token.
public struct LegacyTokenEvent: Sendable, Hashable {
    public var id: String
    public var body: [UInt8]
    /// Whether a delivery of it is still pending.
    public var pending: Bool
}

/// Reads and rewrites the stored secrets as a whole (sealing plaintext, rotating the master key), and the sealed
/// deployment keys. Every rewrite is a compare-and-set on the old value, so concurrent nodes never lose a write.
public struct SecretRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Up to `limit` non-null values of a secret column in the order of their row keys, those after the row `after`
    /// (from the first with `nil`): a column holds a value per verification request or webhook event, so it is read a
    /// page at a time, never whole.
    public func page(_ column: SecretColumn, after: String?, limit: Int) throws(StoreError) -> [StoredSecret] {
        try database.query(
            """
            SELECT \(column.key) AS row_id, \(column.column) AS value FROM \(column.table)
            WHERE \(column.column) IS NOT NULL AND (CAST($1 AS TEXT) IS NULL OR \(column.key) > $1) ORDER BY \(column.key) LIMIT $2
            """,
            [after.map(SQLValue.text) ?? .null, .int(limit)]
        ).map { row throws(StoreError) in StoredSecret(column: column, rowID: try row.text("row_id"), value: try column.read(row)) }
    }

    /// Replaces one stored value if it is still `old`; `nil` erases it (erasable columns only).
    /// - Returns: whether the row held `old` and was rewritten.
    /// - Throws: ``StoreError/Code/invalidData`` when erasing a column that cannot be erased.
    @discardableResult
    public func replace(_ secret: StoredSecret, with new: [UInt8]?) throws(StoreError) -> Bool {
        let column = secret.column
        guard new != nil || column.isErasable else { throw StoreError(.invalidData, "\(column.rawValue) cannot be erased") }
        return try database.execute(
            "UPDATE \(column.table) SET \(column.column) = $3 WHERE \(column.key) = $1 AND \(column.column) = $2",
            [.text(secret.rowID), column.bind(secret.value), new.map(column.bind) ?? .null]
        ) > 0
    }

    /// A sealed deployment key by name, if it exists.
    public func deploymentKey(name: String) throws(StoreError) -> String? {
        try database.queryFirst("SELECT sealed FROM deployment_keys WHERE name = $1", [.text(name)])?.text("sealed")
    }

    /// Stores a sealed deployment key unless one with that name exists (another node made it first).
    /// - Returns: the sealed value now stored under the name.
    public func createDeploymentKey(name: String, sealed: String, at now: Date) throws(StoreError) -> String {
        try database.execute(
            "INSERT INTO deployment_keys (name, sealed, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
            [.text(name), .text(sealed), .date(now)]
        )
        guard let stored = try deploymentKey(name: name) else { throw StoreError(.notFound, "deployment key vanished") }
        return stored
    }

    /// Webhook events whose bodies still hold their verification token (written before tokens were kept apart).
    public func legacyTokenEvents(type: String) throws(StoreError) -> [LegacyTokenEvent] {
        try database.query(
            """
            SELECT e.id, e.body, EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = $2) AS pending
            FROM webhook_events e WHERE e.type = $1 AND e.token_offset IS NULL ORDER BY e.id
            """,
            [.text(type), .text(WebhookDeliveryRecord.pending)]
        ).map { row throws(StoreError) in
            LegacyTokenEvent(id: try row.text("id"), body: try row.blob("body"), pending: try row.integer("pending") != 0)
        }
    }

    /// Rewrites a legacy event: the body without its token, where the token goes back in, and the sealed token (or
    /// `nil` when nothing is left to deliver).
    @discardableResult
    public func convertLegacyEvent(id: String, oldBody: [UInt8], body: [UInt8], tokenOffset: Int, sealedToken: String?) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE webhook_events SET body = $3, token_offset = $4, sealed_token = $5 WHERE id = $1 AND body = $2 AND token_offset IS NULL",
            [.text(id), .blob(oldBody), .blob(body), .int(tokenOffset), .text(sealedToken)]
        ) > 0
    }
}
