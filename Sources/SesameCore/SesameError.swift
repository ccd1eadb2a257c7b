import WebAuthn

/// The one error the domain throws; each face maps its ``Code`` to its own wire shape and status.
///
/// `description` shows the code only; `detail` (for logs and debugging) stays in `debugDescription`.
public struct SesameError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable reason.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// An argument is missing or malformed.
        public static let invalidArgument = Code("invalid_argument")
        /// The thing named does not exist (or is not visible to the caller).
        public static let notFound = Code("not_found")
        /// The change conflicts with existing state (a duplicate, or a relying party ID in use).
        public static let conflict = Code("conflict")
        /// No valid credentials were presented.
        public static let unauthorized = Code("unauthorized")
        /// The credentials are valid but lack the scope needed.
        public static let forbidden = Code("forbidden")
        /// Too many attempts in the current window.
        public static let rateLimited = Code("rate_limited")
        /// A challenge or token is unknown, expired or already used.
        public static let expired = Code("expired")
        /// A per-user limit (such as passkeys) is reached.
        public static let limitReached = Code("limit_reached")
        /// A sign-in credential (email and password, for example) is wrong.
        public static let invalidCredentials = Code("invalid_credentials")
        /// The user is blocked.
        public static let blocked = Code("blocked")
        /// The authentication method is switched off, or the project cannot run it (no usable relying party).
        public static let unsupported = Code("unsupported")
        /// The project cannot run a passkey ceremony: no relying party ID, or no platform gives it an origin. The
        /// detail says what to add and names only the project's own configuration, so a face may show it.
        public static let noRelyingParty = Code("no_relying_party")
        /// The session must have signed in (or completed MFA) recently to do this.
        public static let reauthenticationRequired = Code("reauthentication_required")
        /// A WebAuthn response failed verification.
        public static let verificationFailed = Code("verification_failed")
        /// A genuine assertion, but by the passkey of someone other than the person the ceremony was for.
        public static let wrongIdentity = Code("wrong_identity")
        /// A genuine assertion without user verification, where the policy checks it after identity.
        public static let userNotVerified = Code("user_not_verified")
        /// A JSON Web Token is malformed, forged, expired, or its session ended.
        public static let invalidJWT = Code("invalid_jwt")
        /// Stored secrets need the master key and none is configured (`SESAME_MASTER_KEY`, `--master-key-file`).
        public static let masterKeyRequired = Code("master_key_required")
        /// Stored secrets are sealed under a master key that is not configured, or the configured key does not open them.
        public static let masterKeyMismatch = Code("master_key_mismatch")
        /// The database cannot be reached.
        public static let unavailable = Code("unavailable")
        /// A broken invariant; never expected.
        public static let internalFailure = Code("internal_failure")
    }

    public let code: Code
    /// What exactly was wrong; never contains secrets, challenges or credential IDs.
    public let detail: String
    /// For `rate_limited`: the limit that was exceeded, so a face can say when to come back.
    public let rateLimit: RateLimitDecision?
    /// Why, as a stable code for operators (metrics, request log): the WebAuthn core's code for a failed check
    /// (`origin_mismatch`, `sign_count_regression`), a domain reason (`unknown_credential`), or else ``code``'s
    /// raw value. Never sent to clients: it says which step failed.
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - reason: the operator's reason code; ``code``'s raw value when `nil`.
    public init(_ code: Code, _ detail: String, reason: String? = nil, rateLimit: RateLimitDecision? = nil) {
        self.code = code
        self.detail = detail
        self.reason = reason ?? code.rawValue
        self.rateLimit = rateLimit
    }

    /// `verification_failed`, keeping the WebAuthn core's stable code as the ``reason`` and its step as the detail.
    public static func verification(_ error: WebAuthnError) -> SesameError {
        SesameError(.verificationFailed, error.detail, reason: error.code.rawValue)
    }

    public var description: String { "SesameError(\(code))" }
    public var debugDescription: String { "SesameError(\(code)): \(detail)" }
    public static func == (lhs: SesameError, rhs: SesameError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension SesameError {
    /// An error with this code and no detail, for matching in `catch` and tests.
    public static func code(_ code: Code) -> SesameError { SesameError(code, "") }
}
