import Foundation

/// Fixed-window rate-limit counters: on PostgreSQL rows of `rate_limits`, shared by every server node; on SQLite held
/// in the serving process's memory (one process serves an embedded database, so it sees every hit; a restart starts
/// the windows over; see `WindowCounters`).
public struct RateLimitRepository: Sendable {
    public let database: any SQLDatabase
    /// SQLite's counters (the store's); `nil` on PostgreSQL.
    let counters: WindowCounters?

    init(database: any SQLDatabase, counters: WindowCounters?) {
        self.database = database
        self.counters = counters
    }

    /// Adds one to the counter of `key` in the window starting at `windowStart` (``increment(_:windowStart:window:)``
    /// with one key and no limit).
    /// - Returns: the counter after this increment (1 for the first hit in the window).
    public func increment(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        guard let count = try increment([(key, Int.max)], windowStart: windowStart).last else {
            throw StoreError(.internalFailure, "rate-limit upsert returned no row")
        }
        return count
    }

    /// Adds one to the counter of each key in turn, in the window starting at `windowStart`, up to the first whose
    /// counter then exceeds its limit (the later ones are not counted), as one atomic step: on PostgreSQL one
    /// bookkeeping statement (its commit does not wait for the disk; see ``SQLDatabase/bookkeeping(_:_:)``), a chain of
    /// upserts each fed by the one before only while that one stayed within its limit, so a counted call costs one
    /// round trip; on SQLite one step of the process's counters.
    /// - Parameters:
    ///   - limits: distinct keys, each with the most hits its window allows.
    ///   - window: the window's length in seconds (SQLite's counters forget it once it ended, when they need the room);
    ///     an hour, the longest Sesame counts, unless told.
    /// - Returns: the counters after this increment, one per key counted, in order: fewer than `limits` when one
    ///   exceeded its limit (the last one returned).
    public func increment(_ limits: [(key: String, limit: Int)], windowStart: Date, window: TimeInterval = 3600) throws(StoreError) -> [Int64] {
        if let counters { return counters.increment(limits, windowStart: windowStart, window: window) }
        let upsert = "ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + 1 RETURNING count"
        // $1 is the window, then each key, and before each key after the first the limit of the one before it.
        var steps: [String] = [], parameters: [SQLValue] = [.date(windowStart)]
        for (index, (key, _)) in limits.enumerated() {
            let source: String
            if index == 0 {
                parameters.append(.text(key))
                source = "VALUES ($2, $1, 1)"
            } else {
                parameters += [.integer(Int64(limits[index - 1].limit)), .text(key)]
                let before = "c\(index - 1)"
                source = "SELECT $\(parameters.count), $1, 1 FROM \(before) WHERE \(before).count <= $\(parameters.count - 1)"
            }
            steps.append("c\(index) AS (INSERT INTO rate_limits (key, window_start, count) \(source) \(upsert))")
        }
        let columns = limits.indices.map { "(SELECT count FROM c\($0)) AS c\($0)" }.joined(separator: ", ")
        guard let row = try database.bookkeeping("WITH \(steps.joined(separator: ", ")) SELECT \(columns)", parameters).first else {
            throw StoreError(.internalFailure, "rate-limit upserts returned no row")
        }
        var counts: [Int64] = []
        for index in limits.indices {
            guard let count = try row.optionalInteger("c\(index)") else { break }
            counts.append(count)
        }
        return counts
    }

    /// The counter of `key` in the window starting at `windowStart` (0 when unused).
    public func current(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        if let counters { return counters.current(key: key, windowStart: windowStart) }
        return try database.queryFirst(
            "SELECT count FROM rate_limits WHERE key = $1 AND window_start = $2", [.text(key), .date(windowStart)]
        )?.integer("count") ?? 0
    }

    /// Deletes the counters of windows that started before `time`.
    /// - Returns: how many were deleted.
    @discardableResult
    public func prune(before time: Date) throws(StoreError) -> Int {
        if let counters { return counters.prune(before: time) }
        return try database.execute("DELETE FROM rate_limits WHERE window_start < $1", [.date(time)])
    }
}
