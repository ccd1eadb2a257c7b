/// Something that turns a request into a response, synchronously; the seam between transport and application.
///
/// Responders run on the server's worker threads and may block (for example on storage calls).
public protocol HTTPResponder: Sendable {
    /// Answers a request.
    /// - Parameter request: The complete request.
    /// - Returns: The response.
    func respond(to request: HTTPRequest) -> HTTPResponse

    /// Answers a request the transport rejected before any handler ran (for example 413 for an oversized body).
    ///
    /// The default renders with ``DefaultErrorRenderer`` and sets `X-Request-Id`; ``Router`` uses the mount's renderer.
    /// - Parameters:
    ///   - error: Why the request was rejected.
    ///   - request: The request as far as it was read (its body may be empty).
    /// - Returns: The response.
    func respond(to error: HTTPError, for request: HTTPRequest) -> HTTPResponse
}

extension HTTPResponder {
    /// Renders `error` with ``DefaultErrorRenderer`` and sets `X-Request-Id`.
    /// - Parameters:
    ///   - error: Why the request was rejected.
    ///   - request: The request as far as it was read.
    /// - Returns: The response.
    public func respond(to error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        var response = DefaultErrorRenderer().render(error, for: request)
        for (name, value) in error.headers { response.headers.set(name, value) }
        response.headers.set("X-Request-Id", request.id)
        return response
    }
}
