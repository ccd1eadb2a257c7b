import Foundation

/// An API client of a project for inline verification (an "organization" on the wire).
public struct PartnerRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    /// The display name shown to people on the hosted pages.
    public var name: String
    public var createdAt: Date

    public init(id: String, projectID: String, name: String, createdAt: Date) {
        self.id = id
        self.projectID = projectID
        self.name = name
        self.createdAt = createdAt
    }
}

/// A hashed partner secret: an API key (`key`) or a short-lived grant (`grant`), bound to one environment.
public struct PartnerSecretRecord: Sendable, Hashable {
    public static let apiKey = "key"
    public static let grant = "grant"

    public var id: String
    public var partnerID: String
    /// `live` or `test`.
    public var environment: String
    /// ``apiKey`` or ``grant``.
    public var kind: String
    public var secretHash: [UInt8]
    public var createdAt: Date
    /// When a grant stops working; `nil` for API keys.
    public var expiresAt: Date?
    public var revokedAt: Date?

    public init(id: String, partnerID: String, environment: String, kind: String, secretHash: [UInt8], createdAt: Date,
                expiresAt: Date? = nil, revokedAt: Date? = nil) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.kind = kind
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// A native app a partner registered: iOS (`identifier` is `TEAMID.bundle.id`) or Android (`identifier` is the
/// package name, with the signing certificates' SHA-256 fingerprints as hex).
public struct PartnerAppRecord: Sendable, Hashable {
    public var id: String
    public var partnerID: String
    /// `ios` or `android`.
    public var platform: String
    public var identifier: String
    public var fingerprints: [String]
    /// `pending`, `approved`, `rejected` or `revoked`.
    public var state: String
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: String, partnerID: String, platform: String, identifier: String, fingerprints: [String], state: String,
                createdAt: Date, updatedAt: Date) {
        self.id = id
        self.partnerID = partnerID
        self.platform = platform
        self.identifier = identifier
        self.fingerprints = fingerprints
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A secured account: a partner's `partner_user_ref` linked to one user, with an ID that changes on every relink.
public struct PartnerLinkRecord: Sendable, Hashable {
    public var id: String
    public var partnerID: String
    public var environment: String
    public var partnerUserRef: String
    public var userID: String
    public var createdAt: Date

    public init(id: String, partnerID: String, environment: String, partnerUserRef: String, userID: String, createdAt: Date) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.partnerUserRef = partnerUserRef
        self.userID = userID
        self.createdAt = createdAt
    }
}

/// Stores partners, their secrets, apps and links.
public struct PartnerRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    // MARK: Partners

