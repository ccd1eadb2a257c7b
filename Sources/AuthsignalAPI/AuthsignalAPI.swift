import Foundation
import WebAuthn
import SesameCore
import SesameHTTP

/// The Authsignal-compatible API under `/authsignal/v1` (spec `authsignal-passkeys.md`): the server API (tenant
/// secret, HTTP Basic) and the client API under `/client` (track or result token, or tenant Basic), so the official
/// Authsignal SDKs work with the base URL `https://HOST/authsignal/v1`.
///
/// Only wire translation lives here; the rules are in `SesameCore` (``AuthsignalService``, the ceremony engine).
/// Every response is `Content-Type: application/json` exactly; every error is `{error, errorCode, errorDescription}`.
public enum AuthsignalAPI {
    /// Where the face is mounted.
    public static let prefix = "/authsignal/v1"
    /// The face label of the ceremonies it finishes, in metrics and the request log.
    static let face = "authsignal"

    /// Mounts the error shape and adds every route.
    public static func add(to router: inout Router, sesame: Sesame) {
        router.mount(prefix, errorRenderer: AuthsignalErrorRenderer())
        ServerRoutes.add(to: &router, sesame: sesame)
        ClientRoutes.add(to: &router, sesame: sesame)
    }

    /// A JSON response, status 200 unless told; built from strings, numbers, booleans, arrays and objects only.
    static func response(_ value: Any, status: Int = 200) -> HTTPResponse {
        json(JSONWriter.encode(any: value) ?? Array("{}".utf8), status: status)
    }

    /// A JSON object whose members `members` writes by hand (the calls of every sign-in: track, validate), in name
    /// order as ``response(_:status:)`` writes them; status 200.
    static func response(_ members: (inout JSONWriter) -> Void) -> HTTPResponse {
        var writer = JSONWriter()
        writer.object(members)
        return json(writer.bytes, status: 200)
    }

    private static func json(_ body: [UInt8], status: Int) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: body)
    }

    /// The body's top-level members, read strictly and without Foundation's coders (every call's); an empty body is an
    /// empty object. A member that is `null` counts as absent.
    /// - Throws: 400 `invalid_request` for anything but one JSON object (a member given twice included).
    static func members(_ request: HTTPRequest) throws(HTTPError) -> JSONObjectMembers {
        guard let members = JSONObjectMembers(request.body.isEmpty ? Array("{}".utf8) : request.body) else {
            throw invalidRequest("The body is not a JSON object.")
        }
        return members
    }

    /// The §1.4 error body: `error` and `errorCode` the same code, a non-empty description.
    static func errorResponse(_ code: String, _ description: String, status: Int) -> HTTPResponse {
        response(["error": code, "errorCode": code, "errorDescription": description.isEmpty ? "The request failed." : description], status: status)
    }

    /// A 400 `invalid_request` with this description.
    static func invalidRequest(_ description: String) -> HTTPError {
        HTTPError(status: 400, code: "invalid_request", message: description)
    }

    /// Runs a domain call, answering its error in this face's codes.
    static func call<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch { throw map(error) }
    }

    /// A domain error as this face's code and status (spec §1.4); descriptions never echo input.
    static func map(_ error: SesameError) -> HTTPError {
        switch error.code {
        case .invalidArgument, .conflict, .limitReached:
            invalidRequest(error.code == .invalidArgument ? "A parameter is missing or invalid." : "The request conflicts with the stored state.")
        case .expired where error.reason == "token_expired":
            HTTPError(status: 401, code: "expired_token", message: "The token has expired.")
        case .expired:
            invalidRequest("The challenge is unknown, used or expired.")
        case .unauthorized: unauthorized
        case .forbidden: HTTPError(status: 403, code: "forbidden", message: "The token or action does not allow this.")
        case .notFound: HTTPError(status: 404, code: "not_found", message: "Not found.")
        case .noRelyingParty, .unsupported:
            HTTPError(status: 400, code: "invalid_configuration", message: "The tenant has no relying party for passkeys.")
        case .rateLimited:
            HTTPError(status: 429, code: "too_many_requests", message: "Too many requests; try again later.",
                      headers: retryAfter(error.rateLimit))
        case .unavailable: HTTPError(status: 503, code: "unavailable", message: "The service is unavailable; try again later.")
        default: HTTPError(status: 500, code: "internal_error", message: "Something went wrong.")
        }
    }

    /// `Retry-After` in whole seconds until the limit's window ends.
    static func retryAfter(_ decision: RateLimitDecision?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let decision {
            let seconds = decision.resetAt.timeIntervalSinceNow.rounded(.up)
            // The window is at most a minute away, so the conversion cannot trap.
            headers.add("Retry-After", String(Int(min(max(seconds, 0), 3600))))  // trap-safe: clamped to 0...3600
        }
        return headers
    }

    /// 401 `unauthorized` with the description the official SDKs' tests expect.
    static let unauthorized = HTTPError(
        status: 401, code: "unauthorized",
        message: "The request is unauthorized. Check that your API key and region base URL are correctly configured."
    )
}

/// Errors as `{ "error", "errorCode", "errorDescription" }` (spec §1.4): `error` and `errorCode` carry the same code,
/// the description is never empty. Errors the router makes (404, 405, 413, 415) get the nearest code of the spec.
struct AuthsignalErrorRenderer: HTTPErrorRenderer {
    static let codes: Set<String> = [
        "unauthorized", "expired_token", "invalid_request", "invalid_credential", "unknown_credential", "invalid_configuration",
        "too_many_requests", "forbidden", "not_found", "unavailable", "internal_error",
    ]

    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        let code: String
        if Self.codes.contains(error.code) {
            code = error.code
        } else {
            switch error.status {
            case 401: code = "unauthorized"
            case 403: code = "forbidden"
            case 404: code = "not_found"
            case 429: code = "too_many_requests"
            case 503: code = "unavailable"
            case 500...: code = "internal_error"
            default: code = "invalid_request"
            }
        }
        return AuthsignalAPI.errorResponse(code, error.message, status: error.status)
    }
}
