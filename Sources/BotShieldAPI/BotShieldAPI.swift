import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The inline-verification API under `/operations` (spec `botshield-inline-passkey.md`), and the token JWKS.
///
/// Partner servers (API key, grant) open verification requests and read their outcome; partner apps call the two
/// public `/operations/request/*` endpoints, where the request ID is the only credential and every answer is HTTP 200.
/// Only wire translation lives here; the rules are in `SesameCore` (`PartnerService`, `VerificationService`,
/// `InlinePasskeyService`).
public enum BotShieldAPI {
    /// Mounts the error shapes and adds every route.
    public static func add(to router: inout Router, sesame: Sesame) {
        router.mount("/operations", errorRenderer: PartnerErrorRenderer())
        router.mount("/operations/request", errorRenderer: PublicErrorRenderer())
        router.mount("/operations/handoff", errorRenderer: PublicErrorRenderer())
        router.mount("/operations/widget", errorRenderer: PublicErrorRenderer())
        router.mount("/app/api", errorRenderer: PartnerErrorRenderer())
        PartnerRoutes.add(to: &router, sesame: sesame)
        PublicRoutes.add(to: &router, sesame: sesame)
        WidgetRoutes.add(to: &router, sesame: sesame)
        SetupRoutes.add(to: &router, sesame: sesame)
        router.add(.GET, "/.well-known/jwks.json") { _ in
            let jwks = try PartnerRoutes.call { () throws(SesameError) in try sesame.signingKeys.jwks() }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "public, max-age=300"],
                                body: jwks.jsonEncoded())
        }
    }

    /// `{ "data": { "data": payload } }`, never cached.
    static func envelope(_ payload: [String: Any]) -> HTTPResponse {
        // Typed `[String: Any]` at each level, so the writer meets the type it looks for first.
        let inner: [String: Any] = ["data": payload]
        return response(["data": inner])
    }

    static func response(_ object: [String: Any], status: Int = 200) -> HTTPResponse {
        // Payloads are built from strings, numbers, booleans and parsed JSON only, so serialization cannot fail.
        let body = JSONWriter.encode(any: object) ?? Array("{}".utf8)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: body)
    }

    /// `response` with the request log's correlation tag of `requestID` (`rq`, a keyed hash: the ID never reaches the log).
    static func tagged(_ response: HTTPResponse, requestID: String, _ sesame: Sesame) -> HTTPResponse {
        var response = response
        response.correlation = sesame.inline.logCorrelation(requestID: requestID)
        return response
    }

    /// The body as a JSON object, or `nil` when it is not one.
    static func object(_ request: HTTPRequest) -> [String: Any]? {
        guard !request.body.isEmpty else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
    }

    /// A string member, or `nil` when it is absent or not a string.
    static func string(_ object: [String: Any]?, _ key: String) -> String? {
        object?[key] as? String
    }

    /// The body's top-level members, read strictly and without Foundation's coders (the public ceremony endpoints),
    /// or `nil` when it is not one JSON object.
    static func members(_ request: HTTPRequest) -> JSONObjectMembers? {
        JSONObjectMembers(request.body)
    }
}

/// Pattern B errors: the real HTTP status with `{ "error": { "statusCode", "code", "message" } }`.
struct PartnerErrorRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        BotShieldAPI.response(["error": ["statusCode": error.status, "code": error.code, "message": error.message]], status: error.status)
    }
}

/// Errors of the public endpoints: still HTTP 200, as `{ "data": { "error": { "statusCode", "message" } } }`, which
/// apps treat like a fallback. The message is a generic code, never internal text.
struct PublicErrorRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        // Any server-side failure (a 503 from an unavailable store included) is the one generic shape of spec §1.3.
        let serverError = error.status >= 500
        return BotShieldAPI.response(["data": ["error": ["statusCode": serverError ? 500 : error.status,
                                                         "message": serverError ? "internal_error" : error.code]]])
    }
}
