/// The one error ``SoftwareAuthenticator`` throws.
///
/// Each failure has a stable ``Code`` named after the `DOMException` a browser would raise for the same
/// reason, and a `detail` for logs. Equality compares the code only, so tests can match on it:
/// `#expect(throws: SoftwareAuthenticatorError.notAllowed) { ... }`.
public struct SoftwareAuthenticatorError: Error, Hashable, Sendable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// A stable, machine-readable identifier of the failure (for example `not_allowed`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as a snake_case string; never changes once released.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// The snake_case code.
        public var description: String { rawValue }

        /// None of the requested credential types and algorithms is supported (browsers: `NotSupportedError`).
        public static let notSupported = Code("not_supported")
        /// The authenticator already holds an excluded credential (browsers: `InvalidStateError`).
        public static let invalidState = Code("invalid_state")
        /// No credential the authenticator holds may be used (browsers: `NotAllowedError`).
        public static let notAllowed = Code("not_allowed")
        /// The options are malformed, for example a member that is not base64url (browsers: `TypeError`).
        public static let invalidOptions = Code("invalid_options")
    }

    /// What went wrong.
    public let code: Code
    /// The context of the failure; for logs and debugging.
    public let detail: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: the stable code of the failure.
    ///   - detail: what was wrong, for example "challenge is not base64url".
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The code only.
    public var description: String { "SoftwareAuthenticatorError(\(code))" }
    /// The code and the detail.
    public var debugDescription: String { "SoftwareAuthenticatorError(\(code)): \(detail)" }

    /// Whether two errors have the same code; the detail is ignored.
    public static func == (lhs: SoftwareAuthenticatorError, rhs: SoftwareAuthenticatorError) -> Bool {
        lhs.code == rhs.code
    }
    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// An error with ``Code/notSupported`` and no detail, for matching.
    public static let notSupported = SoftwareAuthenticatorError(.notSupported, "")
    /// An error with ``Code/invalidState`` and no detail, for matching.
    public static let invalidState = SoftwareAuthenticatorError(.invalidState, "")
    /// An error with ``Code/notAllowed`` and no detail, for matching.
    public static let notAllowed = SoftwareAuthenticatorError(.notAllowed, "")
    /// An error with ``Code/invalidOptions`` and no detail, for matching.
    public static let invalidOptions = SoftwareAuthenticatorError(.invalidOptions, "")
}

extension SoftwareAuthenticatorError {
    /// An error with this code and no detail, for matching in `catch` and tests.
    public static func code(_ code: Code) -> SoftwareAuthenticatorError { SoftwareAuthenticatorError(code, "") }
}
