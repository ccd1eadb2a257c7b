import Foundation

/// The one rule for session cookies, whichever face sets them.
///
/// Behind HTTPS (``isSecure(_:)``) a session cookie is `Secure; SameSite=None`, as Appwrite sends it, so pages on
/// other sites can use it. On plain http a browser drops a `SameSite=None` cookie (it needs `Secure`, which http
/// cannot carry), so there it is `SameSite=Lax`: local development on `http://localhost:PORT` is one site whatever
/// the port. Every session cookie is `HttpOnly`.
public enum SessionCookie {
    /// Whether the client reached Sesame over HTTPS: Sesame speaks plain http, so only a reverse proxy's
    /// `X-Forwarded-Proto: https` (its first value, when proxies chained it) says so.
    public static func isSecure(_ request: HTTPRequest) -> Bool {
        guard let forwarded = request.headers["X-Forwarded-Proto"] else { return false }
        let first = forwarded.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return first.trimmingCharacters(in: .whitespaces).lowercased() == "https"
    }

    /// The `Set-Cookie` value of a session cookie for `request`.
    /// - Parameters:
    ///   - value: the session secret; empty with `maxAge` 0 clears the cookie.
    ///   - maxAge: seconds.
    ///   - path: the cookie's `Path`.
    public static func header(name: String, value: String, maxAge: Int, path: String = "/", for request: HTTPRequest) -> String {
        "\(name)=\(value); Max-Age=\(maxAge); Path=\(path); HttpOnly" + (isSecure(request) ? "; Secure; SameSite=None" : "; SameSite=Lax")
    }

    /// The value of cookie `name` in the request's `Cookie` headers (the first one wins), or `nil`.
    public static func value(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                if trimmed[..<equals] == name { return String(trimmed[trimmed.index(after: equals)...]) }
            }
        }
        return nil
    }
}
