import Foundation

/// When to retry a webhook delivery, and what an attempt's outcome means (Standard Webhooks' example schedule).
///
/// Ten attempts in all: immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (about
/// 75.5 hours from first to last), then the delivery is marked failed. Each delay after the first may be stretched
/// or shrunk by up to 10% (jitter) so that retries of many messages do not arrive in lockstep.
public enum WebhookSchedule {
    /// The delay before each attempt, in seconds, measured from the previous attempt; index 0 is the first attempt.
    public static let delays: [TimeInterval] = [0, 5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400]

    /// The number of attempts before giving up.
    public static var maximumAttempts: Int { delays.count }

    /// The largest jitter, as a fraction of the delay (±10%).
    public static let maximumJitter = 0.1

    /// What to do after an attempt.
    public enum Outcome: Hashable, Sendable {
        /// A 2xx answer: the delivery succeeded; stop.
        case delivered
        /// `410 Gone`: the receiver wants no more webhooks; stop and disable the endpoint.
        case disableEndpoint
        /// Anything else (other statuses, including 3xx, or no answer at all): try again per the schedule.
        case retry
    }

    /// The delay before the next attempt, or `nil` to give up.
    ///
    /// - Parameters:
    ///   - attempt: How many attempts were already made (0 before the first; 1 after the immediate attempt, which
    ///     gives 5 s; 9 gives 24 h; 10 or more gives `nil`).
    ///   - jitter: A fraction in -0.1...0.1 (values outside are clamped) applied as `delay × (1 + jitter)`; pass
    ///     ``randomJitter()`` in production and a fixed value in tests. The immediate first attempt gets no jitter.
    /// - Returns: Seconds to wait, or `nil` when all ``maximumAttempts`` attempts were made.
    public static func nextAttemptDelay(afterAttempt attempt: Int, jitter: Double) -> TimeInterval? {
        guard attempt >= 0, attempt < delays.count else { return nil }
        let clamped = min(max(jitter.isNaN ? 0 : jitter, -maximumJitter), maximumJitter)
        return delays[attempt] * (1 + clamped)
    }

    /// A uniformly random jitter in -0.1...0.1 for ``nextAttemptDelay(afterAttempt:jitter:)``.
    public static func randomJitter() -> Double {
        Double.random(in: -maximumJitter...maximumJitter)
    }

    /// Classifies an attempt's result.
    /// - Parameter status: The HTTP status received, or `nil` when there was none (timeout, connection refused,
    ///   TLS failure, address refused by the SSRF guard).
    /// - Returns: ``Outcome/delivered`` for 200...299, ``Outcome/disableEndpoint`` for 410, else ``Outcome/retry``.
    public static func classify(status: Int?) -> Outcome {
        switch status {
        case .some(200...299): .delivered
        case .some(410): .disableEndpoint
        default: .retry
        }
    }
}
