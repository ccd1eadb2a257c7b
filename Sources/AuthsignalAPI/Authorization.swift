import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The three credentials of the face (spec §1.5): the tenant secret (server API), a Bearer track or result token and
/// the tenant ID in Basic (client API).
enum Authorization {
    /// The longest `Authorization` header read.
    static let maximumLength = 4096

    /// The tenant of a server-API request: `Basic base64("<secret>:")`.
    /// - Throws: 401 `unauthorized` for anything but a live tenant secret.
    static func serverTenant(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) -> Project {
        guard let credentials = basic(request) else { throw AuthsignalAPI.unauthorized }
        let secret = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        do { return try sesame.authsignal.tenant(secret: secret) } catch where error.code == .unauthorized { throw AuthsignalAPI.unauthorized } catch {
            throw AuthsignalAPI.map(error)
        }
    }

    /// The caller of a client-API request (a Bearer token when `token` allows it, else tenant Basic when `tenant` does),
    /// with the call counted against the per-IP and per-tenant limits.
    /// - Throws: 401 `unauthorized` (missing, unknown tenant, forged or foreign token), `expired_token`, 429
    ///   `too_many_requests`.
    static func client(_ request: HTTPRequest, _ sesame: Sesame, token: Bool, tenant: Bool) throws(HTTPError) -> AuthsignalClientCaller {
        let caller = try authenticate(request, sesame, token: token, tenant: tenant)
        try AuthsignalAPI.call { () throws(SesameError) in
            try sesame.authsignal.limitClientCall(project: caller.project, clientIP: request.remoteAddress)
        }
        return caller
    }

    private static func authenticate(_ request: HTTPRequest, _ sesame: Sesame, token: Bool, tenant: Bool) throws(HTTPError)
        -> AuthsignalClientCaller
    {
        if token, let bearer = bearer(request) {
            let verified = try AuthsignalAPI.call { () throws(SesameError) in try sesame.authsignal.verifyToken(bearer) }
            return .token(verified.claims, verified.project)
        }
        if tenant, let credentials = basic(request) {
            // iOS and Android send "<tenantID>:"; the web SDK sends encodeURIComponent(tenantID) without a colon.
            let decoded = credentials.utf8.contains(UInt8(ascii: "%")) ? credentials.removingPercentEncoding ?? credentials : credentials
            let id = decoded.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !id.isEmpty else { throw AuthsignalAPI.unauthorized }
            return .tenant(try AuthsignalAPI.call { () throws(SesameError) in try sesame.authsignal.tenant(id: id) })
        }
        throw AuthsignalAPI.unauthorized
    }

    /// The Bearer token of a client-API request that takes only a token, once it verified and the call was counted.
    /// - Throws: as ``client(_:_:token:tenant:)``.
    static func clientToken(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) -> String {
        _ = try client(request, sesame, token: true, tenant: false)
        return bearer(request) ?? ""
    }

    /// The token of `Authorization: Bearer <token>`.
    static func bearer(_ request: HTTPRequest) -> String? {
        request.authorizationCredentials(scheme: "bearer", maximumLength: maximumLength)
    }

    /// The decoded text of `Authorization: Basic <base64>`, read leniently: `+/` or `-_`, with or without `=` padding.
    static func basic(_ request: HTTPRequest) -> String? {
        guard let text = request.authorizationCredentials(scheme: "basic", maximumLength: maximumLength),
              let bytes = try? Base64URL.decode(text)
        else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
