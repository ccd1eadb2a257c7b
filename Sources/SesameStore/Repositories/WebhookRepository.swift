import Foundation

/// Where a partner receives webhooks in one environment, with the secret that signs them (kept in clear: signing
/// needs it).
public struct WebhookEndpointRecord: Sendable, Hashable {
    public static let enabled = "enabled"
    public static let disabled = "disabled"

    public var id: String
    public var partnerID: String
    public var environment: String
    public var url: String
    /// `whsec_` and base64 of the key bytes.
    public var secret: String
    /// ``enabled`` or ``disabled`` (after a `410 Gone`).
    public var state: String
    public var createdAt: Date

    public init(id: String, partnerID: String, environment: String, url: String, secret: String, state: String, createdAt: Date) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.url = url
        self.secret = secret
        self.state = state
        self.createdAt = createdAt
    }
}

/// An event in the outbox: its body bytes, signed and sent as they are, except that a verification token is kept
/// apart (sealed) and goes back in at `tokenOffset` at send time.
public struct WebhookEventRecord: Sendable, Hashable {
    /// `msg_…`, the `webhook-id` of every attempt.
    public var id: String
    public var partnerID: String
    public var environment: String
    public var type: String
    /// The body, without the verification token when `tokenOffset` is set.
    public var body: [UInt8]
    public var createdAt: Date
    /// The verification token sealed under the master key; `nil` once the event has nothing left to deliver.
    public var sealedToken: String?
    /// The byte offset in `body` where the token goes; `nil` for a body that holds no token apart.
    public var tokenOffset: Int?

    public init(id: String, partnerID: String, environment: String, type: String, body: [UInt8], createdAt: Date,
                sealedToken: String? = nil, tokenOffset: Int? = nil) {
        self.id = id
        self.partnerID = partnerID
        self.environment = environment
        self.type = type
        self.body = body
        self.createdAt = createdAt
        self.sealedToken = sealedToken
        self.tokenOffset = tokenOffset
    }
}

/// One event on its way to one endpoint.
public struct WebhookDeliveryRecord: Sendable, Hashable {
    public static let pending = "pending"
    public static let delivered = "delivered"
    /// Every retry failed.
    public static let failed = "failed"
    /// The endpoint was disabled or removed before delivery.
    public static let abandoned = "abandoned"

    public var id: String
    public var eventID: String
    public var endpointID: String
    public var state: String
    public var attempts: Int
    public var nextAttemptAt: Date
}

/// A claimed delivery with everything needed to send it.
public struct WebhookWork: Sendable, Hashable {
    public var deliveryID: String
    public var attempts: Int
    public var event: WebhookEventRecord
    public var endpoint: WebhookEndpointRecord
}

/// One recorded delivery attempt.
public struct WebhookAttemptRecord: Sendable, Hashable {
    public var id: String
    public var deliveryID: String
    /// 1 for the first attempt.
    public var attempt: Int
    /// The node that made it.
    public var node: String
    public var startedAt: Date
    public var durationMilliseconds: Int64
    public var httpStatus: Int?
    /// A short reason when no HTTP status came back.
    public var error: String?

    public init(id: String, deliveryID: String, attempt: Int, node: String, startedAt: Date, durationMilliseconds: Int64,
                httpStatus: Int?, error: String?) {
        self.id = id
        self.deliveryID = deliveryID
        self.attempt = attempt
        self.node = node
        self.startedAt = startedAt
        self.durationMilliseconds = durationMilliseconds
        self.httpStatus = httpStatus
        self.error = error
    }
}

