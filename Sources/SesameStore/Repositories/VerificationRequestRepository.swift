import Foundation

/// A partner's verification request: one action to confirm within its life, by a linked person or on the hand-off.
public struct VerificationRequestRecord: Sendable, Hashable {
    public static let pending = "pending"
    public static let completed = "completed"
    public static let failed = "failed"

    /// `req_` and 32 lowercase hex characters.
    public var id: String
    public var partnerID: String
    public var environment: String
    public var scope: String
    public var partnerUserRef: String?
    /// Whether completing it on the hand-off also links the ref (`link: true`).
    public var linkIntent: Bool
    public var returnURL: String?
    /// The partner's metadata object as JSON text, echoed to status and webhook.
    public var metadata: String?
    /// ``pending``, ``completed`` or ``failed``; a pending request past `expiresAt` reads as expired.
    public var status: String
    public var failureReason: String?
    /// Whether the confirming person was the one linked to the ref.
    public var linked: Bool
    /// The verification token minted at completion, sealed under the master key; the same on every read until it
    /// expires, then erased.
    public var token: String?
    /// The token's `jti`.
    public var tokenID: String?
    /// When the token was first checked with verify-token.
    public var tokenCheckedAt: Date?
    public var createdAt: Date
    public var expiresAt: Date
    public var completedAt: Date?
    /// The page origin a widget request was created from (one of its site key's origins), else `nil`.
    public var widgetOrigin: String?

    public init(id: String, partnerID: String, environment: String, scope: String, partnerUserRef: String?, linkIntent: Bool,
                returnURL: String?, metadata: String?, status: String = pending, failureReason: String? = nil, linked: Bool = false,
                token: String? = nil, tokenID: String? = nil, tokenCheckedAt: Date? = nil, createdAt: Date, expiresAt: Date,
                completedAt: Date? = nil, widgetOrigin: String? = nil) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.scope = scope
        self.partnerUserRef = partnerUserRef
        self.linkIntent = linkIntent
        self.returnURL = returnURL
        self.metadata = metadata
        self.status = status
        self.failureReason = failureReason
        self.linked = linked
        self.token = token
        self.tokenID = tokenID
        self.tokenCheckedAt = tokenCheckedAt
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.completedAt = completedAt
        self.widgetOrigin = widgetOrigin
    }

    /// Whether the request can no longer complete at `now` (expiry is exclusive).
    public func isExpired(at now: Date) -> Bool { now.millisecondsSince1970 >= expiresAt.millisecondsSince1970 }
}

