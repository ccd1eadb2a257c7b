import Foundation

/// A passkey: a WebAuthn public key credential registered to a user.
public struct CredentialRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var userID: String
    public var rpID: String
    /// The credential ID; unique per relying party ID.
    public var credentialID: [UInt8]
    /// The COSE public key.
    public var publicKey: [UInt8]
    /// The COSE algorithm identifier.
    public var algorithm: Int64
    public var signCount: Int64
    public var backupEligible: Bool
    public var backedUp: Bool
    public var userVerified: Bool
    /// The AAGUID as text (for example a UUID string), if known.
    public var aaguid: String?
    public var transports: [String]
    public var attestationFormat: String?
    public var name: String?
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// The last change of the record by its owner (a rename); `createdAt` until then.
    public var updatedAt: Date

    public init(
        id: String, projectID: String, userID: String, rpID: String, credentialID: [UInt8], publicKey: [UInt8],
        algorithm: Int64, signCount: Int64 = 0, backupEligible: Bool = false, backedUp: Bool = false,
        userVerified: Bool = false, aaguid: String? = nil, transports: [String] = [], attestationFormat: String? = nil,
        name: String? = nil, createdAt: Date, lastUsedAt: Date? = nil, updatedAt: Date? = nil
    ) {
        self.updatedAt = updatedAt ?? createdAt
        self.id = id
        self.projectID = projectID
        self.userID = userID
        self.rpID = rpID
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.userVerified = userVerified
        self.aaguid = aaguid
        self.transports = transports
        self.attestationFormat = attestationFormat
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// Stores passkeys.
public struct CredentialRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    static let columns = """
        id, project_id, user_id, rp_id, credential_id, public_key, algorithm, sign_count, backup_eligible, \
        backed_up, user_verified, aaguid, transports, attestation_format, name, created_at, last_used_at, updated_at
        """

    /// Inserts a passkey only while the user's passkeys plus their unexpired pending challenges stay under `limit`;
    /// the count and the insert are one atomic step under any concurrency.
    ///
    /// On PostgreSQL the user row is locked `FOR UPDATE` first, so concurrent calls for one user queue; on SQLite
    /// `BEGIN IMMEDIATE` serializes them.
    /// - Parameters:
    ///   - credential: the passkey to insert.
    ///   - limit: the most passkeys plus pending registrations the user may have.
    ///   - pendingPurpose: the challenge purpose that counts as a pending registration.
    ///   - finishingChallengeID: the challenge of the registration being finished, if it has not been consumed yet;
    ///     it is not counted, since it becomes this passkey.
    ///   - now: the time that decides which challenges are expired.
    /// - Returns: `true` when inserted, `false` when the limit is reached (nothing is written).
    /// - Throws: ``StoreError/Code/notFound`` when the user does not exist in the project,
    ///   ``StoreError/Code/conflict`` when the ID or the credential ID (per relying party) exists.
    public func createIfUnderLimit(
        _ credential: CredentialRecord, limit: Int, pendingPurpose: String = ChallengeRecord.registrationPurpose,
        finishingChallengeID: String? = nil, now: Date
    ) throws(StoreError) -> Bool {
        let values = try Self.values(credential)
        return try database.transaction { connection throws(StoreError) -> Bool in
            guard try connection.queryFirst(
                "SELECT id FROM users WHERE id = $1 AND project_id = $2\(connection.dialect.forUpdate)",
                [.text(credential.userID), .text(credential.projectID)]
            ) != nil else { throw StoreError(.notFound, "no such user in the project") }
            let used = try connection.queryFirst(
                """
                SELECT (SELECT COUNT(*) FROM credentials WHERE user_id = $1)
                     + (SELECT COUNT(*) FROM challenges
                        WHERE user_id = $1 AND purpose = $2 AND expires_at > $3 AND id <> $4) AS n
                """,
                [.text(credential.userID), .text(pendingPurpose), .date(now), .text(finishingChallengeID ?? "")]
            )?.integer("n") ?? 0
            guard used < Int64(limit) else { return false }
            try connection.execute(Self.insert, values)
            return true
        }
    }

    /// Inserts a passkey without a limit check.
    /// - Throws: ``StoreError/Code/conflict``, or ``StoreError/Code/notFound`` when the user or project is missing.
    public func create(_ credential: CredentialRecord) throws(StoreError) {
        try database.execute(Self.insert, try Self.values(credential))
    }

    /// The passkey with this credential ID for the relying party, if any.
    public func find(rpID: String, credentialID: [UInt8]) throws(StoreError) -> CredentialRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM credentials WHERE rp_id = $1 AND credential_id = $2",
            [.text(rpID), .blob(credentialID)]
        ).map(Self.record)
    }

    /// The passkey with this credential ID for the relying party and the user who owns it, in one read (a sign-in's
    /// lookup); `nil` when there is no such passkey.
    /// - Parameter forUse: read in the write transaction that records the passkey's use
    ///   (``recordUseOfReadPasskey(id:newSignCount:backedUp:userVerified:at:)``): the passkey's row stays locked until
    ///   the commit (`FOR UPDATE` on PostgreSQL; on SQLite the write transaction holds the whole database already), so
    ///   its sign count cannot move between this read and that write.
    public func findWithOwner(rpID: String, credentialID: [UInt8], forUse: Bool = false)
        throws(StoreError) -> (credential: CredentialRecord, owner: UserRecord)?
    {
        guard let row = try database.queryFirst(statementWithOwner(forUse: forUse), [.text(rpID), .blob(credentialID)]) else { return nil }
        let parts = try row.split(Self.columnCount, UserRepository.columnCount)
        return (try Self.record(parts[0]), try UserRepository.record(parts[1]))
    }

    /// Sends ``findWithOwner(rpID:credentialID:forUse:)``'s read for use ahead (``SQLConnection/prefetch(_:_:)``): in a
    /// PostgreSQL transaction it goes out with the next statement, and that call is answered from it.
    public func prefetchWithOwnerForUse(rpID: String, credentialID: [UInt8]) throws(StoreError) {
        try database.prefetch(statementWithOwner(forUse: true), [.text(rpID), .blob(credentialID)])
    }

    static let columnCount = sqlColumnNames(columns).count
    private static let withOwner = """
        SELECT \(sqlQualified(columns, "c")), \(sqlQualified(UserRepository.columns, "u"))
        FROM credentials c JOIN users u ON u.id = c.user_id WHERE c.rp_id = $1 AND c.credential_id = $2
        """
    /// The read for use: SQLite has no row locks (nor their syntax), and needs none in a write transaction.
    private static let withOwnerLocked = withOwner + " FOR UPDATE OF c"

    private func statementWithOwner(forUse: Bool) -> String {
        forUse && database.dialect == .postgres ? Self.withOwnerLocked : Self.withOwner
    }

    /// The passkey with this record ID, if any.
    public func get(id: String) throws(StoreError) -> CredentialRecord? {
        try database.queryFirst("SELECT \(Self.columns) FROM credentials WHERE id = $1", [.text(id)]).map(Self.record)
    }

    /// A user's passkeys, oldest first.
    public func list(userID: String) throws(StoreError) -> [CredentialRecord] {
        try database.query(
            "SELECT \(Self.columns) FROM credentials WHERE user_id = $1 ORDER BY created_at, id", [.text(userID)]
        ).map(Self.record)
    }

    /// Renames one of a user's passkeys, recording `time` as its `updatedAt` when given.
    /// - Returns: whether the passkey exists for that user.
    @discardableResult
    public func rename(userID: String, id: String, name: String?, at time: Date? = nil) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE credentials SET name = $3, updated_at = COALESCE($4, updated_at) WHERE user_id = $1 AND id = $2",
            [.text(userID), .text(id), .text(name), .date(time)]
        ) > 0
    }

    /// Deletes one of a user's passkeys.
    /// - Returns: whether a passkey was deleted.
    @discardableResult
    public func delete(userID: String, id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM credentials WHERE user_id = $1 AND id = $2", [.text(userID), .text(id)]) > 0
    }

    /// Records a successful authentication, moving the signature counter forward only, in one conditional update.
    ///
    /// The update applies when `newSignCount` is greater than the stored count, or when both are zero (an
    /// authenticator without a counter). Concurrent updates therefore end at the largest count.
    /// - Returns: `true` when applied; `false` when the passkey is missing or the counter would not move forward
    ///   (a possible cloned authenticator).
    public func updateAfterAuthentication(
        id: String, newSignCount: Int64, backedUp: Bool, userVerified: Bool, at time: Date
    ) throws(StoreError) -> Bool {
        try database.execute(Self.recordUse, Self.useValues(id, newSignCount, backedUp, userVerified, time)) > 0
    }

    /// ``updateAfterAuthentication(id:newSignCount:backedUp:userVerified:at:)`` for a passkey this transaction read with
    /// ``findWithOwner(rpID:credentialID:forUse:)`` and whose new count was checked against that read: nothing can have
    /// moved the count since, so the update needs no answer and goes out with the commit (``SQLDatabase/enqueue(_:_:)``,
    /// a round trip fewer on PostgreSQL). It keeps the same condition, so that it can never move a count backward.
    public func recordUseOfReadPasskey(id: String, newSignCount: Int64, backedUp: Bool, userVerified: Bool, at time: Date) throws(StoreError) {
        try database.enqueue(Self.recordUse, Self.useValues(id, newSignCount, backedUp, userVerified, time))
    }

    private static let recordUse = """
        UPDATE credentials SET sign_count = $2, backed_up = $3, user_verified = $4, last_used_at = $5
        WHERE id = $1 AND (sign_count < $2 OR ($2 = 0 AND sign_count = 0))
        """

    private static func useValues(_ id: String, _ newSignCount: Int64, _ backedUp: Bool, _ userVerified: Bool, _ time: Date) -> [SQLValue] {
        [.text(id), .integer(newSignCount), .bool(backedUp), .bool(userVerified), .date(time)]
    }

    /// How many passkeys a project has.
    public func count(projectID: String) throws(StoreError) -> Int {
        Int(try database.queryFirst(
            "SELECT COUNT(*) AS n FROM credentials WHERE project_id = $1", [.text(projectID)]
        )?.integer("n") ?? 0)
    }

    /// How many passkeys a user has.
    public func count(userID: String) throws(StoreError) -> Int {
        Int(try database.queryFirst(
            "SELECT COUNT(*) AS n FROM credentials WHERE user_id = $1", [.text(userID)]
        )?.integer("n") ?? 0)
    }

    private static let insert =
        "INSERT INTO credentials (\(columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
        + "$15, $16, $17, $18)"

    private static func values(_ credential: CredentialRecord) throws(StoreError) -> [SQLValue] {
        [
            .text(credential.id), .text(credential.projectID), .text(credential.userID), .text(credential.rpID),
            .blob(credential.credentialID), .blob(credential.publicKey), .integer(credential.algorithm),
            .integer(credential.signCount), .bool(credential.backupEligible), .bool(credential.backedUp),
            .bool(credential.userVerified), .text(credential.aaguid), try JSONColumn.encode(credential.transports),
            .text(credential.attestationFormat), .text(credential.name), .date(credential.createdAt),
            .date(credential.lastUsedAt), .date(credential.updatedAt),
        ]
    }

    static func record(_ row: SQLRow) throws(StoreError) -> CredentialRecord {
        CredentialRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), userID: try row.text("user_id"),
            rpID: try row.text("rp_id"), credentialID: try row.blob("credential_id"),
            publicKey: try row.blob("public_key"), algorithm: try row.integer("algorithm"),
            signCount: try row.integer("sign_count"), backupEligible: try row.bool("backup_eligible"),
            backedUp: try row.bool("backed_up"), userVerified: try row.bool("user_verified"),
            aaguid: try row.optionalText("aaguid"), transports: try JSONColumn.decodeStrings(from: row, "transports"),
            attestationFormat: try row.optionalText("attestation_format"), name: try row.optionalText("name"),
            createdAt: try row.date("created_at"), lastUsedAt: try row.optionalDate("last_used_at"),
            updatedAt: try row.optionalDate("updated_at")
        )
    }
}
