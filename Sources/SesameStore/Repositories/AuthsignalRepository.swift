import Foundation

/// A user of the Authsignal face: the integrator's user ID within a tenant, the Sesame user behind it, and the
/// attributes the face keeps.
public struct AuthsignalUserRecord: Sendable, Hashable {
    public var projectID: String
    /// The integrator's own user ID.
    public var externalID: String
    /// The Sesame user that owns the passkeys.
    public var userID: String
    public var email: String?
    public var emailVerified: Bool
    public var phoneNumber: String?
    public var phoneNumberVerified: Bool
    public var username: String?
    public var displayName: String?
    /// A flat JSON object, as text.
    public var custom: String?
    public var locale: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(projectID: String, externalID: String, userID: String, email: String? = nil, emailVerified: Bool = false,
                phoneNumber: String? = nil, phoneNumberVerified: Bool = false, username: String? = nil, displayName: String? = nil,
                custom: String? = nil, locale: String? = nil, createdAt: Date, updatedAt: Date) {
        self.projectID = projectID
        self.externalID = externalID
        self.userID = userID
        self.email = email
        self.emailVerified = emailVerified
        self.phoneNumber = phoneNumber
        self.phoneNumberVerified = phoneNumberVerified
        self.username = username
        self.displayName = displayName
        self.custom = custom
        self.locale = locale
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A tracked action: its code, idempotency key and state; `externalUserID` is `nil` until a usernameless sign-in
/// names the user.
public struct AuthsignalActionRecord: Sendable, Hashable {
    public var id: String
    public var projectID: String
    public var externalUserID: String?
    public var actionCode: String
    public var idempotencyKey: String
    public var state: String
    public var stateUpdatedAt: Date
    public var verificationMethod: String?
    public var createdAt: Date

    public init(id: String, projectID: String, externalUserID: String?, actionCode: String, idempotencyKey: String, state: String,
                stateUpdatedAt: Date, verificationMethod: String? = nil, createdAt: Date) {
        self.id = id
        self.projectID = projectID
        self.externalUserID = externalUserID
        self.actionCode = actionCode
        self.idempotencyKey = idempotencyKey
        self.state = state
        self.stateUpdatedAt = stateUpdatedAt
        self.verificationMethod = verificationMethod
        self.createdAt = createdAt
    }
}

/// A verified contact enrolled by the backend (`EMAIL_OTP`, `SMS`): an authenticator that is not a passkey.
public struct AuthsignalContactRecord: Sendable, Hashable {
    public var id: String
    public var userID: String
    public var verificationMethod: String
    public var email: String?
    public var phoneNumber: String?
    public var createdAt: Date

    public init(id: String, userID: String, verificationMethod: String, email: String?, phoneNumber: String?, createdAt: Date) {
        self.id = id
        self.userID = userID
        self.verificationMethod = verificationMethod
        self.email = email
        self.phoneNumber = phoneNumber
        self.createdAt = createdAt
    }
}

/// What the client said when it enrolled a passkey.
public struct AuthsignalPasskeyDetails: Sendable, Hashable {
    /// The credential row (``CredentialRecord/id``).
    public var credentialRowID: String
    public var deviceID: String?
    public var username: String?
    public var displayName: String?

    public init(credentialRowID: String, deviceID: String?, username: String?, displayName: String?) {
        self.credentialRowID = credentialRowID
        self.deviceID = deviceID
        self.username = username
        self.displayName = displayName
    }
}

/// Stores the Authsignal face's users, actions, verified contacts, passkey details and default action outcomes.
public struct AuthsignalRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let userColumns = "project_id, external_id, user_id, email, email_verified, phone_number, phone_number_verified, "
        + "username, display_name, custom, locale, created_at, updated_at"
    private static let actionColumns = "id, project_id, external_user_id, action_code, idempotency_key, state, state_updated_at, "
        + "verification_method, created_at"
    private static let passkeyColumns = "credential_row_id, device_id, username, display_name"

    // MARK: Users

    /// Inserts a user.
    /// - Throws: ``StoreError/Code/conflict`` when the tenant already has this user ID.
    public func createUser(_ user: AuthsignalUserRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO authsignal_users (\(Self.userColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            Self.values(user)
        )
    }

    /// Replaces a user's attributes.
    /// - Returns: whether the user exists.
    @discardableResult
    public func updateUser(_ user: AuthsignalUserRecord) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE authsignal_users SET user_id = $3, email = $4, email_verified = $5, phone_number = $6, phone_number_verified = $7, "
                + "username = $8, display_name = $9, custom = $10, locale = $11, created_at = $12, updated_at = $13 "
                + "WHERE project_id = $1 AND external_id = $2",
            Self.values(user)
        ) > 0
    }

