/// Why an ``HTTPServer`` could not start.
///
/// Equality compares ``code`` only, so tests can match `HTTPServerError.Code.addressInUse` however it was worded.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable classification of the failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The code's name, for logs.
        public var description: String { name }

        /// Another socket already listens on the address and port.
        public static let addressInUse = Code("addressInUse")
        /// The host is not a numeric IPv4/IPv6 address (or `localhost`), or the address is not on this machine.
        public static let invalidAddress = Code("invalidAddress")
        /// The socket could not be created, bound or put in listening mode for another reason (see the message).
        public static let cannotListen = Code("cannotListen")
        /// A configuration value is out of range.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// `start()` was called on a server that already started or was shut down.
        public static let alreadyStarted = Code("alreadyStarted")
        /// libmicrohttpd refused to start (for example, too many threads).
        public static let daemonFailed = Code("daemonFailed")
    }

    /// The classification.
    public var code: Code
    /// An operator-facing explanation, for example "127.0.0.1:8080 is already in use".
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The classification.
    ///   - message: An operator-facing explanation.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// Compares codes only.
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: `true` if the codes are equal.
    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool {
        lhs.code == rhs.code
    }
}
