/// An HTTP request method such as `GET` or `POST`, compared exactly (methods are case-sensitive).
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the wire.
    public var rawValue: String

    /// Wraps a method token without validating it.
    /// - Parameter rawValue: The method token, for example `"GET"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The method token, for logs.
    public var description: String { rawValue }

    /// Reads a resource.
    public static let GET = HTTPMethod(rawValue: "GET")
    /// Creates a resource or runs an action.
    public static let POST = HTTPMethod(rawValue: "POST")
    /// Replaces a resource.
    public static let PUT = HTTPMethod(rawValue: "PUT")
    /// Changes part of a resource.
    public static let PATCH = HTTPMethod(rawValue: "PATCH")
    /// Removes a resource.
    public static let DELETE = HTTPMethod(rawValue: "DELETE")
    /// Asks which methods a resource allows; browsers send it as the CORS preflight.
    public static let OPTIONS = HTTPMethod(rawValue: "OPTIONS")
    /// Like `GET` but the response carries no body.
    public static let HEAD = HTTPMethod(rawValue: "HEAD")

    /// Whether requests with this method normally carry a body (`POST`, `PUT`, `PATCH`).
    var carriesBody: Bool {
        self == .POST || self == .PUT || self == .PATCH
    }
}