    /// The tenant's user with this integrator user ID.
    public func user(projectID: String, externalID: String) throws(StoreError) -> AuthsignalUserRecord? {
        try database.queryFirst(
            "SELECT \(Self.userColumns) FROM authsignal_users WHERE project_id = $1 AND external_id = $2", [.text(projectID), .text(externalID)]
        ).map(Self.user)
    }

    /// The user the face knows behind the owner of the passkey `credentialID` on `rpID`, if any, with that passkey's
    /// enrolment details (if it was enrolled through the face), in one read: a sign-in's last.
    public func user(rpID: String, passkeyCredentialID credentialID: [UInt8]) throws(StoreError)
        -> (user: AuthsignalUserRecord, details: AuthsignalPasskeyDetails?)?
    {
        guard let row = try database.queryFirst(Self.userOfPasskey, [.text(rpID), .blob(credentialID)]) else { return nil }
        let parts = try row.split(Self.userColumnCount, Self.passkeyColumnCount)
        return (try Self.user(parts[0]), try parts[1].optionalText("credential_row_id") == nil ? nil : try Self.passkeyDetails(parts[1]))
    }

    /// Sends ``user(rpID:passkeyCredentialID:)``'s read ahead (``SQLConnection/prefetch(_:_:)``): in a PostgreSQL
    /// transaction it goes out with the next statement, and that call is answered from it.
    public func prefetchUser(rpID: String, passkeyCredentialID credentialID: [UInt8]) throws(StoreError) {
        try database.prefetch(Self.userOfPasskey, [.text(rpID), .blob(credentialID)])
    }

    private static let userColumnCount = sqlColumnNames(userColumns).count
    private static let passkeyColumnCount = sqlColumnNames(passkeyColumns).count
    private static let userOfPasskey = """
        SELECT \(sqlQualified(userColumns, "u")), \(sqlQualified(passkeyColumns, "p"))
        FROM credentials c JOIN authsignal_users u ON u.user_id = c.user_id LEFT JOIN authsignal_passkeys p ON p.credential_row_id = c.id
        WHERE c.rp_id = $1 AND c.credential_id = $2
        """

    /// Deletes the tenant's actions of this user (the user itself goes with its Sesame user).
    @discardableResult
    public func deleteActions(projectID: String, externalUserID: String) throws(StoreError) -> Int {
        try database.execute("DELETE FROM authsignal_actions WHERE project_id = $1 AND external_user_id = $2",
                             [.text(projectID), .text(externalUserID)])
    }

    private static func values(_ user: AuthsignalUserRecord) -> [SQLValue] {
        [
            .text(user.projectID), .text(user.externalID), .text(user.userID), .text(user.email), .bool(user.emailVerified),
            .text(user.phoneNumber), .bool(user.phoneNumberVerified), .text(user.username), .text(user.displayName), .text(user.custom),
            .text(user.locale), .date(user.createdAt), .date(user.updatedAt),
        ]
    }

    private static func user(_ row: SQLRow) throws(StoreError) -> AuthsignalUserRecord {
        AuthsignalUserRecord(
            projectID: try row.text("project_id"), externalID: try row.text("external_id"), userID: try row.text("user_id"),
            email: try row.optionalText("email"), emailVerified: try row.bool("email_verified"), phoneNumber: try row.optionalText("phone_number"),
            phoneNumberVerified: try row.bool("phone_number_verified"), username: try row.optionalText("username"),
            displayName: try row.optionalText("display_name"), custom: try row.optionalText("custom"), locale: try row.optionalText("locale"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at")
        )
    }

    // MARK: Actions

    /// Inserts an action.
    /// - Parameter durability: ``Durability/process`` writes it as bookkeeping (``SQLDatabase/bookkeeping(_:_:)``), for
    ///   an action that lives only for the ceremony in flight.
    /// - Throws: ``StoreError/Code/conflict`` when the tenant already has an action with this idempotency key.
    public func createAction(_ action: AuthsignalActionRecord, durability: Durability = .full) throws(StoreError) {
        let sql = "INSERT INTO authsignal_actions (\(Self.actionColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        let values: [SQLValue] = [
            .text(action.id), .text(action.projectID), .text(action.externalUserID), .text(action.actionCode), .text(action.idempotencyKey),
            .text(action.state), .date(action.stateUpdatedAt), .text(action.verificationMethod), .date(action.createdAt),
        ]
        try database.execute(sql, values, durability: durability)
    }

