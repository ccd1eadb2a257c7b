/// A fully received HTTP request: the values a handler sees, independent of the socket it came from.
public struct HTTPRequest: Sendable {
    /// The request method.
    public var method: HTTPMethod
    /// The percent-decoded path without the query string, for example `"/v1/projects/p1"`.
    public var path: String
    /// Query parameters, percent-decoded; the first value wins when a name repeats, and a bare name maps to `""`.
    public var query: [String: String]
    /// Request headers in the order received.
    public var headers: HTTPHeaders
    /// The complete request body (at most the server's `maximumBodySize` bytes).
    public var body: [UInt8]
    /// The client's IP address as text, or `""` if unknown.
    public var remoteAddress: String
    /// A per-request identifier (32 lowercase hex digits, ``makeID()``) that the router echoes as `X-Request-Id`.
    public var id: String
    /// Values captured by `:name` segments of the matched route pattern; filled in by ``Router``.
    public var pathParameters: [String: String] = [:]

    /// Creates a request, for example to test routes without sockets.
    /// - Parameters:
    ///   - method: The request method.
    ///   - path: The percent-decoded path without the query string.
    ///   - query: Decoded query parameters.
    ///   - headers: Request headers.
    ///   - body: The request body.
    ///   - remoteAddress: The client's IP address as text, or `""`.
    ///   - id: The request identifier; a fresh random one by default.
    public init(
        method: HTTPMethod,
        path: String,
        query: [String: String] = [:],
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        remoteAddress: String = "",
        id: String = HTTPRequest.makeID()
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.id = id
    }
}
