import Foundation
import SesameStore

/// The outcome of counting one attempt against a limit.
public struct RateLimitDecision: Sendable, Hashable {
    public let allowed: Bool
    public let limit: Int
    /// Attempts left in the current window.
    public let remaining: Int
    /// When the current window ends.
    public let resetAt: Date
}

/// Fixed-window rate limits counted by the store: decided in the serving process's memory, and on PostgreSQL shared
/// through the database so they hold across every node (see ``RateLimitRepository``).
public struct RateLimiter: Sendable {
    let store: Store
    let clock: any SesameClock

    /// Counts one attempt for `key` and says whether it is within `limit` per `window` seconds.
    public func hit(_ key: String, limit: Int, window: TimeInterval) throws(SesameError) -> RateLimitDecision {
        try hit([(key, limit)], window: window)
    }

    /// Counts one attempt against each limit in turn, as one atomic step (in memory; on PostgreSQL now and then a
    /// bookkeeping statement that shares the counts), up to the first that refuses it (the later ones are then not
    /// counted, so a caller over its own limit spends nothing of a shared one).
    /// - Returns: the refusing limit's decision, or the last one's when every limit allows the attempt.
    public func hit(_ limits: [(key: String, limit: Int)], window: TimeInterval) throws(SesameError) -> RateLimitDecision {
        precondition(!limits.isEmpty, "at least one limit")
        let now = clock.now().timeIntervalSince1970
        let windowStart = (now / window).rounded(.down) * window
        let start = Date(timeIntervalSince1970: windowStart), resetAt = Date(timeIntervalSince1970: windowStart + window)
        let counts = try StoreErrors.map { () throws(StoreError) in try store.rateLimits.increment(limits, windowStart: start, window: window) }
        guard let count = counts.last, counts.count <= limits.count else {
            throw SesameError(.internalFailure, "rate-limit counters were not counted")
        }
        let limit = limits[counts.count - 1].limit
        return RateLimitDecision(allowed: count <= Int64(limit), limit: limit, remaining: max(0, limit - Int(clamping: count)), resetAt: resetAt)
    }
}