    /// The action with this ID.
    public func action(id: String) throws(StoreError) -> AuthsignalActionRecord? {
        try database.queryFirst("SELECT \(Self.actionColumns) FROM authsignal_actions WHERE id = $1", [.text(id)]).map(Self.action)
    }

    /// Inserts `challenge` for the usernameless sign-in action it is bound to (`challenge.requestID`), as bookkeeping
    /// (see ``ChallengeRepository/create(_:)``), only while that action is the challenge's project's, has no user yet and
    /// is not in state `refusedState`: the check and the insert in one statement.
    /// - Returns: whether it was inserted (`false`: nothing was written).
    public func createChallenge(_ challenge: ChallengeRecord, forUsernamelessActionNotIn refusedState: String) throws(StoreError) -> Bool {
        let parameters = ChallengeRepository.values(challenge) + [.text(challenge.requestID), .text(challenge.projectID), .text(refusedState)]
        return try !database.bookkeeping(Self.challengeForAction, parameters).isEmpty
    }

    private static let challengeForAction = {
        let action = ChallengeRepository.columnCount + 1
        return """
            INSERT INTO challenges (\(ChallengeRepository.columns)) SELECT \(ChallengeRepository.valuePlaceholders) FROM authsignal_actions
            WHERE id = $\(action) AND project_id = $\(action + 1) AND external_user_id IS NULL AND state <> $\(action + 2) RETURNING id
            """
    }()

    /// A pending sign-in: the challenge with this ID and purpose and the action it was issued for, in one read.
    public func pendingChallenge(id: String, purpose: String) throws(StoreError) -> (challenge: ChallengeRecord, action: AuthsignalActionRecord)? {
        guard let row = try database.queryFirst(Self.challengeWithAction, [.text(id), .text(purpose)]) else { return nil }
        let parts = try row.split(ChallengeRepository.columnCount, Self.actionColumnCount)
        return (try ChallengeRepository.record(parts[0]), try Self.action(parts[1]))
    }

    private static let actionColumnCount = sqlColumnNames(actionColumns).count
    private static let challengeWithAction = """
        SELECT \(sqlQualified(ChallengeRepository.columns, "c")), \(sqlQualified(actionColumns, "a"))
        FROM challenges c JOIN authsignal_actions a ON a.id = c.request_id WHERE c.id = $1 AND c.purpose = $2
        """

    /// The tenant's action with this idempotency key.
    public func action(projectID: String, idempotencyKey: String) throws(StoreError) -> AuthsignalActionRecord? {
        try database.queryFirst(
            "SELECT \(Self.actionColumns) FROM authsignal_actions WHERE project_id = $1 AND idempotency_key = $2",
            [.text(projectID), .text(idempotencyKey)]
        ).map(Self.action)
    }

    /// Sets an action's state (and, when given, its verification method and user).
    /// - Parameter onlyFrom: when given, the state changes only if it is one of these (a finished ceremony never
    ///   overrides a state the backend set meanwhile, such as `BLOCK`).
    /// - Returns: whether the action changed.
    @discardableResult
    public func setState(id: String, state: String, verificationMethod: String? = nil, externalUserID: String? = nil, at time: Date,
                         onlyFrom: [String]? = nil) throws(StoreError) -> Bool {
        var sql = "UPDATE authsignal_actions SET state = $2, state_updated_at = $3, "
            + "verification_method = COALESCE($4, verification_method), external_user_id = COALESCE($5, external_user_id) WHERE id = $1"
        var parameters: [SQLValue] = [.text(id), .text(state), .date(time), .text(verificationMethod), .text(externalUserID)]
        if let onlyFrom, !onlyFrom.isEmpty {
            let placeholders = sqlPlaceholders(onlyFrom.count, after: 5)
            sql += " AND state IN (\(placeholders))"
            parameters += onlyFrom.map { .text($0) }
        }
        return try database.execute(sql, parameters) > 0
    }

