import Foundation

/// A platform a project accepts ceremonies from; accepted origins are computed from these.
public struct PlatformRecord: Sendable, Hashable {
    /// The kinds of platform this build knows; `kind` is stored as text so that new kinds need no migration.
    public static let knownKinds: Set<String> = ["web", "android", "apple"]

    public var id: String
    public var projectID: String
    /// "web", "android" or "apple" (see ``knownKinds``); readers should skip kinds they do not know.
    public var kind: String
    public var name: String?
    /// Web: the hostname, possibly with a leading wildcard label.
    public var hostname: String?
    /// Android: the package name.
    public var packageName: String?
    /// Android: SHA-256 signing certificate fingerprints.
    public var sha256Fingerprints: [String]
    /// Apple: the team ID.
    public var teamID: String?
    /// Apple: the bundle ID.
    public var bundleID: String?
    public var createdAt: Date

    public init(
        id: String, projectID: String, kind: String, name: String? = nil, hostname: String? = nil,
        packageName: String? = nil, sha256Fingerprints: [String] = [], teamID: String? = nil, bundleID: String? = nil,
        createdAt: Date
    ) {
        self.id = id
        self.projectID = projectID
        self.kind = kind
        self.name = name
        self.hostname = hostname
        self.packageName = packageName
        self.sha256Fingerprints = sha256Fingerprints
        self.teamID = teamID
        self.bundleID = bundleID
        self.createdAt = createdAt
    }
}

/// Stores the platforms of projects.
public struct PlatformRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let columns =
        "id, project_id, kind, name, hostname, package_name, sha256_fingerprints, team_id, bundle_id, created_at"

    /// Adds a platform to its project.
    /// - Throws: ``StoreError/Code/notFound`` when the project does not exist, ``StoreError/Code/conflict`` when
    ///   the ID exists.
    public func add(_ platform: PlatformRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO platforms (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            [
                .text(platform.id), .text(platform.projectID), .text(platform.kind), .text(platform.name),
                .text(platform.hostname), .text(platform.packageName),
                try JSONColumn.encode(platform.sha256Fingerprints), .text(platform.teamID), .text(platform.bundleID),
                .date(platform.createdAt),
            ]
        )
    }

    /// The platforms of a project, oldest first.
    public func list(projectID: String) throws(StoreError) -> [PlatformRecord] {
        try database.query(
            "SELECT \(Self.columns) FROM platforms WHERE project_id = $1 ORDER BY created_at, id", [.text(projectID)]
        ).map(Self.record)
    }

    /// The platforms of every project, in each project's order.
    public func listAll() throws(StoreError) -> [PlatformRecord] {
        try database.query("SELECT \(Self.columns) FROM platforms ORDER BY created_at, id", []).map(Self.record)
    }

    /// Replaces the fields of one platform of a project (its ID, project, kind and creation time stay).
    /// - Returns: whether the platform exists with that kind.
    @discardableResult
    public func update(_ platform: PlatformRecord) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE platforms SET name = $4, hostname = $5, package_name = $6, sha256_fingerprints = $7, team_id = $8, bundle_id = $9 "
                + "WHERE project_id = $1 AND id = $2 AND kind = $3",
            [
                .text(platform.projectID), .text(platform.id), .text(platform.kind), .text(platform.name), .text(platform.hostname),
                .text(platform.packageName), try JSONColumn.encode(platform.sha256Fingerprints), .text(platform.teamID),
                .text(platform.bundleID),
            ]
        ) > 0
    }

    /// Removes one platform of a project.
    /// - Returns: whether a platform was removed.
    @discardableResult
    public func remove(projectID: String, id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM platforms WHERE project_id = $1 AND id = $2", [.text(projectID), .text(id)])
            > 0
    }

    private static func record(_ row: SQLRow) throws(StoreError) -> PlatformRecord {
        PlatformRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), kind: try row.text("kind"),
            name: try row.optionalText("name"), hostname: try row.optionalText("hostname"),
            packageName: try row.optionalText("package_name"),
            sha256Fingerprints: try JSONColumn.decodeStrings(from: row, "sha256_fingerprints"),
            teamID: try row.optionalText("team_id"), bundleID: try row.optionalText("bundle_id"),
            createdAt: try row.date("created_at")
        )
    }
}
