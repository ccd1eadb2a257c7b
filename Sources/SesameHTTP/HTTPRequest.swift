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

extension HTTPRequest {
    /// The credentials of `Authorization: <scheme> <credentials>` (RFC 9110 §11.6.2): `scheme` (lowercase ASCII) matches
    /// in any case and is followed by a space, and the spaces and tabs around the credentials are dropped.
    /// - Returns: `nil` without such a header, for empty credentials, or for a header of more than `maximumLength` bytes.
    public func authorizationCredentials(scheme: String, maximumLength: Int = .max) -> String? {
        guard let header = headers["Authorization"] else { return nil }
        let utf8 = header.utf8, prefix = (scheme + " ").utf8
        guard utf8.count <= maximumLength, utf8.count >= prefix.count,
              zip(utf8, prefix).allSatisfy({ HTTPHeaders.asciiLowercase($0) == $1 })
        else { return nil }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let rest = utf8.dropFirst(prefix.count)
        guard let start = rest.firstIndex(where: { !isSpace($0) }), let last = rest.lastIndex(where: { !isSpace($0) }) else { return nil }
        return String(header[start...last])
    }
}
