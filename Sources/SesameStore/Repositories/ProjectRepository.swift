import Foundation

/// A project: the owner of one relying party, its platforms, keys and users.
public struct ProjectRecord: Sendable, Hashable {
    public var id: String
    public var name: String
    /// The relying party ID; permanent once any passkey or pending registration exists.
    public var rpID: String
    public var rpName: String
    /// Enabled authentication methods, by name.
    public var authMethods: [String: Bool]
    public var createdAt: Date
    public var updatedAt: Date
    /// The attestation policy as JSON text, or nil for the default policy; written only by
    /// ``ProjectRepository/setAttestationPolicy(projectID:json:at:)``.
    public var attestationPolicy: String?

    public init(
        id: String, name: String, rpID: String, rpName: String, authMethods: [String: Bool] = [:],
        createdAt: Date, updatedAt: Date, attestationPolicy: String? = nil
    ) {
        self.id = id
        self.name = name
        self.rpID = rpID
        self.rpName = rpName
        self.authMethods = authMethods
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.attestationPolicy = attestationPolicy
    }
}

/// Stores projects and guards their relying party ID.
public struct ProjectRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let columns = "id, name, rp_id, rp_name, auth_methods, created_at, updated_at, attestation_policy"
    private static let insertedColumns = "id, name, rp_id, rp_name, auth_methods, created_at, updated_at"

    /// Inserts a new project.
    /// - Throws: ``StoreError/Code/conflict`` when the ID exists.
    public func create(_ project: ProjectRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO projects (\(Self.insertedColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                .text(project.id), .text(project.name), .text(project.rpID), .text(project.rpName),
                try JSONColumn.encode(project.authMethods), .date(project.createdAt), .date(project.updatedAt),
            ]
        )
    }

    /// The project with this ID, if any.
    public func get(id: String) throws(StoreError) -> ProjectRecord? {
        try database.queryFirst("SELECT \(Self.columns) FROM projects WHERE id = $1", [.text(id)]).map(Self.record)
    }

    /// All projects, oldest first.
    public func list() throws(StoreError) -> [ProjectRecord] {
        try database.query("SELECT \(Self.columns) FROM projects ORDER BY created_at, id", []).map(Self.record)
    }

    /// Replaces a project's name, relying party and auth methods; a relying party ID change follows the rules of
    /// ``setRelyingParty(projectID:rpID:rpName:at:)``, with `project.updatedAt` as the time.
    /// - Throws: ``StoreError/Code/notFound`` when the project does not exist, ``StoreError/Code/conflict`` when the
    ///   relying party ID may no longer change.
    public func update(_ project: ProjectRecord) throws(StoreError) {
        let authMethods = try JSONColumn.encode(project.authMethods)
        try database.transaction { connection throws(StoreError) in
            try Self.checkRelyingPartyChange(
                connection, projectID: project.id, newRPID: project.rpID, now: project.updatedAt
            )
            try connection.execute(
                "UPDATE projects SET name = $2, rp_id = $3, rp_name = $4, auth_methods = $5, updated_at = $6 "
                    + "WHERE id = $1",
                [
                    .text(project.id), .text(project.name), .text(project.rpID), .text(project.rpName), authMethods,
                    .date(project.updatedAt),
                ]
            )
        }
    }

    /// Changes a project's relying party, refusing to change its ID once any passkey or unexpired registration
    /// challenge exists; the check and the write are one atomic step.
    ///
    /// On PostgreSQL the project row is locked `FOR UPDATE`, which also waits for (and blocks) inserts of passkeys
    /// and challenges, since their foreign-key checks lock the same row. On SQLite `BEGIN IMMEDIATE` serializes.
    /// - Returns: the updated project.
    /// - Throws: ``StoreError/Code/notFound``, or ``StoreError/Code/conflict`` when the ID may no longer change.
    @discardableResult
    public func setRelyingParty(projectID: String, rpID: String, rpName: String, at now: Date) throws(StoreError)
        -> ProjectRecord
    {
        try database.transaction { connection throws(StoreError) -> ProjectRecord in
            try Self.checkRelyingPartyChange(connection, projectID: projectID, newRPID: rpID, now: now)
            try connection.execute(
                "UPDATE projects SET rp_id = $2, rp_name = $3, updated_at = $4 WHERE id = $1",
                [.text(projectID), .text(rpID), .text(rpName), .date(now)]
            )
            guard let row = try connection.queryFirst(
                "SELECT \(Self.columns) FROM projects WHERE id = $1", [.text(projectID)]
            ) else { throw StoreError(.notFound, "project vanished inside its transaction") }
            return try Self.record(row)
        }
    }

    /// Locks the project row and throws when the relying party ID would change while it is in use.
    private static func checkRelyingPartyChange(
        _ connection: any SQLConnection, projectID: String, newRPID: String, now: Date
    ) throws(StoreError) {
        guard let current = try connection.queryFirst(
            "SELECT rp_id FROM projects WHERE id = $1\(connection.dialect.forUpdate)", [.text(projectID)]
        ) else { throw StoreError(.notFound, "no such project") }
        guard try current.text("rp_id") != newRPID else { return }
        let usage = try connection.queryFirst(
            """
            SELECT (SELECT COUNT(*) FROM credentials WHERE project_id = $1)
                 + (SELECT COUNT(*) FROM challenges WHERE project_id = $1 AND purpose = $2 AND expires_at > $3)
                   AS n
            """,
            [.text(projectID), .text(ChallengeRecord.registrationPurpose), .date(now)]
        )
        if try usage?.integer("n") ?? 0 > 0 {
            throw StoreError(.conflict, "relying party ID is in use by passkeys or pending registrations")
        }
    }

    /// Replaces a project's attestation policy (`nil`: the default), in one statement, so the configuration version
    /// moves with it.
    /// - Throws: ``StoreError/Code/notFound`` when the project does not exist.
    public func setAttestationPolicy(projectID: String, json: String?, at now: Date) throws(StoreError) {
        let changed = try database.execute(
            "UPDATE projects SET attestation_policy = $2, updated_at = $3 WHERE id = $1",
            [.text(projectID), .text(json), .date(now)]
        )
        guard changed > 0 else { throw StoreError(.notFound, "no such project") }
    }

    /// Deletes a project and, by cascade, everything it owns.
    /// - Returns: whether a project was deleted.
    @discardableResult
    public func delete(id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM projects WHERE id = $1", [.text(id)]) > 0
    }

    private static func record(_ row: SQLRow) throws(StoreError) -> ProjectRecord {
        ProjectRecord(
            id: try row.text("id"), name: try row.text("name"), rpID: try row.text("rp_id"),
            rpName: try row.text("rp_name"),
            authMethods: try JSONColumn.decode([String: Bool].self, from: row, "auth_methods"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            attestationPolicy: try row.optionalText("attestation_policy")
        )
    }
}
