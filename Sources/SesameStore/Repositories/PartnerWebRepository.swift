import Foundation

/// A public site key of the web widget (`pk_live_…`, `pk_test_…`): one partner, one environment, and the page origins
/// allowed to use it. Not a secret, so stored as is; the key is its own ID.
public struct SiteKeyRecord: Sendable, Hashable {
    public var id: String
    public var partnerID: String
    /// `live` or `test`.
    public var environment: String
    /// Normalized web origins (`https://shop.example`, `http://localhost:3000`).
    public var origins: [String]
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: String, partnerID: String, environment: String, origins: [String], createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.origins = origins
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// The web side of partners: the origins `return_url` may point to, and the widget's site keys.
public struct PartnerWebRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    // MARK: Return origins

    /// Registers a return origin.
    /// - Returns: whether it was new.
    /// - Throws: ``StoreError/Code/notFound`` when the partner does not exist.
    @discardableResult
    public func addReturnOrigin(partnerID: String, origin: String, at time: Date) throws(StoreError) -> Bool {
        guard try !returnOrigins(partnerID: partnerID).contains(origin) else { return false }
        try database.execute(
            "INSERT INTO partner_return_origins (partner_id, origin, created_at) VALUES ($1, $2, $3)",
            [.text(partnerID), .text(origin), .date(time)]
        )
        return true
    }

    /// Removes a return origin.
    /// - Returns: whether it was registered.
    public func removeReturnOrigin(partnerID: String, origin: String) throws(StoreError) -> Bool {
        try database.execute(
            "DELETE FROM partner_return_origins WHERE partner_id = $1 AND origin = $2", [.text(partnerID), .text(origin)]
        ) > 0
    }

    /// A partner's return origins, in registration order.
    public func returnOrigins(partnerID: String) throws(StoreError) -> [String] {
        try database.query(
            "SELECT origin FROM partner_return_origins WHERE partner_id = $1 ORDER BY created_at, origin", [.text(partnerID)]
        ).map { row throws(StoreError) in try row.text("origin") }
    }

    // MARK: Site keys

    private static let siteKeyColumns = "id, partner_id, environment, origins, created_at, revoked_at"

    /// Inserts a site key.
    /// - Throws: ``StoreError/Code/notFound`` when the partner does not exist.
    public func createSiteKey(_ key: SiteKeyRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO partner_site_keys (\(Self.siteKeyColumns)) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .text(key.id), .text(key.partnerID), .text(key.environment), try JSONColumn.encode(key.origins), .date(key.createdAt),
                .date(key.revokedAt),
            ]
        )
    }

    /// A site key by its value, revoked or not.
    public func siteKey(id: String) throws(StoreError) -> SiteKeyRecord? {
        try database.queryFirst("SELECT \(Self.siteKeyColumns) FROM partner_site_keys WHERE id = $1", [.text(id)]).map(Self.siteKey)
    }

    /// A partner's site keys (revoked ones included), oldest first.
    public func siteKeys(partnerID: String) throws(StoreError) -> [SiteKeyRecord] {
        try database.query(
            "SELECT \(Self.siteKeyColumns) FROM partner_site_keys WHERE partner_id = $1 ORDER BY created_at, id", [.text(partnerID)]
        ).map(Self.siteKey)
    }

    /// Replaces the origins of an unrevoked site key.
    /// - Returns: whether there was such a key.
    public func setSiteKeyOrigins(partnerID: String, id: String, origins: [String]) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE partner_site_keys SET origins = $3 WHERE partner_id = $1 AND id = $2 AND revoked_at IS NULL",
            [.text(partnerID), .text(id), try JSONColumn.encode(origins)]
        ) > 0
    }

    /// Revokes a site key.
    /// - Returns: whether an unrevoked key was revoked.
    public func revokeSiteKey(partnerID: String, id: String, at time: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE partner_site_keys SET revoked_at = $3 WHERE partner_id = $1 AND id = $2 AND revoked_at IS NULL",
            [.text(partnerID), .text(id), .date(time)]
        ) > 0
    }

    private static func siteKey(_ row: SQLRow) throws(StoreError) -> SiteKeyRecord {
        SiteKeyRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
            origins: try JSONColumn.decode([String].self, from: row, "origins"), createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at")
        )
    }
}
