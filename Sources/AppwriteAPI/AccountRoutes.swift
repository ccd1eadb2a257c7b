import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// Accounts and sessions (spec §3.3): sign-up, email sessions, the current user, listing and ending sessions.
enum AccountRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        // S1: sign up with email and password; does not sign in.
        router.add(.POST, "/v1/account", cors: true) { request in
            let caller = try Caller(request, sesame)
            try caller.requireSessionsWrite(sesame)
            try requireMethod("email-password", caller.project)
            let body = try decodeJSONBody(CreateAccountBody.self, from: request)
            let userID = try AppwriteAPI.required(body.userId, "userId")
            let email = try AppwriteAPI.required(body.email, "email")
            let password = try AppwriteAPI.required(body.password, "password")
            let user = try AppwriteAPI.call(conflict: .userAlreadyExists) { () throws(SesameError) in
                try sesame.users.create(projectID: caller.project.id, id: userID, email: email, password: password, name: body.name)
            }
            return AppwriteAPI.json(UserModel(user), status: 201)
        }

        // S2: email and password session. The secret goes into the body only for API-key callers; everyone gets cookies.
        router.add(.POST, "/v1/account/sessions/email", cors: true) { request in
            let caller = try Caller(request, sesame)
            let withKey = try caller.requireSessionsWrite(sesame)
            try requireMethod("email-password", caller.project)
            let body = try decodeJSONBody(EmailSessionBody.self, from: request)
            let email = try AppwriteAPI.required(body.email, "email")
            let password = try AppwriteAPI.required(body.password, "password")
            let duration = try AppwriteAPI.seconds(body.duration, "duration")
            let (session, secret) = try AppwriteAPI.call { () throws(SesameError) in
                try sesame.sessions.signIn(projectID: caller.project.id, email: email, password: password, lifetime: duration,
                                           rateLimited: !withKey, client: clientInfo(request))
            }
            var response = AppwriteAPI.json(SessionModel(session, current: true, secret: withKey ? secret : ""), status: 201)
            setSessionCookies(&response, request, projectID: caller.project.id, secret: secret, session: session)
            return response
        }

        // S3: a session from a sign-in token (such as a passkey sign-in's TokenSecret).
        router.add(.POST, "/v1/account/sessions/token", cors: true) { request in
            let caller = try Caller(request, sesame)
            let withKey = try caller.requireSessionsWrite(sesame)
            let body = try AppwriteAPI.members(request)
            let userID = try AppwriteAPI.required(try AppwriteAPI.string(body, "userId"), "userId")
            let secret = try AppwriteAPI.required(try AppwriteAPI.string(body, "secret"), "secret")
            let (session, sessionSecret) = try AppwriteAPI.call { () throws(SesameError) in
                try sesame.sessions.createFromToken(projectID: caller.project.id, userID: userID, secret: secret,
                                                    clientIP: withKey ? nil : request.remoteAddress, client: clientInfo(request))
            }
            var response = AppwriteAPI.json(SessionModel(session, current: true, secret: withKey ? sessionSecret : ""), status: 201)
            setSessionCookies(&response, request, projectID: caller.project.id, secret: sessionSecret, session: session)
            return response
        }

        // S6: a JWT for the calling session.
        router.add(.POST, "/v1/account/jwts", cors: true) { request in
            let (session, _) = try Caller(request, sesame).requireUser()
            let duration = try AppwriteAPI.seconds(request.body.isEmpty ? nil : try decodeJSONBody(JWTBody.self, from: request).duration, "duration")
            let jwt = try AppwriteAPI.call { () throws(SesameError) in try sesame.jwts.issue(for: session, lifetime: duration) }
            return AppwriteAPI.json(["jwt": jwt], status: 201)
        }

        // S4: the current user.
        router.add(.GET, "/v1/account", cors: true) { request in
            let (_, user) = try Caller(request, sesame).requireUser()
            return AppwriteAPI.json(UserModel(user))
        }

        // S5: the user's sessions.
        router.add(.GET, "/v1/account/sessions", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (current, user) = try caller.requireUser()
            let sessions = try AppwriteAPI.call { () throws(SesameError) in
                try sesame.sessions.list(projectID: caller.project.id, userID: user.id)
            }
            let models = sessions.map { SessionModel($0, current: $0.id == current.id) }
            return AppwriteAPI.json(SessionListModel(total: request.query["total"] == "false" ? 0 : models.count, sessions: models))
        }

        // Ends every session (`current: false` keeps the caller's).
        router.add(.DELETE, "/v1/account/sessions", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (current, user) = try caller.requireUser(allowingPendingMFA: true)
            let body = request.body.isEmpty ? nil : try decodeJSONBody(DeleteSessionsBody.self, from: request)
            let keepCurrent = body?.current == false
            try AppwriteAPI.call { () throws(SesameError) in
                try sesame.sessions.deleteAll(projectID: caller.project.id, userID: user.id, keeping: keepCurrent ? current.id : nil)
            }
            var response = HTTPResponse.noContent()
            if !keepCurrent { clearSessionCookies(&response, request, projectID: caller.project.id) }
            return response
        }

        router.add(.GET, "/v1/account/sessions/:sessionId", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (current, user) = try caller.requireUser()
            let id = sessionID(request, current: current)
            let session = try AppwriteAPI.call(notFound: .userSessionNotFound) { () throws(SesameError) in
                try sesame.sessions.get(projectID: caller.project.id, userID: user.id, id: id)
            }
            return AppwriteAPI.json(SessionModel(session, current: session.id == current.id))
        }

        router.add(.PATCH, "/v1/account/sessions/:sessionId", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (current, user) = try caller.requireUser()
            let id = sessionID(request, current: current)
            let session = try AppwriteAPI.call(notFound: .userSessionNotFound) { () throws(SesameError) in
                try sesame.sessions.refresh(projectID: caller.project.id, userID: user.id, id: id)
            }
            return AppwriteAPI.json(SessionModel(session, current: session.id == current.id))
        }

        router.add(.DELETE, "/v1/account/sessions/:sessionId", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (current, user) = try caller.requireUser(allowingPendingMFA: true)
            let id = sessionID(request, current: current)
            try AppwriteAPI.call(notFound: .userSessionNotFound) { () throws(SesameError) in
                try sesame.sessions.delete(projectID: caller.project.id, userID: user.id, id: id)
            }
            var response = HTTPResponse.noContent()
            if id == current.id { clearSessionCookies(&response, request, projectID: caller.project.id) }
            return response
        }
    }

    /// The path's session ID, with `current` standing for the caller's own session.
    private static func sessionID(_ request: HTTPRequest, current: Session) -> String {
        let id = request.pathParameters["sessionId"] ?? ""
        return id == "current" ? current.id : id
    }

    /// 501 `user_auth_method_unsupported` when the project switched `method` off (methods are on unless switched off).
    static func requireMethod(_ method: String, _ project: Project) throws(HTTPError) {
        if project.authMethods[method] == false { throw .appwrite(.userAuthMethodUnsupported) }
    }

    static func clientInfo(_ request: HTTPRequest) -> ClientInfo {
        ClientInfo(ip: request.remoteAddress,
                   userAgent: request.headers["X-Forwarded-User-Agent"] ?? request.headers["User-Agent"] ?? "")
    }

    /// The cookies and `X-Fallback-Cookies` header of a new session (spec §1.3): the main cookie follows
    /// ``SessionCookie`` (`Secure; SameSite=None` behind HTTPS, `SameSite=Lax` on plain http); the legacy cookie never
    /// names `SameSite`.
    static func setSessionCookies(_ response: inout HTTPResponse, _ request: HTTPRequest, projectID: String, secret: String,
                                  session: Session) {
        let name = Caller.cookieName(projectID)
        let maxAge = max(0, Int(session.expiresAt.timeIntervalSince(session.createdAt)))  // trap-safe: server-side dates, at most a year apart
        response.headers.add("Set-Cookie", SessionCookie.header(name: name, value: secret, maxAge: maxAge, for: request))
        response.headers.add("Set-Cookie", "\(name)_legacy=\(secret); Max-Age=\(maxAge); Path=/; HttpOnly" + (isSecure(request) ? "; Secure" : ""))
        response.headers.set("X-Fallback-Cookies", "{\"\(name)\":\"\(secret)\"}")
        response.headers.set("Access-Control-Expose-Headers", "X-Fallback-Cookies")
    }

    /// Whether the client reached Sesame over HTTPS (``SessionCookie/isSecure(_:)``).
    static func isSecure(_ request: HTTPRequest) -> Bool { SessionCookie.isSecure(request) }

    /// Clears the session cookies after the current session ends, with the attributes they were set with (a
    /// cross-site answer may only touch a `SameSite=None` cookie with another one).
    static func clearSessionCookies(_ response: inout HTTPResponse, _ request: HTTPRequest, projectID: String) {
        let name = Caller.cookieName(projectID)
        response.headers.add("Set-Cookie", SessionCookie.header(name: name, value: "", maxAge: 0, for: request))
        response.headers.add("Set-Cookie", "\(name)_legacy=; Max-Age=0; Path=/; HttpOnly" + (isSecure(request) ? "; Secure" : ""))
        response.headers.set("X-Fallback-Cookies", "[]")
        response.headers.set("Access-Control-Expose-Headers", "X-Fallback-Cookies")
    }
}

private struct CreateAccountBody: Decodable {
    let userId: String?
    let email: String?
    let password: String?
    let name: String?
}

struct JWTBody: Decodable {
    let sessionId: String?
    let duration: ClientNumber?
}

private struct DeleteSessionsBody: Decodable {
    let current: Bool?
}


private struct EmailSessionBody: Decodable {
    let email: String?
    let password: String?
    let duration: ClientNumber?
}
