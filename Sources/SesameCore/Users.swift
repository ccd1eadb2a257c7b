import Foundation
import SesameCrypto
import SesameStore

/// A user of a project.
public struct User: Sendable, Hashable {
    public let id: String
    public let projectID: String
    /// Lowercased; `nil` when the user has none.
    public var email: String?
    public var name: String
    /// Whether the user may sign in (false: blocked).
    public var isActive: Bool
    /// Whether a password is set.
    public var hasPassword: Bool
    /// The WebAuthn user handle: 32 random bytes, stable, free of personal data.
    public let userHandle: [UInt8]
    public let createdAt: Date
    public var updatedAt: Date
    /// Whether the user asked for multi-factor authentication.
    public var mfa: Bool
    /// Whether the email address is verified.
    public var emailVerified: Bool

    /// Whether `session` must still prove another factor before it may act: the user turned MFA on and has a second
    /// factor available (a verified email), and the session proved one factor only. A passkey proves possession and
    /// user verification at once, so a passkey session counts as two factors; so does a session an API key minted.
    public func needsMoreFactors(_ session: Session) -> Bool {
        guard mfa, emailVerified else { return false }
        let factors = Set(session.factors)
        return !factors.contains("passkey") && !factors.contains("server") && factors.count < 2
    }
}

/// Creates users and checks their passwords.
public struct UserService: Sendable {
    let store: Store
    let clock: any SesameClock

    /// Creates a user; sign-up passes an email and a password, an administrator may leave either out.
    /// - Parameters:
    ///   - id: a custom ID (1 to 36 of `A-Za-z0-9._-`, starting alphanumeric), or `nil` / `unique()` for a new one.
    ///   - password: 8 to 256 characters; stored only as a scrypt hash.
    ///   - name: at most 128 characters; empty by default.
    /// - Throws: `invalid_argument`; `conflict` when the ID or the email is taken.
    public func create(projectID: String, id: String?, email: String?, password: String?, name: String?) throws(SesameError) -> User {
        let id = try Self.checkID(id)
        let email = try email.map(Self.checkEmail)
        if let password, !(8...256).contains(password.count) {
            throw SesameError(.invalidArgument, "password must be between 8 and 256 characters long")
        }
        let name = try Self.checkOptionalName(name)
        let now = clock.now()
        let record = UserRecord(id: id, projectID: projectID, email: email, name: name, passwordHash: password.map(Passwords.hash),
                                userHandle: SecureRandom.bytes(count: 32), createdAt: now, updatedAt: now)
        try StoreErrors.map { () throws(StoreError) in try store.users.create(record) }
        return User(record: record)
    }

    /// The project's users, oldest first.
    public func list(projectID: String) throws(SesameError) -> [User] {
        try StoreErrors.map { () throws(StoreError) in try store.users.list(projectID: projectID).map(User.init) }
    }

    /// Deletes a user with their passkeys, pending registrations, sessions and tokens, in one transaction.
    /// - Throws: `not_found`.
    public func delete(projectID: String, id: String) throws(SesameError) {
        let deleted = try StoreErrors.map { () throws(StoreError) in
            try store.transaction { tx throws(StoreError) in
                try tx.challenges.deleteAll(userID: id)
                return try tx.users.delete(projectID: projectID, id: id)
            }
        }
        guard deleted else { throw SesameError(.notFound, "user") }
        store.pendingChallenges?.removeAll(userID: id)
        store.pendingTokens?.removeAll(userID: id)
    }

    /// Blocks (`active` false) or unblocks a user. A blocked user's sessions stop working at once.
    /// - Throws: `not_found`.
    public func setStatus(projectID: String, id: String, active: Bool) throws(SesameError) -> User {
        let changed = try StoreErrors.map { () throws(StoreError) in
            try store.users.setStatus(projectID: projectID, id: id, status: active ? UserRecord.active : UserRecord.blocked, at: clock.now())
        }
        guard changed else { throw SesameError(.notFound, "user") }
        return try get(projectID: projectID, id: id)
    }

    /// Sets the MFA flag and/or the email-verification flag (`nil` keeps one).
    /// - Throws: `not_found`.
    public func setFlags(projectID: String, id: String, mfa: Bool? = nil, emailVerified: Bool? = nil) throws(SesameError) -> User {
        let user = try get(projectID: projectID, id: id)
        try StoreErrors.map { () throws(StoreError) in
            _ = try store.users.setFlags(projectID: projectID, id: id, mfa: mfa ?? user.mfa, emailVerified: emailVerified ?? user.emailVerified,
                                         at: clock.now())
        }
        return try get(projectID: projectID, id: id)
    }

    /// The user with `id`.
    /// - Throws: `not_found`.
    public func get(projectID: String, id: String) throws(SesameError) -> User {
        let record = try StoreErrors.map { () throws(StoreError) in try store.users.get(projectID: projectID, id: id) }
        guard let record else { throw SesameError(.notFound, "user") }
        return User(record: record)
    }

    /// The user whose email and password these are.
    /// - Throws: `invalid_credentials` for an unknown email or a wrong password (the same time either way);
    ///   `blocked` when the password is right but the user is blocked.
    public func authenticate(projectID: String, email: String, password: String) throws(SesameError) -> User {
        let email = email.lowercased()
        let record = try StoreErrors.map { () throws(StoreError) in try store.users.findByEmail(projectID: projectID, email: email) }
        guard let record, let hash = record.passwordHash else {
            Passwords.verifyDummy(password)
            throw SesameError(.invalidCredentials, "unknown email or no password")
        }
        guard Passwords.verify(password, against: hash) else { throw SesameError(.invalidCredentials, "wrong password") }
        guard record.status == UserRecord.active else { throw SesameError(.blocked, "user is blocked") }
        return User(record: record)
    }

    /// A custom ID as Appwrite accepts it, or a new one for `nil` and `unique()`.
    static func checkID(_ id: String?) throws(SesameError) -> String {
        guard let id, id != "unique()" else { return Identifiers.unique() }
        let bytes = Array(id.utf8)
        func allowed(_ byte: UInt8) -> Bool {
            isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard (1...36).contains(bytes.count), isAlphanumeric(bytes[0]), bytes.allSatisfy(allowed) else {
            throw SesameError(.invalidArgument, "an ID is 1 to 36 characters of a-z, A-Z, 0-9, period, hyphen and underscore, "
                + "and cannot start with a special character")
        }
        return id
    }

    /// A plausible email address, lowercased: one `@`, a local part, a dotted domain, no spaces, at most 254 bytes.
    static func checkEmail(_ raw: String) throws(SesameError) -> String {
        let email = raw.lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let valid = email.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
            && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && !email.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
        guard valid else { throw SesameError(.invalidArgument, "email must be a valid email address") }
        return email
    }

    /// A display name: empty by default, at most 128 characters, no control characters.
    static func checkOptionalName(_ name: String?) throws(SesameError) -> String {
        guard let name, !name.isEmpty else { return "" }
        return try ProjectService.checkName(name)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension User {
    init(record: UserRecord) {
        self.init(id: record.id, projectID: record.projectID, email: record.email, name: record.name ?? "",
                  isActive: record.status == UserRecord.active, hasPassword: record.passwordHash != nil,
                  userHandle: record.userHandle, createdAt: record.createdAt, updatedAt: record.updatedAt, mfa: record.mfa,
                  emailVerified: record.emailVerified)
    }
}
