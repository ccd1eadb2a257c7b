import Foundation

/// Fixed-window counters shared by every server node.
public struct RateLimitRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Adds one to the counter of `key` in the window starting at `windowStart`, in one atomic upsert (bookkeeping:
    /// its commit does not wait for the disk; see ``SQLDatabase/bookkeeping(_:_:)``).
    /// - Returns: the counter after this increment (1 for the first hit in the window).
    public func increment(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        let row = try database.bookkeeping(
            """
            INSERT INTO rate_limits (key, window_start, count) VALUES ($1, $2, 1)
            ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1
            RETURNING count
            """,
            [.text(key), .date(windowStart)]
        ).first
        guard let row else { throw StoreError(.internalFailure, "rate-limit upsert returned no row") }
        return try row.integer("count")
    }

    /// The counter of `key` in the window starting at `windowStart` (0 when unused).
    public func current(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        try database.queryFirst(
            "SELECT count FROM rate_limits WHERE key = $1 AND window_start = $2", [.text(key), .date(windowStart)]
        )?.integer("count") ?? 0
    }

    /// Deletes the counters of windows that started before `time`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func prune(before time: Date) throws(StoreError) -> Int {
        try database.execute("DELETE FROM rate_limits WHERE window_start < $1", [.date(time)])
    }
}
