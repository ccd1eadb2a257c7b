import Foundation

/// A complete HTTP response: status, headers and body.
public struct HTTPResponse: Sendable {
    /// The status code, for example 200.
    public var status: Int
    /// Response headers; the server adds `Content-Length` and `Date` itself.
    public var headers: HTTPHeaders
    /// The response body (dropped on the wire for `HEAD` requests and for 204/304 statuses).
    public var body: [UInt8]
    /// The route pattern that produced it (e.g. "/v1/projects/:projectId"), for metrics; nil when no route matched.
    public var route: String?
    /// A short opaque tag the request log writes as `rq`, to correlate the requests of one resource (such as a keyed
    /// hash of a verification request's ID); never a secret or an ID itself. Not sent to the client.
    public var correlation: String?
    /// The ceremony this request finished or refused, for the metrics and the log's `reason`. Not sent to the client.
    public var ceremony: CeremonyObservation?

    /// Creates a response.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: Response headers.
    ///   - body: The body bytes.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response (`application/json; charset=utf-8`) with sorted keys, unescaped slashes and ISO 8601 dates.
    ///
    /// If `value` cannot be encoded (a programming error), the result is a generic 500 `internal_error` instead.
    /// - Parameters:
    ///   - value: The value to encode.
    ///   - status: The status code.
    /// - Returns: The response.
    public static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Foundation's default would be seconds since 2001, which no client reads as a date.
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else {
            return DefaultErrorRenderer.body(for: .internalError())
        }
        return HTTPResponse(status: status, headers: ["Content-Type": jsonContentType], body: [UInt8](data))
    }

    /// A text response.
    /// - Parameters:
    ///   - text: The body, sent as UTF-8.
    ///   - status: The status code.
    ///   - contentType: The `Content-Type` header.
    /// - Returns: The response.
    public static func text(
        _ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8"
    ) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Array(text.utf8))
    }

    /// An empty 204 response labelled `text/plain` (one SDK crashes on a 204 labelled `application/json`).
    /// - Returns: The response.
    public static func noContent() -> HTTPResponse {
        HTTPResponse(status: 204, headers: ["Content-Type": "text/plain"])
    }

    /// The content type of JSON responses.
    public static let jsonContentType = "application/json; charset=utf-8"
}