/// Stores verification requests; every state change is a compare-and-set on `status`.
public struct VerificationRequestRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    private static let columns = """
        id, partner_id, environment, scope, partner_user_ref, link_intent, return_url, metadata, status, failure_reason, linked, \
        token, token_id, token_checked_at, created_at, expires_at, completed_at, widget_origin
        """

    public func create(_ request: VerificationRequestRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO verification_requests (\(Self.columns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
            [
                .text(request.id), .text(request.partnerID), .text(request.environment), .text(request.scope),
                .text(request.partnerUserRef), .bool(request.linkIntent), .text(request.returnURL), .text(request.metadata),
                .text(request.status), .text(request.failureReason), .bool(request.linked), .text(request.token), .text(request.tokenID),
                .date(request.tokenCheckedAt), .date(request.createdAt), .date(request.expiresAt), .date(request.completedAt),
                .text(request.widgetOrigin),
            ]
        )
    }

    public func get(id: String) throws(StoreError) -> VerificationRequestRecord? {
        try database.queryFirst("SELECT \(Self.columns) FROM verification_requests WHERE id = $1", [.text(id)]).map(Self.record)
    }

    /// Completes a pending, unexpired request with its token.
    /// - Returns: whether this call completed it (`false`: it was completed, failed or expired already).
    public func complete(id: String, linked: Bool, token: String, tokenID: String, at now: Date) throws(StoreError) -> Bool {
        try database.execute(
            """
            UPDATE verification_requests SET status = $2, linked = $3, token = $4, token_id = $5, completed_at = $6
            WHERE id = $1 AND status = $7 AND expires_at > $6
            """,
            [
                .text(id), .text(VerificationRequestRecord.completed), .bool(linked), .text(token), .text(tokenID), .date(now),
                .text(VerificationRequestRecord.pending),
            ]
        ) > 0
    }

    /// Fails a pending, unexpired request with a reason.
    /// - Returns: whether this call failed it.
    public func fail(id: String, reason: String, at now: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE verification_requests SET status = $2, failure_reason = $3, completed_at = $4 WHERE id = $1 AND status = $5 AND expires_at > $4",
            [.text(id), .text(VerificationRequestRecord.failed), .text(reason), .date(now), .text(VerificationRequestRecord.pending)]
        ) > 0
    }

    /// Counts one call of `counter` (`options_calls` or `complete_calls`) on a request, and reads the request in the
    /// same statement (bookkeeping: see ``SQLDatabase/bookkeeping(_:_:)``).
    /// - Returns: the count after this call and the request, or `nil` when there is no such request.
    public func countCall(id: String, counter: CallCounter) throws(StoreError) -> (calls: Int, request: VerificationRequestRecord)? {
        let sql = counter == .options ? Self.countOptionsCall : Self.countCompleteCall
        guard let row = try database.bookkeeping(sql, [.text(id)]).first else { return nil }
        return (Int(try row.integer(counter.rawValue)), try Self.record(row))
    }

    /// Reads a request and the calls of `counter` its row holds, counting none (for ``RequestCallCounters``).
    /// - Returns: the stored count and the request, or `nil` when there is no such request.
    public func storedCalls(id: String, counter: CallCounter) throws(StoreError) -> (calls: Int, request: VerificationRequestRecord)? {
        let sql = counter == .options ? Self.readOptionsCalls : Self.readCompleteCalls
        guard let row = try database.queryFirst(sql, [.text(id)]) else { return nil }
        return (Int(try row.integer(counter.rawValue)), try Self.record(row))
    }

    /// The statements of ``countCall(id:counter:)`` and ``storedCalls(id:counter:)``, one per counter, made once (every
    /// public inline call runs one).
    private static let countOptionsCall = countCallSQL(.options), countCompleteCall = countCallSQL(.complete)
    private static let readOptionsCalls = readCallsSQL(.options), readCompleteCalls = readCallsSQL(.complete)

    private static func countCallSQL(_ counter: CallCounter) -> String {
        let column = counter.rawValue
        return "UPDATE verification_requests SET \(column) = \(column) + 1 WHERE id = $1 RETURNING \(column), \(columns)"
    }

    private static func readCallsSQL(_ counter: CallCounter) -> String {
        "SELECT \(counter.rawValue), \(columns) FROM verification_requests WHERE id = $1"
    }

    /// The per-request call counters.
    public enum CallCounter: String, Sendable {
        case options = "options_calls"
        case complete = "complete_calls"
    }

    /// Records the first online check of a completed request's token.
    /// - Returns: `true` for the first check of this `tokenID`, `false` when it was checked before.
    public func markTokenChecked(id: String, tokenID: String, at now: Date) throws(StoreError) -> Bool {
        try database.execute(
            "UPDATE verification_requests SET token_checked_at = $3 WHERE id = $1 AND token_id = $2 AND token_checked_at IS NULL",
            [.text(id), .text(tokenID), .date(now)]
        ) > 0
    }

    /// Deletes requests that expired (pending or failed) before `time`; completed requests stay, without their
    /// metadata and return URL.
    /// - Returns: how many rows were deleted or trimmed.
    @discardableResult
    public func purge(before time: Date) throws(StoreError) -> Int {
        let deleted = try database.execute(
            "DELETE FROM verification_requests WHERE expires_at <= $1 AND status <> $2",
            [.date(time), .text(VerificationRequestRecord.completed)]
        )
        let trimmed = try database.execute(
            """
            UPDATE verification_requests SET metadata = NULL, return_url = NULL
            WHERE expires_at <= $1 AND status = $2 AND (metadata IS NOT NULL OR return_url IS NOT NULL)
            """,
            [.date(time), .text(VerificationRequestRecord.completed)]
        )
        return deleted + trimmed
    }

    /// Erases the verification tokens of requests completed at or before `time` (their tokens have expired).
    /// - Returns: how many tokens were erased.
    @discardableResult
    public func eraseTokens(completedBefore time: Date) throws(StoreError) -> Int {
        try database.execute(
            "UPDATE verification_requests SET token = NULL WHERE token IS NOT NULL AND completed_at <= $1", [.date(time)]
        )
    }

    private static func record(_ row: SQLRow) throws(StoreError) -> VerificationRequestRecord {
        VerificationRequestRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
            scope: try row.text("scope"), partnerUserRef: try row.optionalText("partner_user_ref"), linkIntent: try row.bool("link_intent"),
            returnURL: try row.optionalText("return_url"), metadata: try row.optionalText("metadata"), status: try row.text("status"),
            failureReason: try row.optionalText("failure_reason"), linked: try row.bool("linked"), token: try row.optionalText("token"),
            tokenID: try row.optionalText("token_id"), tokenCheckedAt: try row.optionalDate("token_checked_at"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"), completedAt: try row.optionalDate("completed_at"),
            widgetOrigin: try row.optionalText("widget_origin")
        )
    }
}