    /// Deletes user-less actions created before `userlessBefore` and every action created before `before`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteActions(userlessBefore: Date, before: Date) throws(StoreError) -> Int {
        try database.execute("DELETE FROM authsignal_actions WHERE created_at < $2 OR (external_user_id IS NULL AND created_at < $1)",
                             [.date(userlessBefore), .date(before)])
    }

    private static func action(_ row: SQLRow) throws(StoreError) -> AuthsignalActionRecord {
        AuthsignalActionRecord(
            id: try row.text("id"), projectID: try row.text("project_id"), externalUserID: try row.optionalText("external_user_id"),
            actionCode: try row.text("action_code"), idempotencyKey: try row.text("idempotency_key"), state: try row.text("state"),
            stateUpdatedAt: try row.date("state_updated_at"), verificationMethod: try row.optionalText("verification_method"),
            createdAt: try row.date("created_at")
        )
    }

    // MARK: Default outcomes

    /// Sets (or, with `nil`, clears) the default outcome of an action code.
    public func setOutcome(projectID: String, actionCode: String, state: String?) throws(StoreError) {
        guard let state else {
            try database.execute("DELETE FROM authsignal_action_outcomes WHERE project_id = $1 AND action_code = $2",
                                 [.text(projectID), .text(actionCode)])
            return
        }
        try database.execute(
            "INSERT INTO authsignal_action_outcomes (project_id, action_code, state) VALUES ($1, $2, $3) "
                + "ON CONFLICT (project_id, action_code) DO UPDATE SET state = excluded.state",
            [.text(projectID), .text(actionCode), .text(state)]
        )
    }

    /// Every configured default outcome of the tenant, by action code.
    public func outcomes(projectID: String) throws(StoreError) -> [(actionCode: String, state: String)] {
        try database.query("SELECT action_code, state FROM authsignal_action_outcomes WHERE project_id = $1 ORDER BY action_code",
                           [.text(projectID)]).map { row throws(StoreError) in (try row.text("action_code"), try row.text("state")) }
    }

    // MARK: Verified contacts

    /// Inserts a verified contact.
    public func createContact(_ contact: AuthsignalContactRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO authsignal_contacts (id, user_id, verification_method, email, phone_number, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            [.text(contact.id), .text(contact.userID), .text(contact.verificationMethod), .text(contact.email), .text(contact.phoneNumber),
             .date(contact.createdAt)]
        )
    }

    /// The user's verified contacts, oldest first.
    public func contacts(userID: String) throws(StoreError) -> [AuthsignalContactRecord] {
        try database.query(
            "SELECT id, user_id, verification_method, email, phone_number, created_at FROM authsignal_contacts WHERE user_id = $1 "
                + "ORDER BY created_at, id", [.text(userID)]
        ).map { row throws(StoreError) in
            AuthsignalContactRecord(id: try row.text("id"), userID: try row.text("user_id"), verificationMethod: try row.text("verification_method"),
                                    email: try row.optionalText("email"), phoneNumber: try row.optionalText("phone_number"),
                                    createdAt: try row.date("created_at"))
        }
    }

    /// Deletes one of the user's verified contacts.
    /// - Returns: whether it existed.
    public func deleteContact(userID: String, id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM authsignal_contacts WHERE user_id = $1 AND id = $2", [.text(userID), .text(id)]) > 0
    }

    // MARK: Passkey details

    /// Stores what the client said when it enrolled a passkey.
    public func createPasskeyDetails(_ details: AuthsignalPasskeyDetails) throws(StoreError) {
        try database.execute(
            "INSERT INTO authsignal_passkeys (\(Self.passkeyColumns)) VALUES ($1, $2, $3, $4)",
            [.text(details.credentialRowID), .text(details.deviceID), .text(details.username), .text(details.displayName)]
        )
    }

    /// The enrolment details of a passkey, if it was enrolled through the Authsignal face.
    public func passkeyDetails(credentialRowID: String) throws(StoreError) -> AuthsignalPasskeyDetails? {
        try database.queryFirst("SELECT \(Self.passkeyColumns) FROM authsignal_passkeys WHERE credential_row_id = $1", [.text(credentialRowID)])
            .map(Self.passkeyDetails)
    }

    private static func passkeyDetails(_ row: SQLRow) throws(StoreError) -> AuthsignalPasskeyDetails {
        AuthsignalPasskeyDetails(credentialRowID: try row.text("credential_row_id"), deviceID: try row.optionalText("device_id"),
                                 username: try row.optionalText("username"), displayName: try row.optionalText("display_name"))
    }
}
