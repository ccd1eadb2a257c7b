import Foundation
import SesameStore

/// How many expired rows one sweep removed.
public struct SweepResult: Sendable, Hashable {
    public let challenges: Int
    public let sessions: Int
    public let tokens: Int
    public let rateLimitWindows: Int
    /// Verification requests purged a day after they expired (completed ones only lose their metadata).
    public let verificationRequests: Int
    /// Expired partner grants.
    public let grants: Int
    /// Webhook events a week old with nothing left to deliver.
    public let webhookEvents: Int
    /// Verification tokens erased: from requests whose token expired, and from events with nothing left to deliver.
    public let verificationTokens: Int
    /// Authsignal actions past their retention: an hour for a sign-in that never named its user, else 30 days.
    public var authsignalActions: Int = 0
}

/// Removes what can no longer be used: expired challenges (unfinished ceremonies) an hour after they expired (until
/// then, finishing one still says it expired rather than that it never existed), expired sessions and tokens, and
/// rate-limit windows that ended, expired partner grants, verification requests a day after they expired, and webhook
/// events a week old with nothing left to deliver; verification tokens once expired (requests) or delivered (webhooks);
/// Authsignal actions past their retention; on SQLite, the call counts of expired verification requests.
/// Any node may sweep at any time; sweeps are idempotent.
public struct Housekeeping: Sendable {
    let store: Store
    let clock: any SesameClock

    /// The longest rate-limit window any rule uses; older windows no longer count.
    public static let longestRateWindow: TimeInterval = 3600
    /// How long an expired challenge is kept, so late finishes hear `expired`.
    public static let challengeGrace: TimeInterval = 3600
    /// How long verification requests are kept in full after they expire.
    public static let requestRetention: TimeInterval = 86_400
    /// How long delivered or failed webhook events (and their attempt records) are kept: past the whole retry schedule.
    public static let webhookRetention: TimeInterval = 7 * 86_400
    /// How long an Authsignal sign-in action that never learnt its user is kept (its challenges live 5 minutes).
    public static let userlessActionRetention: TimeInterval = 3600
    /// How long any other Authsignal action is kept for `get_action` (its tokens live 10 minutes).
    public static let actionRetention: TimeInterval = 30 * 86_400

    /// Deletes every expired row now.
    public func sweep() throws(SesameError) -> SweepResult {
        let now = clock.now()
        // An expired request refuses every call whatever its count (SQLite's counts in memory; not among the figures).
        store.requestCallCounters?.removeExpired(before: now)
        return try StoreErrors.map { () throws(StoreError) in
            SweepResult(
                challenges: try store.challenges.deleteExpired(before: now.addingTimeInterval(-Self.challengeGrace))
                    + (store.pendingChallenges?.removeExpired(before: now.addingTimeInterval(-Self.challengeGrace)) ?? 0),
                sessions: try store.sessions.deleteExpired(before: now),
                tokens: try store.tokens.deleteExpired(before: now) + (store.pendingTokens?.removeExpired(before: now) ?? 0),
                rateLimitWindows: try store.rateLimits.prune(before: now.addingTimeInterval(-Self.longestRateWindow)),
                verificationRequests: try store.verificationRequests.purge(before: now.addingTimeInterval(-Self.requestRetention)),
                grants: try store.partners.deleteExpiredGrants(before: now),
                webhookEvents: try store.webhooks.purgeEvents(before: now.addingTimeInterval(-Self.webhookRetention)),
                verificationTokens: try store.verificationRequests.eraseTokens(
                    completedBefore: now.addingTimeInterval(-Double(CompletionRoutine.tokenLifetime))
                ) + store.webhooks.eraseDeliveredTokens(),
                authsignalActions: try store.authsignal.deleteActions(userlessBefore: now.addingTimeInterval(-Self.userlessActionRetention),
                                                                      before: now.addingTimeInterval(-Self.actionRetention))
                    + (store.pendingActions?.removeExpired(createdBefore: now.addingTimeInterval(-Self.userlessActionRetention)) ?? 0))
        }
    }
}
