import Foundation

/// Deployment settings of inline verification. `url` and `setup_url` are built from these, never hard-coded.
public struct InlineConfiguration: Sendable, Hashable {
    /// `{app}`: the origin of the hosted pages (hand-off and passkey setup), such as `https://app.example.com`.
    public var appURL: String
    /// `{api}` without `/operations`: the public API origin, such as `https://api.example.com`; also the token issuer.
    public var apiURL: String
    /// Lets webhook endpoints use `http://` and loopback or private addresses (local development and tests only).
    public var allowLocalWebhooks: Bool
    /// The brand in generated passkey names (`<brand> ID •1a2b`).
    public var brandName: String
    /// Calls per client IP per minute on the public endpoints (60; benchmarks raise it).
    public var publicCallsPerMinutePerIP: Int

    /// Creates settings; URLs lose any trailing slash.
    public init(appURL: String = "http://localhost:8080", apiURL: String = "http://localhost:8080", allowLocalWebhooks: Bool = false,
                brandName: String = "Sesame", publicCallsPerMinutePerIP: Int = 60) {
        self.appURL = Self.trimmed(appURL)
        self.apiURL = Self.trimmed(apiURL)
        self.allowLocalWebhooks = allowLocalWebhooks
        self.brandName = brandName
        self.publicCallsPerMinutePerIP = publicCallsPerMinutePerIP
    }

    /// The `iss` of verification tokens.
    public var issuer: String { apiURL }
    /// The hand-off page of a request (`url`, `web_url`).
    public func handOffURL(requestID: String) -> String { "\(appURL)/verify?request_id=\(requestID)" }
    /// Where a person adds a passkey (`setup_url`); it carries no request ID.
    public var setupURL: String { "\(appURL)/app/account/passkey" }
    /// The QR code of a request's hand-off.
    public func qrCodeURL(requestID: String) -> String { "\(apiURL)/operations/qr/\(requestID).svg" }
    /// The origin of the hosted pages, as WebAuthn clients report it.
    public var appOrigin: String {
        guard let url = URL(string: appURL), let scheme = url.scheme, let host = url.host else { return appURL }
        return url.port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }

    /// Checks both URLs are absolute `http(s)` URLs without query or fragment.
    /// - Throws: `invalid_argument`.
    public func validated() throws(SesameError) -> InlineConfiguration {
        for (name, text) in [("app URL", appURL), ("API URL", apiURL)] {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false, url.query == nil,
                  url.fragment == nil
            else { throw SesameError(.invalidArgument, "the \(name) must be an absolute http(s) URL without query, such as https://app.example.com") }
        }
        return self
    }

    private static func trimmed(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
