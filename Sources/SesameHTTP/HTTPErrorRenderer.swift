/// Renders errors in a face's own error shape (each wire API has one).
public protocol HTTPErrorRenderer: Sendable {
    /// Builds the response for `error`; the router adds `error.headers`, `X-Request-Id` and CORS headers afterwards.
    /// - Parameters:
    ///   - error: The error to render.
    ///   - request: The request that failed.
    /// - Returns: The response.
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse
}

/// Renders `{"error":{"code":…,"message":…}}` as JSON with the error's status.
public struct DefaultErrorRenderer: HTTPErrorRenderer {
    /// Creates the renderer.
    public init() {}

    /// Renders `error` in the default shape.
    /// - Parameters:
    ///   - error: The error to render.
    ///   - request: The request that failed (unused).
    /// - Returns: The response.
    public func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        Self.body(for: error)
    }

    private struct Envelope: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    /// The default error shape, built without going through `HTTPResponse.json` (which falls back to it).
    static func body(for error: HTTPError) -> HTTPResponse {
        let text = "{\"error\":{\"code\":\(jsonString(error.code)),\"message\":\(jsonString(error.message))}}"
        return HTTPResponse(
            status: error.status, headers: ["Content-Type": HTTPResponse.jsonContentType], body: Array(text.utf8)
        )
    }

    /// Encodes `text` as a JSON string literal.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