/// The webhook outbox: endpoints, events, one delivery per event and endpoint, and the attempts.
///
/// Any node may deliver. A node claims a due delivery with a lease (a compare-and-set on the row), so each attempt is
/// made by exactly one node; a node that dies mid-attempt leaves a lease that expires, and another node retries.
public struct WebhookRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    // MARK: Endpoints

    private static let endpointColumns = "id, partner_id, environment, url, secret, state, created_at"

    public func createEndpoint(_ endpoint: WebhookEndpointRecord) throws(StoreError) {
        try database.execute(
            "INSERT INTO webhook_endpoints (\(Self.endpointColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                .text(endpoint.id), .text(endpoint.partnerID), .text(endpoint.environment), .text(endpoint.url), .text(endpoint.secret),
                .text(endpoint.state), .date(endpoint.createdAt),
            ]
        )
    }

    /// A partner's endpoints, oldest first.
    public func listEndpoints(partnerID: String) throws(StoreError) -> [WebhookEndpointRecord] {
        try database.query(
            "SELECT \(Self.endpointColumns) FROM webhook_endpoints WHERE partner_id = $1 ORDER BY created_at, id", [.text(partnerID)]
        ).map(Self.endpoint)
    }

    /// Removes an endpoint and its pending deliveries.
    public func deleteEndpoint(partnerID: String, id: String) throws(StoreError) -> Bool {
        try database.execute("DELETE FROM webhook_endpoints WHERE partner_id = $1 AND id = $2", [.text(partnerID), .text(id)]) > 0
    }

    private static func endpoint(_ row: SQLRow) throws(StoreError) -> WebhookEndpointRecord {
        WebhookEndpointRecord(
            id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
            url: try row.text("url"), secret: try row.text("secret"), state: try row.text("state"), createdAt: try row.date("created_at")
        )
    }

    // MARK: Outbox

    /// Writes an event and a pending delivery to every enabled endpoint of its partner and environment; call it in the
    /// transaction of the change the event reports. Neither statement needs an answer: in a PostgreSQL transaction both go
    /// out with the next statement or the `COMMIT` (``SQLDatabase/enqueue(_:_:)``).
    ///
    /// Every event carries its verification token, sealed, until its deliveries are done; an event with no endpoint to go
    /// to keeps none: the event's insert keeps the token only if an enabled endpoint exists, and the deliveries' insert
    /// queues none for an event without it. (On PostgreSQL each statement sees the endpoints as they are when it runs:
    /// one enabled between the two gets the next event, and one disabled between them leaves a token with nothing to
    /// deliver it, which housekeeping erases.)
    public func enqueue(_ event: WebhookEventRecord) throws(StoreError) {
        try database.enqueue(
            """
            INSERT INTO webhook_events (id, partner_id, environment, type, body, created_at, sealed_token, token_offset)
            VALUES ($1, $2, $3, $4, $5, $6,
                    CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints WHERE partner_id = $2 AND environment = $3 AND state = $9) THEN $7 END,
                    $8)
            """,
            [
                .text(event.id), .text(event.partnerID), .text(event.environment), .text(event.type), .blob(event.body), .date(event.createdAt),
                .text(event.sealedToken), event.tokenOffset.map { .int($0) } ?? .null, .text(WebhookEndpointRecord.enabled),
            ]
        )
        try database.enqueue(
            """
            INSERT INTO webhook_deliveries (id, event_id, endpoint_id, state, attempts, next_attempt_at, created_at, updated_at)
            SELECT CAST($1 AS TEXT) || ':' || id, $1, id, $4, 0, $5, $5, $5 FROM webhook_endpoints
            WHERE partner_id = $2 AND environment = $3 AND state = $6
            AND EXISTS (SELECT 1 FROM webhook_events WHERE id = $1 AND sealed_token IS NOT NULL)
            """,
            [
                .text(event.id), .text(event.partnerID), .text(event.environment), .text(WebhookDeliveryRecord.pending),
                .date(event.createdAt), .text(WebhookEndpointRecord.enabled),
            ]
        )
    }

    /// Erases the sealed verification token of every event with no pending delivery left.
    /// - Returns: how many tokens were erased.
    @discardableResult
    public func eraseDeliveredTokens() throws(StoreError) -> Int {
        try database.execute(
            """
            UPDATE webhook_events SET sealed_token = NULL
            WHERE sealed_token IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND d.state = $1)
            """,
            [.text(WebhookDeliveryRecord.pending)]
        )
    }

    /// Up to `limit` deliveries due at `now` and not leased, soonest first.
    public func due(now: Date, limit: Int) throws(StoreError) -> [String] {
        try database.query(
            """
            SELECT id FROM webhook_deliveries
            WHERE state = $1 AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2)
            ORDER BY next_attempt_at, id LIMIT $3
            """,
            [.text(WebhookDeliveryRecord.pending), .date(now), .int(limit)]
        ).map { row throws(StoreError) in try row.text("id") }
    }

    /// Leases the due deliveries among `ids` to `owner` until `leaseUntil`, in one transaction; among concurrent claimers
    /// on any node exactly one wins each delivery.
    /// - Returns: the work this call won, in the order of `ids` (a delivery another node holds, or no longer due, is left out).
    public func claim(ids: [String], owner: String, now: Date, leaseUntil: Date) throws(StoreError) -> [WebhookWork] {
        guard !ids.isEmpty else { return [] }
        let list = sqlPlaceholders(ids.count, after: 4)
        return try database.transaction { connection throws(StoreError) -> [WebhookWork] in
            let claimed = try connection.query(
                """
                UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $3
                WHERE id IN (\(list)) AND state = $4 AND next_attempt_at <= $2 AND (lease_until IS NULL OR lease_until <= $2)
                RETURNING id
                """,
                [.text(owner), .date(now), .date(leaseUntil), .text(WebhookDeliveryRecord.pending)] + ids.map { .text($0) }
            ).map { row throws(StoreError) in try row.text("id") }
            guard !claimed.isEmpty else { return [] }
            let rows = try connection.query(
                """
                SELECT d.id AS delivery_id, d.attempts, e.id AS event_id, e.partner_id AS event_partner, e.environment AS event_environment,
                       e.type, e.body, e.created_at AS event_created, e.sealed_token, e.token_offset, w.id, w.partner_id, w.environment, w.url, w.secret, w.state, w.created_at
                FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
                WHERE d.id IN (\(sqlPlaceholders(claimed.count, after: 0)))
                """,
                claimed.map { .text($0) }
            )
            var work: [String: WebhookWork] = [:]
            for row in rows {
                let event = WebhookEventRecord(
                    id: try row.text("event_id"), partnerID: try row.text("event_partner"), environment: try row.text("event_environment"),
                    type: try row.text("type"), body: try row.blob("body"), createdAt: try row.date("event_created"),
                    sealedToken: try row.optionalText("sealed_token"), tokenOffset: try Self.offset(row)
                )
                let item = WebhookWork(deliveryID: try row.text("delivery_id"), attempts: Int(try row.integer("attempts")), event: event,
                                       endpoint: try Self.endpoint(row))
                work[item.deliveryID] = item
            }
            return ids.compactMap { work[$0] }
        }
    }

    /// How one attempt of a leased delivery ends: the attempt's record and where the delivery goes next.
    public struct Finish: Sendable {
        public let attempt: WebhookAttemptRecord
        /// `pending` again at `nextAttemptAt`, or `delivered`, `failed` or `abandoned`.
        public let state: String
        public let nextAttemptAt: Date
        /// A `410 Gone`: the endpoint is disabled and its other pending deliveries abandoned.
        public let disableEndpoint: Bool
        public let endpointID: String

        public init(attempt: WebhookAttemptRecord, state: String, nextAttemptAt: Date, disableEndpoint: Bool, endpointID: String) {
            self.attempt = attempt
            self.state = state
            self.nextAttemptAt = nextAttemptAt
            self.disableEndpoint = disableEndpoint
            self.endpointID = endpointID
        }
    }

    /// Records attempts of leased deliveries and moves each on (see ``Finish``), in one transaction. Only the lease
    /// owner can finish: a delivery whose lease `owner` lost (it stalled past it and another node took over) is left
    /// to the new owner.
    /// - Returns: how many of `finishes` `owner` still held the lease of, and recorded.
    @discardableResult
    public func finish(_ finishes: [Finish], owner: String, at now: Date) throws(StoreError) -> Int {
        guard !finishes.isEmpty else { return 0 }
        return try database.transaction { connection throws(StoreError) -> Int in
            var recorded: [String] = []
            var disabled: [String] = []
            for finish in finishes where try Self.finish(finish, owner: owner, at: now, on: connection) {
                recorded.append(finish.attempt.deliveryID)
                if finish.disableEndpoint { disabled.append(finish.endpointID) }
            }
            guard !recorded.isEmpty else { return 0 }
            // Delivered, failed or abandoned everywhere: an event's token is no longer needed. The deliveries of disabled
            // endpoints are asked for only when there are some (an `OR` on the unindexed endpoint reads every delivery).
            let ofDisabled = disabled.isEmpty ? "" : " OR endpoint_id IN (\(sqlPlaceholders(disabled.count, after: recorded.count + 1)))"
            try connection.execute(
                """
                UPDATE webhook_events SET sealed_token = NULL
                WHERE sealed_token IS NOT NULL
                AND id IN (SELECT event_id FROM webhook_deliveries WHERE id IN (\(sqlPlaceholders(recorded.count, after: 1)))\(ofDisabled))
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND d.state = $1)
                """,
                [.text(WebhookDeliveryRecord.pending)] + recorded.map { .text($0) } + disabled.map { .text($0) }
            )
            return recorded.count
        }
    }

    /// One finish (but the erasing of tokens), in the open transaction of `connection`; `false` when `owner` no longer
    /// holds the lease.
    private static func finish(_ finish: Finish, owner: String, at now: Date, on connection: any SQLConnection) throws(StoreError) -> Bool {
        let attempt = finish.attempt
        let moved = try connection.execute(
            """
            UPDATE webhook_deliveries SET state = $3, attempts = attempts + 1, next_attempt_at = $4, lease_owner = NULL,
                   lease_until = NULL, updated_at = $5
            WHERE id = $1 AND lease_owner = $2
            """,
            [.text(attempt.deliveryID), .text(owner), .text(finish.state), .date(finish.nextAttemptAt), .date(now)]
        )
        guard moved == 1 else { return false }
        try connection.execute(
            """
            INSERT INTO webhook_attempts (id, delivery_id, attempt, node, started_at, duration_ms, http_status, error)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            [
                .text(attempt.id), .text(attempt.deliveryID), .int(attempt.attempt), .text(attempt.node), .date(attempt.startedAt),
                .integer(attempt.durationMilliseconds), attempt.httpStatus.map { .int($0) } ?? .null, .text(attempt.error),
            ]
        )
        if finish.disableEndpoint {
            try connection.execute(
                "UPDATE webhook_endpoints SET state = $2 WHERE id = $1", [.text(finish.endpointID), .text(WebhookEndpointRecord.disabled)]
            )
            try connection.execute(
                "UPDATE webhook_deliveries SET state = $2, updated_at = $4 WHERE endpoint_id = $1 AND state = $3",
                [.text(finish.endpointID), .text(WebhookDeliveryRecord.abandoned), .text(WebhookDeliveryRecord.pending), .date(now)]
            )
        }
        return true
    }

    /// Deletes events created at or before `time` that have nothing left to deliver, with their deliveries and attempts.
    /// - Returns: how many events were deleted.
    @discardableResult
    public func purgeEvents(before time: Date) throws(StoreError) -> Int {
        try database.execute(
            """
            DELETE FROM webhook_events WHERE created_at <= $1
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND d.state = $2)
            """,
            [.date(time), .text(WebhookDeliveryRecord.pending)]
        )
    }

    /// The deliveries of an event.
    public func deliveries(eventID: String) throws(StoreError) -> [WebhookDeliveryRecord] {
        try database.query(
            "SELECT id, event_id, endpoint_id, state, attempts, next_attempt_at FROM webhook_deliveries WHERE event_id = $1 ORDER BY id",
            [.text(eventID)]
        ).map { row throws(StoreError) in
            WebhookDeliveryRecord(
                id: try row.text("id"), eventID: try row.text("event_id"), endpointID: try row.text("endpoint_id"),
                state: try row.text("state"), attempts: Int(try row.integer("attempts")), nextAttemptAt: try row.date("next_attempt_at")
            )
        }
    }

    /// The events of a partner, oldest first.
    public func events(partnerID: String) throws(StoreError) -> [WebhookEventRecord] {
        try database.query(
            """
            SELECT id, partner_id, environment, type, body, created_at, sealed_token, token_offset FROM webhook_events
            WHERE partner_id = $1 ORDER BY created_at, id
            """,
            [.text(partnerID)]
        ).map { row throws(StoreError) in
            WebhookEventRecord(
                id: try row.text("id"), partnerID: try row.text("partner_id"), environment: try row.text("environment"),
                type: try row.text("type"), body: try row.blob("body"), createdAt: try row.date("created_at"),
                sealedToken: try row.optionalText("sealed_token"), tokenOffset: try Self.offset(row)
            )
        }
    }

    private static func offset(_ row: SQLRow) throws(StoreError) -> Int? {
        guard let value = try row.optionalInteger("token_offset") else { return nil }
        guard let offset = Int(exactly: value), offset >= 0 else { throw StoreError(.invalidData, "token_offset out of range") }
        return offset
    }

    /// The attempts of a delivery, in order.
    public func attempts(deliveryID: String) throws(StoreError) -> [WebhookAttemptRecord] {
        try database.query(
            """
            SELECT id, delivery_id, attempt, node, started_at, duration_ms, http_status, error FROM webhook_attempts
            WHERE delivery_id = $1 ORDER BY attempt
            """,
            [.text(deliveryID)]
        ).map { row throws(StoreError) in
            WebhookAttemptRecord(
                id: try row.text("id"), deliveryID: try row.text("delivery_id"), attempt: Int(try row.integer("attempt")),
                node: try row.text("node"), startedAt: try row.date("started_at"), durationMilliseconds: try row.integer("duration_ms"),
                httpStatus: try row.optionalInteger("http_status").map { Int($0) }, error: try row.optionalText("error")
            )
        }
    }
}

/// An ES256 key that signs verification tokens; `id` is its JWK thumbprint (`kid`).
public struct SigningKeyRecord: Sendable, Hashable {
    public var id: String
    /// 1 for the first key, then one more per rotation.
    public var generation: Int64
    /// PKCS#8 PEM, sealed under the master key.
    public var privateKey: String
    public var createdAt: Date
    /// When it starts signing; published before then.
    public var activatesAt: Date

    public init(id: String, generation: Int64, privateKey: String, createdAt: Date, activatesAt: Date) {
        self.id = id
        self.generation = generation
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.activatesAt = activatesAt
    }
}

/// Stores the token signing keys of the deployment.
public struct SigningKeyRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Every key, oldest generation first.
    public func list() throws(StoreError) -> [SigningKeyRecord] {
        try database.query("SELECT id, generation, private_key, created_at, activates_at FROM signing_keys ORDER BY generation", [])
            .map { row throws(StoreError) in
                SigningKeyRecord(
                    id: try row.text("id"), generation: try row.integer("generation"), privateKey: try row.text("private_key"),
                    createdAt: try row.date("created_at"), activatesAt: try row.date("activates_at")
                )
            }
    }

    /// Inserts a key unless its generation exists (another node made it first).
    /// - Returns: whether this key was inserted.
    public func createIfAbsent(_ key: SigningKeyRecord) throws(StoreError) -> Bool {
        try database.execute(
            """
            INSERT INTO signing_keys (id, generation, private_key, created_at, activates_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (generation) DO NOTHING
            """,
            [.text(key.id), .integer(key.generation), .text(key.privateKey), .date(key.createdAt), .date(key.activatesAt)]
        ) > 0
    }
}