    /// Inserts a partner.
    /// - Throws: ``StoreError/Code/conflict`` when the ID exists, ``StoreError/Code/notFound`` when the project does not.
    public func create(_ partner: PartnerRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO partners (\(Self.partnerColumns)) VALUES ($1, $2, $3, $4)",
            [.text(partner.id), .text(partner.projectID), .text(partner.name), .date(partner.createdAt)]
        )
    }

    public func get(id: String) throws(StoreError) -> PartnerRecord? {
        try database.queryFirst("SELECT \(Self.partnerColumns) FROM partners WHERE id = $1", [.text(id)]).map(Self.partner)
    }

    /// The partners of a project, oldest first.
    public func list(projectID: String) throws(StoreError) -> [PartnerRecord] {
        try database.query(
            "SELECT \(Self.partnerColumns) FROM partners WHERE project_id = $1 ORDER BY created_at, id", [.text(projectID)]
        ).map(Self.partner)
    }

    private static let partnerColumns = "id, project_id, name, created_at"
    private static let partnerColumnCount = sqlColumnNames(partnerColumns).count

    private static func partner(_ row: SQLRow) throws(StoreError) -> PartnerRecord {
        PartnerRecord(id: try row.text("id"), projectID: try row.text("project_id"), name: try row.text("name"),
                      createdAt: try row.date("created_at"))
    }

    // MARK: Secrets

    private static let secretColumns = "id, partner_id, environment, kind, secret_hash, created_at, expires_at, revoked_at"
    private static let secretColumnCount = sqlColumnNames(secretColumns).count

    /// Inserts an API key or grant.
    /// - Parameter durability: ``Durability/process`` writes it as bookkeeping (``SQLDatabase/bookkeeping(_:_:)``), for
    ///   a grant, which lives only for the verifications opened in its few minutes.
    public func createSecret(_ secret: PartnerSecretRecord, durability: Durability = .full) throws(StoreError) {
        let sql = "INSERT INTO partner_secrets (\(Self.secretColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        let values: [SQLValue] = [
            .text(secret.id), .text(secret.partnerID), .text(secret.environment), .text(secret.kind), .blob(secret.secretHash),
            .date(secret.createdAt), .date(secret.expiresAt), .date(secret.revokedAt),
        ]
        try database.execute(sql, values, durability: durability)
    }

    /// The unrevoked, unexpired secret of this kind with this hash, and its partner, in one read. An index equality on
    /// a hash of a 256-bit secret, so its timing reveals nothing useful.
    public func findSecret(hash: [UInt8], kind: String, now: Date) throws(StoreError) -> (secret: PartnerSecretRecord, partner: PartnerRecord)? {
        guard let row = try database.queryFirst(Self.findSecretWithPartner, [.blob(hash), .text(kind), .date(now)]) else { return nil }
        let parts = try row.split(Self.secretColumnCount, Self.partnerColumnCount)
        return (try Self.secret(parts[0]), try Self.partner(parts[1]))
    }

    private static let findSecretWithPartner = """
        SELECT \(sqlQualified(secretColumns, "s")), \(sqlQualified(partnerColumns, "p"))
        FROM partner_secrets s JOIN partners p ON p.id = s.partner_id
        WHERE s.secret_hash = $1 AND s.kind = $2 AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > $3)
        """

    /// A partner's API keys (revoked ones included), oldest first.
    public func listKeys(partnerID: String) throws(StoreError) -> [PartnerSecretRecord] {
        try database.query(
            "SELECT \(Self.secretColumns) FROM partner_secrets WHERE partner_id = $1 AND kind = $2 ORDER BY created_at, id",
            [.text(partnerID), .text(PartnerSecretRecord.apiKey)]
        ).map(Self.secret)
    }

    /// Revokes a secret by ID (API keys) or by hash (grants, on logout).
    /// - Returns: whether an unrevoked secret was revoked.
    @discardableResult
    public func revokeSecret(partnerID: String, id: String? = nil, hash: [UInt8]? = nil, at time: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE partner_secrets SET revoked_at = $4 WHERE partner_id = $1 AND (id = $2 OR secret_hash = $3) AND revoked_at IS NULL",
            [.text(partnerID), .text(id), hash.map { .blob($0) } ?? .null, .date(time)]
        ) > 0
    }

    /// Deletes grants that expired at or before `time`.
    @discardableResult
    public func deleteExpiredGrants(before time: Date) throws(StoreError) -> Int {
        try database.execute(
            "DELETE FROM partner_secrets WHERE kind = $1 AND expires_at <= $2", [.text(PartnerSecretRecord.grant), .date(time)]
        )
    }

    private static func secret(_ row: SQLRow) throws(StoreError) -> PartnerSecretRecord {
        PartnerSecretRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
            kind: try row.text("kind"), secretHash: try row.blob("secret_hash"), createdAt: try row.date("created_at"),
            expiresAt: try row.optionalDate("expires_at"), revokedAt: try row.optionalDate("revoked_at")
        )
    }

    // MARK: Apps

    private static let appColumns = "a.id, a.partner_id, a.platform, a.identifier, a.fingerprints, a.state, a.created_at, a.updated_at"

    public func createApp(_ app: PartnerAppRecord) throws(StoreError) {
        try database.execute(
            """
            INSERT INTO partner_apps (id, partner_id, platform, identifier, fingerprints, state, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            [
                .text(app.id), .text(app.partnerID), .text(app.platform), .text(app.identifier), try JSONColumn.encode(app.fingerprints),
                .text(app.state), .date(app.createdAt), .date(app.updatedAt),
            ]
        )
    }

    /// A partner's apps, oldest first.
    public func listApps(partnerID: String) throws(StoreError) -> [PartnerAppRecord] {
        try database.query(
            "SELECT \(Self.appColumns) FROM partner_apps a WHERE a.partner_id = $1 ORDER BY a.created_at, a.id", [.text(partnerID)]
        ).map(Self.app)
    }

    /// The apps in `state` of every partner of a project (the association files and accepted origins use the approved).
    public func listApps(projectID: String, state: String) throws(StoreError) -> [PartnerAppRecord] {
        try database.query(
            """
            SELECT \(Self.appColumns) FROM partner_apps a JOIN partners p ON p.id = a.partner_id
            WHERE p.project_id = $1 AND a.state = $2 ORDER BY a.created_at, a.id
            """,
            [.text(projectID), .text(state)]
        ).map(Self.app)
    }

    /// Moves an app from one of `from` to `to`.
    /// - Returns: whether it was in one of `from` (and so moved).
    public func setAppState(partnerID: String, id: String, from: [String], to: String, at time: Date) throws(StoreError) -> Bool {
        let placeholders = sqlPlaceholders(from.count, after: 4)
        return try database.execute(
            "UPDATE partner_apps SET state = $3, updated_at = $4 WHERE partner_id = $1 AND id = $2 AND state IN (\(placeholders))",
            [.text(partnerID), .text(id), .text(to), .date(time)] + from.map { .text($0) }
        ) > 0
    }

    private static func app(_ row: SQLRow) throws(StoreError) -> PartnerAppRecord {
        PartnerAppRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), platform: try row.text("platform"),
            identifier: try row.text("identifier"), fingerprints: try JSONColumn.decode([String].self, from: row, "fingerprints"),
            state: try row.text("state"), createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at")
        )
    }

    // MARK: Links

    private static let linkColumns = "id, partner_id, environment, partner_user_ref, user_id, created_at"

    /// Links a ref to a user.
    /// - Throws: ``StoreError/Code/conflict`` when the ref or the user is already linked for this partner and environment,
    ///   ``StoreError/Code/notFound`` when the user does not exist.
    public func createLink(_ link: PartnerLinkRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO partner_links (\(Self.linkColumns)) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .text(link.id), .text(link.partnerID), .text(link.environment), .text(link.partnerUserRef), .text(link.userID),
                .date(link.createdAt),
            ]
        )
    }

    /// The current link of a ref.
    public func findLink(partnerID: String, environment: String, partnerUserRef: String) throws(StoreError) -> PartnerLinkRecord? {
        try database.queryFirst(Self.findLink, Self.linkKey(partnerID, environment, partnerUserRef)).map(Self.link)
    }

    /// Sends ``findLink(partnerID:environment:partnerUserRef:)``'s read ahead (``SQLConnection/prefetch(_:_:)``): in a
    /// PostgreSQL transaction it goes out with the next statement, and that call is answered from it.
    public func prefetchLink(partnerID: String, environment: String, partnerUserRef: String) throws(StoreError) {
        try database.prefetch(Self.findLink, Self.linkKey(partnerID, environment, partnerUserRef))
    }

    private static let findLink =
        "SELECT \(linkColumns) FROM partner_links WHERE partner_id = $1 AND environment = $2 AND partner_user_ref = $3"

    private static func linkKey(_ partnerID: String, _ environment: String, _ partnerUserRef: String) -> [SQLValue] {
        [.text(partnerID), .text(environment), .text(partnerUserRef)]
    }

    /// The current link of a ref and the linked person's passkeys on relying party `rpID`, oldest first, in one read;
    /// the passkeys only while the person is a user of project `projectID` whose status is `status` (none otherwise).
    public func findLinkWithPasskeys(partnerID: String, environment: String, partnerUserRef: String, projectID: String, rpID: String,
                                     status: String) throws(StoreError) -> (link: PartnerLinkRecord, passkeys: [CredentialRecord])?
    {
        let rows = try database.query(Self.findLinkWithPasskeys, [
            .text(partnerID), .text(environment), .text(partnerUserRef), .text(projectID), .text(status), .text(rpID),
        ])
        var found: (link: PartnerLinkRecord, passkeys: [CredentialRecord])?
        for row in rows {
            let parts = try row.split(Self.linkColumnCount, CredentialRepository.columnCount)
            if found == nil { found = (try Self.link(parts[0]), []) }
            // The link's row without a passkey has a null passkey.
            if try parts[1].value("id") != .null { found?.passkeys.append(try CredentialRepository.record(parts[1])) }
        }
        return found
    }

    private static let linkColumnCount = sqlColumnNames(linkColumns).count
    private static let findLinkWithPasskeys = """
        SELECT \(sqlQualified(linkColumns, "l")), \(sqlQualified(CredentialRepository.columns, "c"))
        FROM partner_links l
        LEFT JOIN users u ON u.id = l.user_id AND u.project_id = $4 AND u.status = $5
        LEFT JOIN credentials c ON c.user_id = u.id AND c.rp_id = $6
        WHERE l.partner_id = $1 AND l.environment = $2 AND l.partner_user_ref = $3
        ORDER BY c.created_at, c.id
        """

    /// Removes a ref's link.
    /// - Returns: whether there was one.
    public func deleteLink(partnerID: String, environment: String, partnerUserRef: String) throws(StoreError) -> Bool {
        try database.execute(
            "DELETE FROM partner_links WHERE partner_id = $1 AND environment = $2 AND partner_user_ref = $3",
            [.text(partnerID), .text(environment), .text(partnerUserRef)]
        ) > 0
    }

    private static func link(_ row: SQLRow) throws(StoreError) -> PartnerLinkRecord {
        PartnerLinkRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
            partnerUserRef: try row.text("partner_user_ref"), userID: try row.text("user_id"), createdAt: try row.date("created_at")
        )
    }
}
