import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The Appwrite-compatible account API under `/v1` (spec `appwrite-passkeys.md`), so the official Appwrite SDKs work
/// against Sesame. It only translates between the wire and the domain; every rule lives in `SesameCore`.
public enum AppwriteAPI {
    /// The `version` field of error bodies: the Appwrite response format this face speaks.
    public static let version = "2.5.0"
    /// The content type of every JSON response, errors included (Appwrite's spelling).
    public static let jsonContentType = "application/json; charset=UTF-8"

    /// Mounts `/v1` with Appwrite's error shape and adds every route.
    public static func add(to router: inout Router, sesame: Sesame) {
        router.mount("/v1", errorRenderer: AppwriteErrorRenderer())
        AccountRoutes.add(to: &router, sesame: sesame)
        PasskeyRoutes.add(to: &router, sesame: sesame)
        UsersRoutes.add(to: &router, sesame: sesame)
        ProjectRoutes.add(to: &router, sesame: sesame)
    }

    /// A JSON response labelled `application/json; charset=UTF-8`.
    static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        var response = HTTPResponse.json(value, status: status)
        if response.status == status { response.headers.set("Content-Type", jsonContentType) }
        return response
    }

    /// A JSON answer written by hand (the models of a ceremony's hot path), with Appwrite's content type.
    static func json(_ value: some JSONWritable, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": jsonContentType], body: value.jsonBytes)
    }

    /// Runs a domain call, answering its error in this face's terms.
    static func call<T>(notFound: AppwriteErrorType = .generalRouteNotFound, conflict: AppwriteErrorType = .generalArgumentInvalid,
                        _ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch { throw appwriteError(error, notFound: notFound, conflict: conflict) }
    }

    /// `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds) of a rate-limited route.
    static func setRateLimitHeaders(_ headers: inout HTTPHeaders, _ decision: RateLimitDecision?) {
        guard let decision else { return }
        let reset = Int(decision.resetAt.timeIntervalSince1970.rounded(.up))  // trap-safe: server clock
        headers.set("X-RateLimit-Limit", String(decision.limit))
        headers.set("X-RateLimit-Remaining", String(decision.remaining))
        headers.set("X-RateLimit-Reset", String(reset))
    }

    /// An optional whole-number parameter, or 400 `general_argument_invalid` naming it as Appwrite does: every number
    /// a client sends this face leaves the wire here (see ``ClientNumber``); the domain then checks its range.
    static func integer(_ number: ClientNumber?, _ name: String) throws(HTTPError) -> Int? {
        guard let number else { return nil }
        guard let whole = number.integer() else {
            throw .appwrite(.generalArgumentInvalid, "Invalid `\(name)` param: Value must be a valid integer.")
        }
        return whole
    }

    /// ``integer(_:_:)`` as seconds, for durations and lifetimes.
    static func seconds(_ number: ClientNumber?, _ name: String) throws(HTTPError) -> TimeInterval? {
        try integer(number, name).map(TimeInterval.init)
    }

    /// A required parameter, or 400 `general_argument_invalid` naming it as Appwrite does.
    static func required<T>(_ value: T?, _ name: String) throws(HTTPError) -> T {
        guard let value else { throw .appwrite(.generalArgumentInvalid, "Param \"\(name)\" is not optional.") }
        return value
    }

    /// The top-level members of a ceremony route's JSON body, read without Foundation's coders (the hot path).
    /// - Throws: 400 `invalid_json`, as ``decodeJSONBody(_:from:)`` does, for an empty body or one that is not a JSON object.
    static func members(_ request: HTTPRequest) throws(HTTPError) -> JSONObjectMembers {
        guard !request.body.isEmpty else { throw HTTPError.badRequest(code: "invalid_json", message: "The request body is empty.") }
        guard let members = JSONObjectMembers(request.body) else {
            throw HTTPError.badRequest(code: "invalid_json", message: "The request body is not a valid JSON object.")
        }
        return members
    }

    /// A string member of a body: `nil` when absent or `null`.
    /// - Throws: 400 `invalid_json` when it is something else.
    static func string(_ members: JSONObjectMembers, _ name: String) throws(HTTPError) -> String? {
        if members.isAbsentOrNull(name) { return nil }
        guard let value = members.string(name) else {
            throw HTTPError.badRequest(code: "invalid_json", message: "The request body's \(name) is not a string.")
        }
        return value
    }
}
