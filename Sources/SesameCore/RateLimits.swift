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

/// Fixed-window rate limits counted in the store, so they hold across every node.
public struct RateLimiter: Sendable {
    let store: Store
    let clock: any SesameClock

    /// Counts one attempt for `key` and says whether it is within `limit` per `window` seconds.
    public func hit(_ key: String, limit: Int, window: TimeInterval) throws(SesameError) -> RateLimitDecision {
        try hit([(key, limit)], window: window)
    }

    /// Counts one attempt against each limit in turn, in one bookkeeping transaction (atomic; its commit does not wait
    /// for the disk), up to the first that refuses it (the later ones are then not counted, so a caller over its own
    /// limit spends nothing of a shared one).
    /// - Returns: the refusing limit's decision, or the last one's when every limit allows the attempt.
    public func hit(_ limits: [(key: String, limit: Int)], window: TimeInterval) throws(SesameError) -> RateLimitDecision {
        precondition(!limits.isEmpty, "at least one limit")
        let now = clock.now().timeIntervalSince1970
        let windowStart = (now / window).rounded(.down) * window
        let start = Date(timeIntervalSince1970: windowStart), resetAt = Date(timeIntervalSince1970: windowStart + window)
        return try StoreErrors.map { () throws(StoreError) -> RateLimitDecision in
            try store.bookkeeping { transaction throws(StoreError) -> RateLimitDecision in
                var decision: RateLimitDecision?
                for (key, limit) in limits {
                    let count = try transaction.rateLimits.increment(key: key, windowStart: start)
                    let current = RateLimitDecision(allowed: count <= Int64(limit), limit: limit, remaining: max(0, limit - Int(clamping: count)),
                                                    resetAt: resetAt)
                    decision = current
                    if !current.allowed { break }
                }
                guard let decision else { preconditionFailure("at least one limit") }
                return decision
            }
        }
    }
}
