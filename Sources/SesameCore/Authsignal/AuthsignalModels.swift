import Foundation

/// The state of a tracked action (Authsignal's `UserActionState`).
public enum ActionState: String, Sendable, CaseIterable {
    case allow = "ALLOW"
    case block = "BLOCK"
    case challengeRequired = "CHALLENGE_REQUIRED"
    case challengeSucceeded = "CHALLENGE_SUCCEEDED"
    case challengeFailed = "CHALLENGE_FAILED"
    case reviewRequired = "REVIEW_REQUIRED"
    case reviewSucceeded = "REVIEW_SUCCEEDED"
    case reviewFailed = "REVIEW_FAILED"

    /// The states a passkey ceremony may move on from; a state the backend decided (`BLOCK`, a review) stays.
    static let ceremonyOpen: [ActionState] = [.allow, .challengeRequired, .challengeFailed, .challengeSucceeded]
}

/// What a track or result token allows on the client API (Authsignal's authenticator scopes).
public enum AuthenticatorScope: String, Sendable, CaseIterable {
    case read = "read:authenticators"
    case add = "add:authenticators"
    case update = "update:authenticators"
    case remove = "remove:authenticators"
}

/// The verification method of a passkey.
public let passkeyVerificationMethod = "PASSKEY"

/// A tracked action as the server API shows it.
public struct AuthsignalAction: Sendable, Hashable {
    public let id: String
    /// The integrator's user ID; `nil` until a usernameless sign-in names the user.
    public let userID: String?
    public let actionCode: String
    public let idempotencyKey: String
    public let state: ActionState
    public let stateUpdatedAt: Date
    public let createdAt: Date
    /// `PASSKEY` once a passkey ceremony completed it.
    public let verificationMethod: String?
}

/// A user of the Authsignal face, by the integrator's user ID; an unknown user is not enrolled.
public struct AuthsignalUser: Sendable, Hashable {
    public let userID: String
    public let email: String?
    public let emailVerified: Bool
    public let phoneNumber: String?
    public let phoneNumberVerified: Bool
    public let username: String?
    public let displayName: String?
    /// A flat JSON object, as text.
    public let custom: String?
    public let locale: String?
    /// The verification methods of the user's authenticators, without duplicates, `PASSKEY` first.
    public let enrolledVerificationMethods: [String]

    /// Whether the user has any authenticator.
    public var isEnrolled: Bool { !enrolledVerificationMethods.isEmpty }
}

/// The attributes a backend may set on a user; `nil` leaves an attribute as it is.
public struct AuthsignalUserAttributes: Sendable, Hashable {
    public var email: String?
    public var emailVerified: Bool?
    public var phoneNumber: String?
    public var phoneNumberVerified: Bool?
    public var username: String?
    public var displayName: String?
    /// A flat JSON object, as text.
    public var custom: String?
    public var locale: String?

    /// Attributes to set.
    public init(email: String? = nil, emailVerified: Bool? = nil, phoneNumber: String? = nil, phoneNumberVerified: Bool? = nil,
                username: String? = nil, displayName: String? = nil, custom: String? = nil, locale: String? = nil) {
        self.email = email
        self.emailVerified = emailVerified
        self.phoneNumber = phoneNumber
        self.phoneNumberVerified = phoneNumberVerified
        self.username = username
        self.displayName = displayName
        self.custom = custom
        self.locale = locale
    }
}

/// One authenticator of a user: a passkey, or a verified contact the backend enrolled.
public struct AuthsignalAuthenticator: Sendable, Hashable {
    /// The passkey's WebAuthn details.
    public struct Passkey: Sendable, Hashable {
        public let credentialID: [UInt8]
        public let deviceID: String?
        public let name: String?
        public let aaguid: String?
        public let backupEligible: Bool
        public let backedUp: Bool
        public let transports: [String]
    }

    public let userID: String
    public let id: String
    public let verificationMethod: String
    public let createdAt: Date
    public let lastVerifiedAt: Date?
    public let username: String?
    public let displayName: String?
    public let email: String?
    public let phoneNumber: String?
    /// Present for passkeys.
    public let passkey: Passkey?
}

/// What `POST /validate` answers: whether the token's action completed a challenge, and the action's state.
public struct ActionValidation: Sendable, Hashable {
    public let isValid: Bool
    /// The action, when the token names one of the tenant's.
    public let action: AuthsignalAction?
    /// Why it is not valid (`invalid_token`, `expired_token`, `user_mismatch`, `action_mismatch`, ...); `nil` when valid.
    public let error: String?
}

/// A tracked action with the token the app takes to the client API.
public struct TrackedAction: Sendable, Hashable {
    public let action: AuthsignalAction
    public let token: String
    public let user: AuthsignalUser
}
