/// The outcome of an Authsignal SDK call: `data` on success, else `error` and `errorCode` (authsignal-ios 2.13.0's
/// shape, with public initialisers so apps can fake responses in tests, and all three fields always kept).
public struct AuthsignalResponse<T> {
    /// The result; `nil` on failure (and for a sign-up that ignored an existing passkey).
    public let data: T?
    /// A human-readable description of the failure.
    public let error: String?
    /// A stable code: one of ``SdkErrorCode``, or the server's `errorCode` passed through.
    public let errorCode: String?

    /// A response with every field given.
    public init(data: T?, error: String?, errorCode: String?) {
        self.data = data
        self.error = error
        self.errorCode = errorCode
    }

    /// A success.
    public init(data: T?) { self.init(data: data, error: nil, errorCode: nil) }

    /// A failure.
    public init(error: String, errorCode: String? = nil) { self.init(data: nil, error: error, errorCode: errorCode) }
}

extension AuthsignalResponse: Sendable where T: Sendable {}

/// What a passkey sign-up returns: the result token, for the backend's `validate`.
public struct SignUpResponse: Codable, Sendable, Hashable {
    public let token: String?

    /// A response carrying `token`.
    public init(token: String?) { self.token = token }
}

/// What a passkey sign-in returns.
public struct SignInResponse: Sendable, Hashable {
    public let isVerified: Bool
    /// The result token, for the backend's `validate`.
    public let token: String?
    public let userId: String?
    public let userAuthenticatorId: String?
    public let username: String?
    /// The server's `userDisplayName`.
    public let displayName: String?

    /// A response with every field given.
    public init(isVerified: Bool, token: String? = nil, userId: String? = nil, userAuthenticatorId: String? = nil, username: String? = nil,
                displayName: String? = nil) {
        self.isVerified = isVerified
        self.token = token
        self.userId = userId
        self.userAuthenticatorId = userAuthenticatorId
        self.username = username
        self.displayName = displayName
    }
}

/// The states of a tracked action, as strings (authsignal-ios `UserActionState`).
public struct UserActionState: Sendable {
    public static let allow = "ALLOW"
    public static let block = "BLOCK"
    public static let challengeRequired = "CHALLENGE_REQUIRED"
    public static let challengeSucceeded = "CHALLENGE_SUCCEEDED"
    public static let challengeFailed = "CHALLENGE_FAILED"
    public static let reviewRequired = "REVIEW_REQUIRED"
    public static let reviewSucceeded = "REVIEW_SUCCEEDED"
    public static let reviewFailed = "REVIEW_FAILED"
}

/// The error codes the SDK itself produces; server codes (`expired_token`, `unknown_credential`, ...) pass through
/// as they came in ``AuthsignalResponse/errorCode``.
public enum SdkErrorCode: String, Sendable, CaseIterable {
    /// `signUp` without a token argument and none set.
    case tokenNotSet = "token_not_set"
    /// No answer, or an answer that is not JSON.
    case networkError = "network_error"
    /// An error answer without a description.
    case apiError = "api_error"
    /// The person dismissed the passkey sheet, or has no passkey here.
    case userCanceled = "user_canceled"
    /// The device already holds a passkey for this account.
    case matchedExcludedCredential = "matched_excluded_credential"
    /// Another passkey ceremony of this SDK instance is still running, or the authenticator failed.
    case sdkError = "sdk_error"
    /// The device cannot run passkeys.
    case notSupported = "not_supported"
}
