import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The hosted setup page's calls under `/app/api` (spec §2.8; the page itself is `GET /app/account/passkey`): sign in
/// with a passkey or create an ID, see and add passkeys, sign out.
///
/// Only the hosted pages' origin may call them (`Origin` must be ``InlineConfiguration/appOrigin``: 403
/// `origin_not_allowed` otherwise), and no CORS is offered. The session is the HttpOnly cookie ``cookieName`` on
/// `/app`, set by ``SessionCookie``'s rule. Successes are `{ "data": { "data": … } }`; errors have the real status and
/// `{ "error": { "statusCode", "code", "message" } }` with a generic code (`session_required`, `challenge_expired`,
/// `passkey_invalid`, …): why a ceremony failed goes to the operator only (metrics and request log, face `setup`).
enum SetupRoutes {
    /// The setup session's cookie.
    static let cookieName = "sesame_app_session"
    static let cookiePath = "/app"

    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.POST, "/app/api/id/options") { request in
            try checkOrigin(request, sesame)
            let start = try call(nil) { () throws(SesameError) in try sesame.setup.beginCreation(clientIP: request.remoteAddress) }
            return ceremonyOptions(start)
        }

        router.add(.POST, "/app/api/id") { request in
            try checkOrigin(request, sesame)
            let (challengeID, credentialJSON) = try ceremonyBody(request, .registration)
            let signIn = try call(.registration) { () throws(SesameError) in
                try sesame.setup.finishCreation(challengeID: challengeID, credentialJSON: credentialJSON, client: client(request))
            }
            return try signedIn(signIn, request, sesame, observed: .registration)
        }

        router.add(.POST, "/app/api/sign-in/options") { request in
            try checkOrigin(request, sesame)
            let start = try call(nil) { () throws(SesameError) in try sesame.setup.beginSignIn(clientIP: request.remoteAddress) }
            return ceremonyOptions(start)
        }

        router.add(.POST, "/app/api/sign-in") { request in
            try checkOrigin(request, sesame)
            let (challengeID, credentialJSON) = try ceremonyBody(request, .authentication)
            let signIn = try call(.authentication) { () throws(SesameError) in
                try sesame.setup.finishSignIn(challengeID: challengeID, credentialJSON: credentialJSON, clientIP: request.remoteAddress,
                                              client: client(request))
            }
            return try signedIn(signIn, request, sesame, observed: .authentication)
        }

        router.add(.GET, "/app/api/account", requiresJSONBody: false) { request in
            let (_, person) = try session(request, sesame)
            return try account(person, sesame)
        }

        router.add(.POST, "/app/api/passkeys/options") { request in
            try checkOrigin(request, sesame)
            let (current, person) = try session(request, sesame)
            let start = try call(nil) { () throws(SesameError) in try sesame.setup.beginAddition(session: current, person: person) }
            return ceremonyOptions(start)
        }

        router.add(.POST, "/app/api/passkeys") { request in
            try checkOrigin(request, sesame)
            let (current, person) = try session(request, sesame)
            let (challengeID, credentialJSON) = try ceremonyBody(request, .registration)
            _ = try call(.registration) { () throws(SesameError) in
                try sesame.setup.finishAddition(session: current, person: person, challengeID: challengeID, credentialJSON: credentialJSON)
            }
            var response = try account(person, sesame)
            response.ceremony = Ceremony.registration.observed("")
            return response
        }

        router.add(.POST, "/app/api/sign-out") { request in
            try checkOrigin(request, sesame)
            if let current = try? session(request, sesame).0 {
                try call(nil) { () throws(SesameError) in try sesame.setup.signOut(current) }
            }
            var response = BotShieldAPI.envelope { writer in writer.member("signed_out", true) }
            response.headers.add("Set-Cookie", SessionCookie.header(name: cookieName, value: "", maxAge: 0, path: cookiePath, for: request))
            return response
        }
    }

    /// The two ceremonies of the page, as the operator sees them.
    enum Ceremony: String {
        case registration, authentication

        func observed(_ reason: String) -> CeremonyObservation {
            CeremonyObservation(face: "setup", ceremony: rawValue, reason: reason)
        }
    }

    /// 403 `origin_not_allowed` unless the call comes from a page of the hosted pages' origin.
    static func checkOrigin(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) {
        guard request.headers["Origin"] == sesame.inline.appOrigin else {
            throw HTTPError.forbidden(code: "origin_not_allowed", message: "Only the hosted pages may call this.")
        }
    }

    /// The signed-in person of the request's setup cookie.
    /// - Throws: 401 `session_required` for no cookie, or an unknown, expired or ended session.
    static func session(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) -> (Session, User) {
        let secret = SessionCookie.value(cookieName, in: request) ?? ""
        let found = try call(nil) { () throws(SesameError) in try sesame.setup.authenticate(secret: secret) }
        guard let found else { throw HTTPError.unauthorized(code: "session_required", message: "Sign in with a passkey first.") }
        return found
    }

    /// `{challenge_id, response}`.
    /// - Throws: 400 `invalid_request` (observed as `malformed_response`) when the body is not an object or lacks either.
    static func ceremonyBody(_ request: HTTPRequest, _ ceremony: Ceremony) throws(HTTPError) -> (String, [UInt8]) {
        let body = BotShieldAPI.members(request)
        guard let challengeID = body?.string("challenge_id"), challengeID.utf8.count <= 64, let credentialJSON = body?.object("response") else {
            var error = HTTPError.badRequest(code: "invalid_request", message: "Send challenge_id and response.")
            error.ceremony = ceremony.observed(WebAuthnError.Code.malformedResponse.rawValue)
            throw error
        }
        return (challengeID, credentialJSON)
    }

    /// The answer of a sign-in or a new ID: the account, and the session cookie.
    static func signedIn(_ signIn: SetupSignIn, _ request: HTTPRequest, _ sesame: Sesame, observed ceremony: Ceremony) throws(HTTPError)
        -> HTTPResponse
    {
        var response = try account(signIn.person, sesame)
        let maxAge = max(0, Int(signIn.session.expiresAt.timeIntervalSince(signIn.session.createdAt)))  // trap-safe: server-side dates, minutes apart
        response.headers.add("Set-Cookie", SessionCookie.header(name: cookieName, value: signIn.secret, maxAge: maxAge, path: cookiePath, for: request))
        response.ceremony = ceremony.observed("")
        return response
    }

    /// `{ challenge_id, options }` of a ceremony the page starts.
    static func ceremonyOptions(_ start: SetupCeremonyStart<some JSONWritable>) -> HTTPResponse {
        BotShieldAPI.envelope { writer in
            writer.member("challenge_id", start.challengeID)
            writer.member("options", start.options)
        }
    }

    /// `{ name, passkeys: [{ id, name, created_at, last_used_at? }] }`: nothing else about the person.
    static func account(_ person: User, _ sesame: Sesame) throws(HTTPError) -> HTTPResponse {
        let account = try call(nil) { () throws(SesameError) in try sesame.setup.account(person) }
        return BotShieldAPI.envelope { writer in
            writer.member("name", account.idName)
            writer.key("passkeys")
            writer.array { writer in
                for passkey in account.passkeys {
                    writer.object { writer in
                        writer.member("created_at", Timestamps.rfc3339(passkey.createdAt))
                        writer.member("id", passkey.id)
                        if let used = passkey.lastUsedAt { writer.member("last_used_at", Timestamps.rfc3339(used)) }
                        writer.member("name", passkey.name)
                    }
                }
            }
        }
    }

    static func client(_ request: HTTPRequest) -> ClientInfo {
        ClientInfo(ip: request.remoteAddress, userAgent: request.headers["User-Agent"] ?? "")
    }

    /// Runs a domain call, answering its error with a generic code; a ceremony's failure carries its reason for the
    /// operator.
    static func call<T>(_ ceremony: Ceremony?, _ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch {
            var refused = map(error)
            if let ceremony { refused.ceremony = ceremony.observed(error.reason) }
            throw refused
        }
    }

    static func map(_ error: SesameError) -> HTTPError {
        switch error.code {
        // A value the store cannot hold (a NUL in an ID, say): bad input.
        case .invalidArgument: HTTPError.badRequest(code: "invalid_request", message: "The request is invalid.")
        case .expired, .notFound:
            HTTPError.badRequest(code: "challenge_expired", message: "That took too long or was used already: try again.")
        case .verificationFailed, .blocked:
            HTTPError.badRequest(code: "passkey_invalid", message: "That passkey could not be checked.")
        case .conflict: HTTPError.conflict(code: "passkey_exists", message: "That passkey is registered already.")
        case .limitReached: HTTPError.badRequest(code: "limit_reached", message: "No more passkeys can be added.")
        case .reauthenticationRequired: HTTPError.unauthorized(code: "session_required", message: "Sign in with a passkey first.")
        case .rateLimited: HTTPError.tooManyRequests()
        // A deployment without an ID project has no setup page: nothing is here, rather than a server failure.
        case .unsupported, .noRelyingParty: HTTPError.notFound(code: "not_configured", message: "Passkey setup is not configured on this server.")
        case .unavailable: HTTPError.serviceUnavailable()
        default: HTTPError.internalError()
        }
    }
}
