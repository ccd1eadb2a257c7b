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

    /// `{ "data": { "data": { … } } }`, the members of the innermost object written by `payload`; never cached.
    static func envelope(_ payload: (inout JSONWriter) -> Void) -> HTTPResponse {
        response { writer in
            writer.key("data")
            writer.object { writer in
                writer.key("data")
                writer.object(payload)
            }
        }
    }

    /// A JSON object whose members `members` writes (by hand: no Foundation coder on a ceremony's path), status 200
    /// unless told, never cached. Members are written in name order, as the face has always answered.
    static func response(status: Int = 200, _ members: (inout JSONWriter) -> Void) -> HTTPResponse {
        var writer = JSONWriter()
        writer.object(members)
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: writer.bytes)
    }

    /// `response` with the request log's correlation tag of `requestID` (`rq`, a keyed hash: the ID never reaches the log).
    static func tagged(_ response: HTTPResponse, requestID: String, _ sesame: Sesame) -> HTTPResponse {
        var response = response
        response.correlation = sesame.inline.logCorrelation(requestID: requestID)
        return response
    }

    /// The body's top-level members, read strictly and without Foundation's coders (RFC 8259; a top-level member given
    /// twice, invalid UTF-8 or nesting deeper than 16 refuse the whole body), or `nil` when it is not one JSON object.
    static func members(_ request: HTTPRequest) -> JSONObjectMembers? {
        JSONObjectMembers(request.body)
    }
}

/// Pattern B errors: the real HTTP status with `{ "error": { "statusCode", "code", "message" } }`.
struct PartnerErrorRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        BotShieldAPI.response(status: error.status) { writer in
            writer.key("error")
            writer.object { writer in
                writer.member("code", error.code)
                writer.member("message", error.message)
                writer.member("statusCode", error.status)
            }
        }
    }
}

/// Errors of the public endpoints: still HTTP 200, as `{ "data": { "error": { "statusCode", "message" } } }`, which
/// apps treat like a fallback. The message is a generic code, never internal text.
struct PublicErrorRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        // Any server-side failure (a 503 from an unavailable store included) is the one generic shape of spec §1.3.
        let serverError = error.status >= 500
        return BotShieldAPI.response { writer in
            writer.key("data")
            writer.object { writer in
                writer.key("error")
                writer.object { writer in
                    writer.member("message", serverError ? "internal_error" : error.code)
                    writer.member("statusCode", serverError ? 500 : error.status)
                }
            }
        }
    }
}
