import Foundation
import SesameCrypto

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
    /// Widget create-verification calls per site key per minute (600), on top of the per-IP limit.
    public var widgetCallsPerMinutePerSiteKey: Int
    /// The project whose people the hosted setup page (`setup_url`) signs in and creates: `default`, the bootstrap
    /// project, unless the operator names another (`--id-project`).
    public var idProjectID: String
    /// The key of the request log's correlation tags; random per process unless the operator sets one, so that the
    /// nodes of a deployment tag a request alike.
    public var logKey: [UInt8]

    /// Creates settings; URLs lose any trailing slash.
    public init(appURL: String = "http://localhost:8080", apiURL: String = "http://localhost:8080", allowLocalWebhooks: Bool = false,
                brandName: String = "Sesame", publicCallsPerMinutePerIP: Int = 60, widgetCallsPerMinutePerSiteKey: Int = 600,
                logKey: [UInt8] = SecureRandom.bytes(count: 32), idProjectID: String = "default") {
        self.appURL = Self.trimmed(appURL)
        self.apiURL = Self.trimmed(apiURL)
        self.allowLocalWebhooks = allowLocalWebhooks
        self.brandName = brandName
        self.publicCallsPerMinutePerIP = publicCallsPerMinutePerIP
        self.widgetCallsPerMinutePerSiteKey = widgetCallsPerMinutePerSiteKey
        self.logKey = logKey
        self.idProjectID = idProjectID
    }

    /// The request log's tag for a verification request (spec §2.11): the first 8 hex digits of
    /// HMAC-SHA256(log key, request ID), so log lines of one request can be matched without the ID itself.
    /// - Returns: `nil` for anything that is not a request ID.
    public func logCorrelation(requestID: String) -> String? {
        guard VerificationService.isRequestID(requestID) else { return nil }
        return HMAC.sha256(key: logKey, message: Array(requestID.utf8)).prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
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
