import SesameCore

/// BotShield's `{outcome, code?}` of the public endpoints (spec §1.5); codes never identify anyone.
public struct InlineOutcome: Sendable, Hashable {
    /// `verified`, `wrong_identity`, `expired` or `failed`.
    public let outcome: String
    /// The reason of an `expired` or `failed` outcome.
    public let code: String?

    public static let verified = InlineOutcome(outcome: "verified", code: nil)
    public static let wrongIdentity = InlineOutcome(outcome: "wrong_identity", code: nil)
    public static let challengeExpired = InlineOutcome(outcome: "expired", code: "challenge_expired")
    public static let requestExpired = InlineOutcome(outcome: "expired", code: "request_expired")
    public static let linkChanged = InlineOutcome(outcome: "failed", code: "link_changed")
    public static let assertionInvalid = InlineOutcome(outcome: "failed", code: "assertion_invalid")
    public static let userNotVerified = InlineOutcome(outcome: "failed", code: "user_not_verified")
    public static let unknownRequest = InlineOutcome(outcome: "failed", code: "unknown_request")
    public static let requestClosed = InlineOutcome(outcome: "failed", code: "request_closed")
    public static let completionFailed = InlineOutcome(outcome: "failed", code: "completion_failed")
    /// Hand-off only: a link conflict, and the person declining.
    public static let alreadyLinked = InlineOutcome(outcome: "failed", code: "already_linked")
    public static let declined = InlineOutcome(outcome: "failed", code: "user_denied")

    /// Every code `passkey-options` and `passkey-complete` can emit.
    public static let allCodes: Set<String> = [
        "challenge_expired", "request_expired", "link_changed", "assertion_invalid", "user_not_verified", "unknown_request",
        "request_closed", "completion_failed",
    ]

    /// The wire form of a domain verdict.
    public init(_ verdict: InlineVerdict) {
        self = switch verdict {
        case .verified: .verified
        case .wrongIdentity: .wrongIdentity
        case .challengeExpired: .challengeExpired
        case .requestExpired: .requestExpired
        case .linkChanged: .linkChanged
        case .assertionInvalid: .assertionInvalid
        case .userNotVerified: .userNotVerified
        case .unknownRequest: .unknownRequest
        case .requestClosed: .requestClosed
        case .completionFailed: .completionFailed
        case .alreadyLinked: .alreadyLinked
        case .declined: .declined
        }
    }

    /// The `reason` of a `passkey-options` fallback.
    public static func reason(of fallback: InlineFallback) -> String {
        switch fallback {
        case .notLinked: "not_linked"
        case .noPasskey: "no_passkey"
        }
    }

    private init(outcome: String, code: String?) {
        self.outcome = outcome
        self.code = code
    }
}
