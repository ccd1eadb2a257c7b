/// An error a handler throws to answer with a status; the router renders it through the mount's error renderer.
///
/// `code` and `message` go to the client, so they must never contain secrets, internal details or echoed input.
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status code, for example 400.
    public var status: Int
    /// A stable machine-readable code, for example `"invalid_json"`.
    public var code: String
    /// A short human-readable message, safe to show to clients.
    public var message: String
    /// Extra response headers, for example `Retry-After` or `Allow`.
    public var headers: HTTPHeaders
    /// The ceremony this error refused, copied onto the rendered response for the operator; never rendered.
    public var ceremony: CeremonyObservation?

    /// Creates an error.
    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    ///   - headers: Extra response headers.
    public init(status: Int, code: String, message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The status and code, for logs.
    public var description: String { "HTTPError(\(status), \(code))" }

    /// Equal when status, code, message and headers are: what the client sees (``ceremony`` is not part of it).
    public static func == (lhs: HTTPError, rhs: HTTPError) -> Bool {
        lhs.status == rhs.status && lhs.code == rhs.code && lhs.message == rhs.message && lhs.headers == rhs.headers
    }

    /// 400: the request is malformed.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func badRequest(code: String = "bad_request", message: String = "The request is invalid.") -> HTTPError {
        HTTPError(status: 400, code: code, message: message)
    }

    /// 401: the caller is not authenticated.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func unauthorized(
        code: String = "unauthorized", message: String = "Authentication is required."
    ) -> HTTPError {
        HTTPError(status: 401, code: code, message: message)
    }

    /// 403: the caller may not do this.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func forbidden(code: String = "forbidden", message: String = "Access is denied.") -> HTTPError {
        HTTPError(status: 403, code: code, message: message)
    }

    /// 404: nothing is here.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func notFound(
        code: String = "not_found", message: String = "The resource was not found."
    ) -> HTTPError {
        HTTPError(status: 404, code: code, message: message)
    }

    /// 405: the path exists but not with this method; `allowed` fills the `Allow` header.
    /// - Parameter allowed: The methods the path accepts.
    /// - Returns: The error.
    public static func methodNotAllowed(allowed: [HTTPMethod]) -> HTTPError {
        HTTPError(
            status: 405, code: "method_not_allowed", message: "The method is not allowed for this resource.",
            headers: ["Allow": allowed.map(\.rawValue).joined(separator: ", ")]
        )
    }

    /// 409: the request conflicts with the current state.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func conflict(code: String = "conflict", message: String = "The request conflicts with the current state.") -> HTTPError {
        HTTPError(status: 409, code: code, message: message)
    }

    /// 413: the body is larger than the server accepts.
    /// - Returns: The error.
    public static func payloadTooLarge() -> HTTPError {
        HTTPError(status: 413, code: "payload_too_large", message: "The request body is too large.")
    }

    /// 414: the request line is longer, or has more query arguments, than the server accepts.
    /// - Returns: The error.
    public static func uriTooLong() -> HTTPError {
        HTTPError(status: 414, code: "uri_too_long", message: "The request URI is too long.")
    }

    /// 431: the request headers are larger, or more numerous, than the server accepts.
    /// - Returns: The error.
    public static func headerFieldsTooLarge() -> HTTPError {
        HTTPError(status: 431, code: "header_fields_too_large", message: "The request headers are too large.")
    }

    /// 415: the body's `Content-Type` is not one the route accepts.
    /// - Parameter message: A message safe to show to clients.
    /// - Returns: The error.
    public static func unsupportedMediaType(
        message: String = "The request body must be application/json."
    ) -> HTTPError {
        HTTPError(status: 415, code: "unsupported_media_type", message: message)
    }

    /// 429: too many requests; `retryAfterSeconds` fills the `Retry-After` header.
    /// - Parameter retryAfterSeconds: Seconds the client should wait, or `nil` to omit `Retry-After`.
    /// - Returns: The error.
    public static func tooManyRequests(retryAfterSeconds: Int? = nil) -> HTTPError {
        var headers = HTTPHeaders()
        if let retryAfterSeconds { headers.add("Retry-After", String(max(0, retryAfterSeconds))) }
        return HTTPError(status: 429, code: "too_many_requests", message: "Too many requests.", headers: headers)
    }

    /// 500: something failed inside the server; the message is deliberately generic.
    /// - Returns: The error.
    public static func internalError() -> HTTPError {
        HTTPError(status: 500, code: "internal_error", message: "An internal error occurred.")
    }

    /// 503: the server cannot answer right now.
    /// - Parameters:
    ///   - code: A stable machine-readable code.
    ///   - message: A message safe to show to clients.
    /// - Returns: The error.
    public static func serviceUnavailable(
        code: String = "service_unavailable", message: String = "The service is unavailable."
    ) -> HTTPError {
        HTTPError(status: 503, code: code, message: message)
    }
}
