import Foundation

/// A user of a project.
public struct UserRecord: Sendable, Hashable {
    /// The status of an active user.
    public static let active = "active"
    /// The status of a blocked user.
    public static let blocked = "blocked"

    public var id: String
    public var projectID: String
    /// Unique within the project when present; stored exactly as given (normalize before storing).
    public var email: String?
    public var name: String?
    public var passwordHash: String?
    /// ``active`` or ``blocked``.
    public var status: String
    /// The WebAuthn user handle; unique across all projects.
    public var userHandle: [UInt8]
    public var createdAt: Date
    public var updatedAt: Date
    /// Whether the user asked for multi-factor authentication.
    public var mfa: Bool
    /// Whether the email address is verified (then it can serve as a second factor).
    public var emailVerified: Bool

    public init(
        id: String, projectID: String, email: String? = nil, name: String? = nil, passwordHash: String? = nil,
        status: String = UserRecord.active, userHandle: [UInt8], createdAt: Date, updatedAt: Date, mfa: Bool = false,
        emailVerified: Bool = false
    ) {
        self.mfa = mfa
        self.emailVerified = emailVerified
        self.id = id
        self.projectID = projectID
        self.email = email
        self.name = name
        self.passwordHash = passwordHash
        self.status = status
        self.userHandle = userHandle
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Stores users.
public struct UserRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    static let columns =
        "id, project_id, email, name, password_hash, status, user_handle, created_at, updated_at, mfa, email_verified"
    static let columnCount = sqlColumnNames(columns).count

    /// Inserts a user.
    /// - Throws: ``StoreError/Code/conflict`` when the ID, the email within the project or the user handle exists;
    ///   ``StoreError/Code/notFound`` when the project does not.
    public func create(_ user: UserRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO users (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            [
                .text(user.id), .text(user.projectID), .text(user.email), .text(user.name), .text(user.passwordHash),
                .text(user.status), .blob(user.userHandle), .date(user.createdAt), .date(user.updatedAt), .bool(user.mfa),
                .bool(user.emailVerified),
            ]
        )
    }

    /// The user with this ID in the project, if any.
    public func get(projectID: String, id: String) throws(StoreError) -> UserRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM users WHERE project_id = $1 AND id = $2", [.text(projectID), .text(id)]
        ).map(Self.record)
    }

    /// The user with this email in the project, if any (exact match).
    public func findByEmail(projectID: String, email: String) throws(StoreError) -> UserRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM users WHERE project_id = $1 AND email = $2", [.text(projectID), .text(email)]
        ).map(Self.record)
    }

    /// The user with this WebAuthn user handle in the project, if any.
    public func findByUserHandle(projectID: String, userHandle: [UInt8]) throws(StoreError) -> UserRecord? {
        try database.queryFirst(
            "SELECT \(Self.columns) FROM users WHERE project_id = $1 AND user_handle = $2",
            [.text(projectID), .blob(userHandle)]
        ).map(Self.record)
    }

    /// The users of a project, oldest first.
    public func list(projectID: String) throws(StoreError) -> [UserRecord] {
        try database.query(
            "SELECT \(Self.columns) FROM users WHERE project_id = $1 ORDER BY created_at, id", [.text(projectID)]
        ).map(Self.record)
    }

    /// Replaces a user's email, name, password hash and status.
    /// - Returns: whether the user exists.
    /// - Throws: ``StoreError/Code/conflict`` when the email is taken in the project.
    @discardableResult
    public func update(_ user: UserRecord) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE users SET email = $3, name = $4, password_hash = $5, status = $6, updated_at = $7 "
                + "WHERE project_id = $1 AND id = $2",
            [
                .text(user.projectID), .text(user.id), .text(user.email), .text(user.name), .text(user.passwordHash),
                .text(user.status), .date(user.updatedAt),
            ]
        ) > 0
    }

    /// Sets a user's status (for example ``UserRecord/blocked``).
    /// - Returns: whether the user exists.
    @discardableResult
    public func setStatus(projectID: String, id: String, status: String, at time: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE users SET status = $3, updated_at = $4 WHERE project_id = $1 AND id = $2",
            [.text(projectID), .text(id), .text(status), .date(time)]
        ) > 0
    }

    /// Sets a user's MFA and email-verification flags.
    /// - Returns: whether the user exists.
    @discardableResult
    public func setFlags(projectID: String, id: String, mfa: Bool, emailVerified: Bool, at time: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE users SET mfa = $3, email_verified = $4, updated_at = $5 WHERE project_id = $1 AND id = $2",
            [.text(projectID), .text(id), .bool(mfa), .bool(emailVerified), .date(time)]
        ) > 0
    }

    /// Deletes a user and, by cascade, their passkeys.
    /// - Returns: whether a user was deleted.
    @discardableResult
    public func delete(projectID: String, id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM users WHERE project_id = $1 AND id = $2", [.text(projectID), .text(id)]) > 0
    }

    static func record(_ row: SQLRow) throws(StoreError) -> UserRecord {
        UserRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), email: try row.optionalText("email"),
            name: try row.optionalText("name"), passwordHash: try row.optionalText("password_hash"),
            status: try row.text("status"), userHandle: try row.blob("user_handle"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"), mfa: try row.bool("mfa"),
            emailVerified: try row.bool("email_verified")
        )
    }
}
