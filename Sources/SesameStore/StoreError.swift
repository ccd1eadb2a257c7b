/// The one error every storage operation throws.
///
/// Each failure has a stable ``Code`` that callers and APIs may rely on, and a `detail` for logs. Equality compares
/// the code only, so tests can match on it. The `description` shows the code only; `detail` stays in
/// `debugDescription`. `detail` never contains bound parameter values, because they may be secrets.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable, machine-readable identifier of the failure (for example `conflict`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as a snake_case string; never changes once released.
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The row the operation needs does not exist (also: a foreign key points at a missing row).
        public static let notFound = Code("not_found")
        /// A unique or primary key constraint was violated, or a state rule forbids the change.
        public static let conflict = Code("conflict")
        /// A count limit enforced by the store was reached.
        public static let limitReached = Code("limit_reached")
        /// The database could not be reached, or it stayed busy past the timeout.
        public static let unavailable = Code("unavailable")
        /// The input or the stored data does not have the expected shape.
        public static let invalidData = Code("invalid_data")
        /// A value to bind cannot be stored at all (text containing a NUL character): the caller's input is bad.
        public static let unstorableValue = Code("unstorable_value")
        /// The schema could not be brought to the version this build expects.
        public static let migrationFailed = Code("migration_failed")
        /// Anything else: a driver failure or a broken invariant.
        public static let internalFailure = Code("internal_failure")
    }

    /// What went wrong.
    public let code: Code
    /// Context for logs and debugging, never for clients; never contains parameter values.
    public let detail: String
    /// Whether retrying the whole operation may succeed (busy database, serialization failure); internal use.
    let isTransient: Bool

    /// Creates an error.
    /// - Parameters:
    ///   - code: the stable code.
    ///   - detail: context for logs, without secrets or parameter values.
    public init(_ code: Code, _ detail: String) {
        self.init(code, detail, transient: false)
    }

    init(_ code: Code, _ detail: String, transient: Bool) {
        self.code = code
        self.detail = detail
        self.isTransient = transient
    }

    public var description: String { "StoreError(\(code))" }
    public var debugDescription: String { "StoreError(\(code)): \(detail)" }

    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

extension StoreError {
    /// An error with this code and no detail, for matching in `catch` and tests.
    public static func code(_ code: Code) -> StoreError { StoreError(code, "") }

    /// Matches any ``Code/notFound`` error.
    public static let notFound = StoreError(.notFound, "")
    /// Matches any ``Code/conflict`` error.
    public static let conflict = StoreError(.conflict, "")
    /// Matches any ``Code/limitReached`` error.
    public static let limitReached = StoreError(.limitReached, "")
    /// Matches any ``Code/unavailable`` error.
    public static let unavailable = StoreError(.unavailable, "")
    /// Matches any ``Code/invalidData`` error.
    public static let invalidData = StoreError(.invalidData, "")
    /// Matches any ``Code/unstorableValue`` error.
    public static let unstorableValue = StoreError(.unstorableValue, "")
    /// Matches any ``Code/migrationFailed`` error.
    public static let migrationFailed = StoreError(.migrationFailed, "")
    /// Matches any ``Code/internalFailure`` error.
    public static let internalFailure = StoreError(.internalFailure, "")
}
