import Foundation

/// A one-time challenge for a ceremony; consumed atomically exactly once.
public struct ChallengeRecord: Sendable, Hashable {
    /// The purpose of pending passkey registrations; counted by the passkey limit and the relying party rule.
    public static let registrationPurpose = "registration"

    public var id: String
    public var projectID: String
    /// What the challenge is for, for example ``registrationPurpose`` or "authentication".
    public var purpose: String
    /// The random challenge bytes.
    public var challenge: [UInt8]
    public var userID: String?
    public var sessionID: String?
    public var requestID: String?
    public var expiresAt: Date
    public var createdAt: Date
    /// The relying party ID the ceremony runs under, when it matters (passkey ceremonies).
    public var rpID: String?
    /// A name requested with the ceremony (the passkey's name for a registration).
    public var name: String?
    /// The partner link the ceremony was issued under (inline verification), to detect a relink mid-way.
    public var linkID: String?

    public init(
        id: String, projectID: String, purpose: String, challenge: [UInt8], userID: String? = nil,
        sessionID: String? = nil, requestID: String? = nil, expiresAt: Date, createdAt: Date, rpID: String? = nil,
        name: String? = nil, linkID: String? = nil
    ) {
        self.linkID = linkID
        self.rpID = rpID
        self.name = name
        self.id = id
        self.projectID = projectID
        self.purpose = purpose
        self.challenge = challenge
        self.userID = userID
        self.sessionID = sessionID
        self.requestID = requestID
        self.expiresAt = expiresAt
        self.createdAt = createdAt
    }

    /// Whether the challenge can no longer be used at `now` (expiry is exclusive: valid strictly before it).
    public func isExpired(at now: Date) -> Bool { now.millisecondsSince1970 >= expiresAt.millisecondsSince1970 }
}

