import Foundation

/// How the exchange of a sign-in token for a session ended (``Store/exchangeToken(projectID:secretHash:userID:now:sessions:)``).
public enum TokenExchange: Sendable, Equatable {
    /// The token was live, named its user and that user is active: this session was stored.
    case created(SessionRecord)
    /// No live token with this hash names this user of the project (a token found is used up all the same).
    case unknownToken
    /// The token was good but its user is blocked (it is used up all the same).
    case blocked
}

extension Store {
    /// Stores a passkey sign-in's token until its exchange, in `transaction`: on SQLite in this process's memory
    /// (``pendingTokens``) while there is room, dropped again if the transaction does not commit; otherwise as a row.
    public func holdSignInToken(_ token: TokenRecord, in transaction: StoreTransaction) throws(StoreError) {
        guard let memory = pendingTokens, memory.insert(token) else {
            try transaction.tokens.create(token)
            return
        }
        transaction.database.onRollback { memory.remove(secretHash: token.secretHash) }
    }

    /// Takes the project's token with this secret hash back (it is used up whatever follows) and, when it is unexpired at
    /// `now` and names `userID`, an active user of the project, stores `sessions[token.kind]` (a kind without an entry
    /// opens none), all in one transaction: on PostgreSQL in one statement (one round trip, where taking the token
    /// and reading the user, then storing the session with the commit, took two), on SQLite in one write transaction
    /// (the token taken from memory if held there, ``holdSignInToken(_:in:)``, and given back if it does not commit).
    /// Both apply ``exchangeOutcome(token:user:userID:now:sessions:)``; PostgreSQL's statement says the same in SQL.
    /// - Parameter sessions: the session each kind of token opens, all with the same ID and secret hash.
    public func exchangeToken(projectID: String, secretHash: [UInt8], userID: String, now: Date, sessions: [String: SessionRecord])
        throws(StoreError) -> TokenExchange
    {
        guard database.dialect == .postgres else {
            return try transaction { transaction throws(StoreError) -> TokenExchange in
                let found: TokenRecord?
                if let memory = pendingTokens, let held = memory.take(projectID: projectID, secretHash: secretHash) {
                    transaction.database.onRollback { memory.restore(held) }
                    found = held
                } else {
                    found = try transaction.tokens.consume(projectID: projectID, secretHash: secretHash, now: now)
                }
                guard let token = found else { return .unknownToken }
                let outcome = Self.exchangeOutcome(token: token, user: try transaction.users.get(projectID: projectID, id: userID),
                                                   userID: userID, now: now, sessions: sessions)
                if case .created(let session) = outcome { try transaction.sessions.create(session) }
                return outcome
            }
        }
        let candidates = sessions.sorted { $0.key < $1.key }
        // No session offered: the token is used up all the same, and none opens (a statement needs a kind).
        guard !candidates.isEmpty else {
            _ = try tokens.consume(projectID: projectID, secretHash: secretHash, now: now)
            return .unknownToken
        }
        var parameters: [SQLValue] = [.blob(secretHash), .text(projectID), .text(userID), .date(now), .text(UserRecord.active)]
        for (kind, session) in candidates {
            parameters += [.text(kind)] + (try Self.exchangedValues(session))
        }
        let sql = candidates.count <= Self.exchangeStatements.count ? Self.exchangeStatements[candidates.count - 1]
            : Self.exchangeStatement(kinds: candidates.count)
        guard let row = try database.queryFirst(sql, parameters) else { return .unknownToken }
        let parts = try row.split(TokenRepository.columnCount, UserRepository.columnCount, 1)
        let created = try parts[2].integer("created") == 1
        let outcome: TokenExchange
        if let token = try TokenRepository.unexpired(parts[0], at: now) {
            let user = try parts[1].optionalText("id") == nil ? nil : try UserRepository.record(parts[1])
            outcome = Self.exchangeOutcome(token: token, user: user, userID: userID, now: now, sessions: sessions)
        } else {
            outcome = .unknownToken
        }
        let opened: Bool
        if case .created = outcome { opened = true } else { opened = false }
        guard created == opened else {
            throw StoreError(.internalFailure, "the token exchange's statement and its rule disagree")
        }
        return outcome
    }

    /// The rule of a token exchange: a token unexpired at `now`, naming `userID`, who exists and is active, opens the
    /// session of its kind.
    static func exchangeOutcome(token: TokenRecord, user: UserRecord?, userID: String, now: Date, sessions: [String: SessionRecord])
        -> TokenExchange
    {
        guard !token.isExpired(at: now), token.userID == userID, let user,
              let session = sessions[token.kind]
        else { return .unknownToken }
        return user.status == UserRecord.active ? .created(session) : .blocked
    }

    /// The columns of a session the exchange's statement takes from its parameters (the token gives the project and
    /// user), and a session's values for them, in that order.
    private static let exchangedColumns = ["id", "secret_hash", "provider", "factors", "ip", "user_agent", "created_at", "updated_at",
                                           "expires_at", "mfa_updated_at"]

    private static func exchangedValues(_ session: SessionRecord) throws(StoreError) -> [SQLValue] {
        [
            .text(session.id), .blob(session.secretHash), .text(session.provider), try JSONColumn.encode(session.factors), .text(session.ip),
            .text(session.userAgent), .date(session.createdAt), .date(session.updatedAt), .date(session.expiresAt), .date(session.mfaUpdatedAt),
        ]
    }

    /// The statements for one to four kinds, made once (a sign-in's exchange offers two).
    private static let exchangeStatements = (1...4).map { exchangeStatement(kinds: $0) }

    /// PostgreSQL's exchange in one statement: the deletion feeds the insert (which a concurrent exchange of the same
    /// token, waiting on the row, then finds empty) and the answer. Parameters: the hash, the project, the user, now,
    /// the active status, then each kind with its session's columns. (A `VALUES` column of NULLs alone would be text:
    /// the multi-factor time is cast.)
    private static func exchangeStatement(kinds: Int) -> String {
        let sessionColumns = exchangedColumns
        let width = 1 + sessionColumns.count
        let rows = (0..<kinds).map { kind in
            "(" + (1...width).map { "$\(5 + kind * width + $0)" }.joined(separator: ", ") + ")"
        }
        let selected = sessionColumns.map { $0 == "mfa_updated_at" ? "CAST(k.\($0) AS BIGINT)" : "k.\($0)" }
        return """
            WITH t AS (DELETE FROM tokens WHERE secret_hash = $1 AND project_id = $2 RETURNING \(TokenRepository.columns)),
            u AS (SELECT \(UserRepository.columns) FROM users WHERE project_id = $2 AND id = $3),
            s AS (
                INSERT INTO sessions (project_id, user_id, \(sessionColumns.joined(separator: ", ")))
                SELECT t.project_id, t.user_id, \(selected.joined(separator: ", "))
                FROM t JOIN u ON u.id = t.user_id
                JOIN (VALUES \(rows.joined(separator: ", "))) AS k (kind, \(sessionColumns.joined(separator: ", "))) ON k.kind = t.kind
                WHERE t.expires_at > $4 AND u.status = $5
                RETURNING 1
            )
            SELECT \(sqlQualified(TokenRepository.columns, "t")), \(sqlQualified(UserRepository.columns, "u")),
                (SELECT count(*) FROM s) AS created
            FROM t LEFT JOIN u ON true
            """
    }
}
