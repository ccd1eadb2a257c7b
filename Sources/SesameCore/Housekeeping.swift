import Foundation
import SesameStore

/// How many expired rows one sweep removed.
public struct SweepResult: Sendable, Hashable {
    public let challenges: Int
    public let sessions: Int
    public let tokens: Int
    public let rateLimitWindows: Int
}

/// Removes what can no longer be used: expired challenges (unfinished ceremonies) an hour after they expired (until
/// then, finishing one still says it expired rather than that it never existed), expired sessions and tokens, and
/// rate-limit windows that ended. Any node may sweep at any time; sweeps are idempotent.
public struct Housekeeping: Sendable {
    let store: Store
    let clock: any SesameClock

    /// The longest rate-limit window any rule uses; older windows no longer count.
    public static let longestRateWindow: TimeInterval = 3600
    /// How long an expired challenge is kept, so late finishes hear `expired`.
    public static let challengeGrace: TimeInterval = 3600

    /// Deletes every expired row now.
    public func sweep() throws(SesameError) -> SweepResult {
        let now = clock.now()
        return try StoreErrors.map { () throws(StoreError) in
            SweepResult(
                challenges: try store.challenges.deleteExpired(before: now.addingTimeInterval(-Self.challengeGrace)), sessions: try store.sessions.deleteExpired(before: now),
                tokens: try store.tokens.deleteExpired(before: now),
                rateLimitWindows: try store.rateLimits.prune(before: now.addingTimeInterval(-Self.longestRateWindow)))
        }
    }
}