/// Stores challenges and consumes each at most once.
public struct ChallengeRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    static let columns =
        "id, project_id, purpose, challenge, user_id, session_id, request_id, expires_at, created_at, rp_id, name, link_id"
    static let columnCount = sqlColumnNames(columns).count

    /// Inserts a challenge, as bookkeeping (``SQLDatabase/bookkeeping(_:_:)``): its commit does not wait for stable
    /// storage. A challenge lost to a power cut fails only the ceremony in flight, as its expiry would; its use is
    /// durable (the consuming transaction's flush carries the insert with it), so a lost insert never brings a used
    /// challenge back.
    /// - Throws: ``StoreError/Code/conflict`` when the ID exists, ``StoreError/Code/notFound`` when the project
    ///   does not.
    public func create(_ challenge: ChallengeRecord) throws(StoreError) {
        _ = try database.bookkeeping(Self.insert, Self.values(challenge))
    }

    /// Inserts a challenge for `challenge.userID` only while that user's passkeys plus unexpired challenges of
    /// `challenge.purpose` stay under `limit`; the count and the insert are one atomic step under any concurrency
    /// (the user row is locked `FOR UPDATE` on PostgreSQL; `BEGIN IMMEDIATE` serializes on SQLite). Bookkeeping, as
    /// ``create(_:)``.
    /// - Returns: `true` when inserted, `false` when the limit is reached (nothing is written).
    /// - Throws: ``StoreError/Code/notFound`` when the user does not exist in the project,
    ///   ``StoreError/Code/conflict`` when the ID exists.
    public func createIfUnderLimit(_ challenge: ChallengeRecord, limit: Int) throws(StoreError) -> Bool {
        let userID = challenge.userID ?? ""
        return try database.bookkeepingTransaction { connection throws(StoreError) -> Bool in
            guard try connection.queryFirst(
                "SELECT id FROM users WHERE id = $1 AND project_id = $2\(connection.dialect.forUpdate)",
                [.text(userID), .text(challenge.projectID)]
            ) != nil else { throw StoreError(.notFound, "no such user in the project") }
            let used = try connection.queryFirst(
                """
                SELECT (SELECT COUNT(*) FROM credentials WHERE user_id = $1)
                     + (SELECT COUNT(*) FROM challenges WHERE user_id = $1 AND purpose = $2 AND expires_at > $3) AS n
                """,
                [.text(userID), .text(challenge.purpose), .date(challenge.createdAt)]
            )?.integer("n") ?? 0
            guard used < Int64(limit) else { return false }
            try connection.execute(Self.insert, Self.values(challenge))
            return true
        }
    }

    private static let insert = "INSERT INTO challenges (\(columns)) VALUES (\(valuePlaceholders))"
    /// `$1, ..., $12`: the placeholders of ``values(_:)``, in the order of ``columns``.
    static let valuePlaceholders = (1...columnCount).map { "$\($0)" }.joined(separator: ", ")

    static func values(_ challenge: ChallengeRecord) -> [SQLValue] {
        [
            .text(challenge.id), .text(challenge.projectID), .text(challenge.purpose), .blob(challenge.challenge),
            .text(challenge.userID), .text(challenge.sessionID), .text(challenge.requestID),
            .date(challenge.expiresAt), .date(challenge.createdAt), .text(challenge.rpID), .text(challenge.name),
            .text(challenge.linkID),
        ]
    }

    /// Reads a challenge without consuming it (expired ones included).
    public func get(id: String) throws(StoreError) -> ChallengeRecord? {
        try database.queryFirst(Self.select, [.text(id)]).map(Self.record)
    }

    private static let select = "SELECT \(columns) FROM challenges WHERE id = $1"

    /// Deletes and returns a challenge in one statement, so that among any number of concurrent callers on any
    /// number of servers at most one gets it.
    /// - Returns: the challenge, or `nil` when it is absent or expired (an expired one is deleted too).
    public func consume(id: String, now: Date) throws(StoreError) -> ChallengeRecord? {
        let rows = try database.query(Self.delete, [.text(id)])
        guard let row = rows.first else { return nil }
        let challenge = try Self.record(row)
        return challenge.isExpired(at: now) ? nil : challenge
    }

    /// Like ``consume(id:now:)``, but only a challenge of this `purpose` bound to this `requestID` is taken: a
    /// challenge of another request stays usable by its own.
    public func consume(id: String, requestID: String, purpose: String, now: Date) throws(StoreError) -> ChallengeRecord? {
        let rows = try database.query(Self.deleteOfRequest, [.text(id), .text(requestID), .text(purpose)])
        guard let row = rows.first else { return nil }
        let challenge = try Self.record(row)
        return challenge.isExpired(at: now) ? nil : challenge
    }

    private static let delete = "DELETE FROM challenges WHERE id = $1 RETURNING \(columns)"
    private static let deleteOfRequest = "DELETE FROM challenges WHERE id = $1 AND request_id = $2 AND purpose = $3 RETURNING \(columns)"

    /// Deletes every challenge that expires at or before `time`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteExpired(before time: Date) throws(StoreError) -> Int {
        try database.execute("DELETE FROM challenges WHERE expires_at <= $1", [.date(time)])
    }

    /// Deletes every challenge bound to a user (pending registrations included).
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteAll(userID: String) throws(StoreError) -> Int {
        try database.execute("DELETE FROM challenges WHERE user_id = $1", [.text(userID)])
    }

    /// Counts a user's unexpired challenges of one purpose.
    public func countActive(userID: String, purpose: String, now: Date) throws(StoreError) -> Int {
        let row = try database.queryFirst(
            "SELECT COUNT(*) AS n FROM challenges WHERE user_id = $1 AND purpose = $2 AND expires_at > $3",
            [.text(userID), .text(purpose), .date(now)]
        )
        return Int(try row?.integer("n") ?? 0)
    }

    static func record(_ row: SQLRow) throws(StoreError) -> ChallengeRecord {
        ChallengeRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), purpose: try row.text("purpose"),
            challenge: try row.blob("challenge"), userID: try row.optionalText("user_id"),
            sessionID: try row.optionalText("session_id"), requestID: try row.optionalText("request_id"),
            expiresAt: try row.date("expires_at"), createdAt: try row.date("created_at"),
            rpID: try row.optionalText("rp_id"), name: try row.optionalText("name"),
            linkID: try row.optionalText("link_id")
        )
    }
}
