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
        let now = clock.now().timeIntervalSince1970
        let windowStart = (now / window).rounded(.down) * window
        let count = try StoreErrors.map { () throws(StoreError) in
            try store.rateLimits.increment(key: key, windowStart: Date(timeIntervalSince1970: windowStart))
        }
        return RateLimitDecision(allowed: count <= Int64(limit), limit: limit, remaining: max(0, limit - Int(count)),
                                 resetAt: Date(timeIntervalSince1970: windowStart + window))
    }
}
