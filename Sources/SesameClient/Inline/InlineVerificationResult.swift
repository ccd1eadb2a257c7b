public import Foundation

/// What an inline verification ends in: the person confirmed, or the app shows a panel that keeps the hand-off.
///
/// The URLs come from the server's `passkey-options` answer, never from the SDK: `url` is the hand-off for
/// this request ("Use the app instead"), `setupURL` is where the person adds a passkey. Either is `nil` when
/// the server did not send one, as in a closed request or an answer that never arrived.
///
/// A `verified` result tells the app it may carry on; it must not unlock anything by itself. The partner's
/// server decides, from the webhook or the status call and the signed token.
public enum InlineVerificationResult: Sendable, Hashable {
    /// The person unlocked a passkey of the linked account and the request is completed.
    case verified
    /// Show this panel; every panel keeps a way through with `url`.
    case panel(InlinePanel, url: URL?, setupURL: URL?)
}

/// The panel an app shows when the inline passkey did not verify the person.
///
/// `code` members carry the server's `code` string (such as `challenge_expired` or `assertion_invalid`),
/// which never identifies anyone.
public enum InlinePanel: Sendable, Hashable {
    /// None of the person's passkeys is on this device: offer "Set up a passkey" (`setupURL`) and the hand-off.
    case noCredential
    /// The person dismissed the passkey sheet: offer the same two choices as ``noCredential``; keep the retry.
    case cancelled
    /// The account is not linked to a person (`fallback` `not_linked`, or `link_changed` mid-way).
    case notLinked
    /// The linked person has no passkey yet (`fallback` `no_passkey`): offer "Set up a passkey" (`setupURL`).
    case noPasskey
    /// This app is not associated with the relying party, or the device cannot run passkeys: offer the hand-off.
    case unsupported
    /// The challenge (`challenge_expired`: run again) or the request (`request_expired`: start over) expired.
    case expired(code: String?)
    /// The request cannot complete, the answer did not check out, or the server could not be reached or read.
    case failed(code: String?)
    /// The passkey chosen belongs to someone else; nothing changed: offer the hand-off.
    case wrongIdentity
}

extension InlinePanel {
    /// The panel for an `{ outcome, code }` answer other than `verified`; unknown outcomes count as `failed`.
    init(outcome: String?, code: String?) {
        if code == "link_changed" {
            self = .notLinked
            return
        }
        switch outcome {
        case "expired": self = .expired(code: code)
        case "wrong_identity": self = .wrongIdentity
        default: self = .failed(code: code)
        }
    }

    /// The panel for a `fallback` answer's `reason`; an unknown reason counts as `failed`.
    init(fallbackReason reason: String?) {
        switch reason {
        case "not_linked": self = .notLinked
        case "no_passkey": self = .noPasskey
        default: self = .failed(code: nil)
        }
    }

    /// The panel for a device-side failure.
    init(_ error: InlineAuthenticatorError) {
        switch error {
        case .noCredential: self = .noCredential
        case .cancelled: self = .cancelled
        case .notAssociated, .notSupported: self = .unsupported
        case .failed: self = .failed(code: nil)
        }
    }
}
