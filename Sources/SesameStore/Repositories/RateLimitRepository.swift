import Foundation

/// Fixed-window rate-limit counters, each hit decided by this process's counters (`WindowCounters`) at no round trip.
/// On SQLite those are the only counts (one process serves an embedded database, so it sees every hit; a restart
/// starts the windows over). On PostgreSQL every node also shares its counts in rows of `rate_limits`: a node writes
/// its hits of a key with the first hit of a window, then at most every ``sharingInterval`` while the key is in the
/// first half of its limit, and with every hit past the half; each write reads back the total of every node, and the
/// hit that wrote is decided on it. So one node alone counts exactly; across nodes, a hit past the half of a limit is
/// decided on every node's count but the others' hits of the last interval that were in the first half. A shared
/// total that refuses a hit the node's own view allowed ends the chain there, but the keys after it keep the hit.
public struct RateLimitRepository: Sendable {
    public let database: any SQLDatabase
    /// The store's counters.
    let counters: WindowCounters

    /// How long a node on PostgreSQL counts a key in memory before it shares its hits again.
    static let sharingInterval: Duration = .milliseconds(100)

    init(database: any SQLDatabase, counters: WindowCounters) {
        self.database = database
        self.counters = counters
    }

    /// Adds one to the counter of `key` in the window starting at `windowStart` (``increment(_:windowStart:window:)``
    /// with one key and no limit).
    /// - Returns: the counter after this increment (1 for the first hit in the window).
    public func increment(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        guard let count = try increment([(key, Int.max)], windowStart: windowStart).last else {
            throw StoreError(.internalFailure, "rate-limit counter returned no count")
        }
        return count
    }

    /// Adds one to the counter of each key in turn, in the window starting at `windowStart`, up to the first whose
    /// counter then exceeds its limit (the later ones are not counted), as one atomic step of this process's counters;
    /// on PostgreSQL the counted keys that are due are then shared in one bookkeeping statement (its commit does not
    /// wait for the disk; see ``SQLDatabase/bookkeeping(_:_:)``).
    /// - Parameters:
    ///   - limits: distinct keys, each with the most hits its window allows.
    ///   - window: the window's length in seconds (the counters forget it once it ended, when they need the room); an
    ///     hour, the longest Sesame counts, unless told.
    /// - Returns: the counters after this increment, one per key counted, in order: fewer than `limits` when one
    ///   exceeded its limit (the last one returned).
    /// - Throws: when shared counts cannot be written (the hits stay counted here, and are written with the next).
    public func increment(_ limits: [(key: String, limit: Int)], windowStart: Date, window: TimeInterval = 3600) throws(StoreError) -> [Int64] {
        let (counts, due) = counters.increment(limits, windowStart: windowStart, window: window)
        guard !due.isEmpty else { return counts }
        let totals: [String: Int64]
        do {
            totals = try share(due, windowStart: windowStart)
        } catch {
            counters.unshared(due, windowStart: windowStart)
            throw error
        }
        counters.shared(totals, windowStart: windowStart)
        // A shared key is decided on the total of every node; one that this shows over its limit ends the chain there
        // (the keys after it keep this node's hit, already counted).
        var decided: [Int64] = []
        for (index, count) in counts.enumerated() {
            let total = max(count, totals[limits[index].key] ?? count)
            decided.append(total)
            if total > Int64(limits[index].limit) { break }
        }
        return decided
    }

    /// Adds each key's unwritten hits to its shared row, in one statement (keys in order, so that two nodes sharing
    /// the same keys lock their rows in the same order); returns the totals of every node.
    private func share(_ due: [WindowCounters.Unwritten], windowStart: Date) throws(StoreError) -> [String: Int64] {
        let hits = Dictionary(due.map { ($0.key, $0.hits) }, uniquingKeysWith: +)
        var rows: [String] = [], parameters: [SQLValue] = [.date(windowStart)]
        for (key, count) in hits.sorted(by: { $0.key < $1.key }) {
            parameters += [.text(key), .integer(count)]
            rows.append("($\(parameters.count - 1), $1, $\(parameters.count))")
        }
        let sql = "INSERT INTO rate_limits (key, window_start, count) VALUES \(rows.joined(separator: ", ")) "
            + "ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limits.count + excluded.count RETURNING key, count"
        var totals: [String: Int64] = [:]
        for row in try database.bookkeeping(sql, parameters) {
            totals[try row.text("key")] = try row.integer("count")
        }
        return totals
    }

    /// The counter of `key` in the window starting at `windowStart` (0 when unused): this process's view of it, else on
    /// PostgreSQL the shared row.
    public func current(key: String, windowStart: Date) throws(StoreError) -> Int64 {
        if let count = counters.current(key: key, windowStart: windowStart) { return count }
        guard counters.sharingInterval != nil else { return 0 }
        return try database.queryFirst(
            "SELECT count FROM rate_limits WHERE key = $1 AND window_start = $2", [.text(key), .date(windowStart)]
        )?.integer("count") ?? 0
    }

    /// Deletes the counters of windows that started before `time`: this process's, and on PostgreSQL the shared rows.
    /// - Returns: how many were deleted (on PostgreSQL, how many shared rows).
    @discardableResult
    public func prune(before time: Date) throws(StoreError) -> Int {
        let pruned = counters.prune(before: time)
        guard counters.sharingInterval != nil else { return pruned }
        return try database.execute("DELETE FROM rate_limits WHERE window_start < $1", [.date(time)])
    }
}
