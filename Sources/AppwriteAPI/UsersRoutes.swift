import Foundation
import SesameCore
import SesameHTTP

/// The Users service (spec §3.4), for API keys: users, their sessions and their passkeys. Appwrite's `users.read` and
/// `users.write` scopes are Sesame's scopes of the same names.
enum UsersRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.GET, "/v1/users", cors: true) { request in
            let caller = try Caller(request, sesame)
            try caller.requireKey(sesame, .usersRead)
            let users = try AppwriteAPI.call { () throws(SesameError) in try sesame.users.list(projectID: caller.project.id) }.map(UserModel.init)
            let (page, total) = try AppwriteAPI.page(request, users, attributes: ["$id", "$createdAt", "name", "email", "registration"],
                                                     id: \.id) { user, attribute in
                switch attribute {
                case "$createdAt", "registration": user.createdAt
                case "name": user.name
                case "email": user.email
                default: user.id
                }
            }
            return AppwriteAPI.json(UserListModel(total: total, users: page))
        }
        router.add(.POST, "/v1/users", cors: true) { request in
            let caller = try Caller(request, sesame)
            try caller.requireKey(sesame, .usersWrite)
            let body = try decodeJSONBody(CreateUserBody.self, from: request)
            let userID = try AppwriteAPI.required(body.userId, "userId")
            if body.phone != nil { throw HTTPError.appwrite(.generalArgumentInvalid, "Invalid phone param: phone numbers are not supported.") }
            let user = try AppwriteAPI.call(conflict: .userAlreadyExists) { () throws(SesameError) in
                try sesame.users.create(projectID: caller.project.id, id: userID, email: body.email, password: body.password, name: body.name)
            }
            return AppwriteAPI.json(UserModel(user), status: 201)
        }
        router.add(.GET, "/v1/users/:userId", cors: true) { request in
            let (_, user) = try target(request, sesame, .usersRead)
            return AppwriteAPI.json(UserModel(user))
        }
        router.add(.DELETE, "/v1/users/:userId", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            try userCall { () throws(SesameError) in try sesame.users.delete(projectID: caller.project.id, id: user.id) }
            return .noContent()
        }
        router.add(.PATCH, "/v1/users/:userId/status", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let status = try AppwriteAPI.required(try decodeJSONBody(StatusBody.self, from: request).status, "status")
            let updated = try userCall { () throws(SesameError) in
                try sesame.users.setStatus(projectID: caller.project.id, id: user.id, active: status)
            }
            return AppwriteAPI.json(UserModel(updated))
        }

        router.add(.PATCH, "/v1/users/:userId/mfa", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let mfa = try AppwriteAPI.required(try decodeJSONBody(FlagsBody.self, from: request).mfa, "mfa")
            let updated = try userCall { () throws(SesameError) in try sesame.users.setFlags(projectID: caller.project.id, id: user.id, mfa: mfa) }
            return AppwriteAPI.json(UserModel(updated))
        }
        router.add(.PATCH, "/v1/users/:userId/verification", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let verified = try AppwriteAPI.required(try decodeJSONBody(FlagsBody.self, from: request).emailVerification, "emailVerification")
            let updated = try userCall { () throws(SesameError) in
                try sesame.users.setFlags(projectID: caller.project.id, id: user.id, emailVerified: verified)
            }
            return AppwriteAPI.json(UserModel(updated))
        }

        // Sessions: minted with the key (`provider` `server`, the secret in the body), or listed.
        router.add(.POST, "/v1/users/:userId/sessions", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let (session, secret) = try userCall { () throws(SesameError) in
                try sesame.sessions.create(projectID: caller.project.id, userID: user.id, provider: "server", factors: ["server"],
                                           client: AccountRoutes.clientInfo(request))
            }
            return AppwriteAPI.json(SessionModel(session, current: false, secret: secret), status: 201)
        }
        router.add(.GET, "/v1/users/:userId/sessions", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersRead)
            let sessions = try userCall { () throws(SesameError) in try sesame.sessions.list(projectID: caller.project.id, userID: user.id) }
                .map { SessionModel($0, current: false) }
            return AppwriteAPI.json(SessionListModel(total: request.query["total"] == "false" ? 0 : sessions.count, sessions: sessions))
        }

        // A JWT for one of the user's sessions (`recent()`, the default, is the newest).
        router.add(.POST, "/v1/users/:userId/jwts", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let body = request.body.isEmpty ? nil : try decodeJSONBody(JWTBody.self, from: request)
            let duration = try AppwriteAPI.seconds(body?.duration, "duration")
            let sessions = try userCall { () throws(SesameError) in try sesame.sessions.list(projectID: caller.project.id, userID: user.id) }
            let wanted = body?.sessionId ?? "recent()"
            guard let session = wanted == "recent()" ? sessions.max(by: { $0.createdAt < $1.createdAt }) : sessions.first(where: { $0.id == wanted })
            else { throw HTTPError.appwrite(.userSessionNotFound) }
            let jwt = try AppwriteAPI.call { () throws(SesameError) in try sesame.jwts.issue(for: session, lifetime: duration) }
            return AppwriteAPI.json(["jwt": jwt], status: 201)
        }

        // A sign-in token for the user (Token; the secret is shown to the key only), exchanged on /v1/account/sessions/token.
        router.add(.POST, "/v1/users/:userId/tokens", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            let body = request.body.isEmpty ? nil : try decodeJSONBody(TokenBody.self, from: request)
            let length = try AppwriteAPI.integer(body?.length, "length"), expire = try AppwriteAPI.seconds(body?.expire, "expire")
            let token = try userCall { () throws(SesameError) in
                try sesame.sessions.createToken(projectID: caller.project.id, userID: user.id, length: length, lifetime: expire)
            }
            return AppwriteAPI.json(TokenModel(id: token.id, createdAt: AppwriteDate.string(token.createdAt), userId: user.id,
                                               secret: token.secret, expire: AppwriteDate.string(token.expiresAt), phrase: ""), status: 201)
        }

        router.add(.DELETE, "/v1/users/:userId/sessions", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            try userCall { () throws(SesameError) in try sesame.sessions.deleteAll(projectID: caller.project.id, userID: user.id) }
            return .noContent()
        }
        router.add(.DELETE, "/v1/users/:userId/sessions/:sessionId", cors: true) { request in
            let (caller, user) = try target(request, sesame, .usersWrite)
            try AppwriteAPI.call(notFound: .userSessionNotFound) { () throws(SesameError) in
                try sesame.sessions.delete(projectID: caller.project.id, userID: user.id, id: request.pathParameters["sessionId"] ?? "")
            }
            return .noContent()
        }

        // Passkeys: list, get, rename, delete (no recency rule for API keys; registration is the user's own).
        router.add(.GET, "/v1/users/:userId/passkeys", cors: true) { request in
            let (_, user) = try target(request, sesame, .usersRead)
            let passkeys = try userCall { () throws(SesameError) in try sesame.passkeys.list(userID: user.id) }
            return AppwriteAPI.json(try AppwriteAPI.passkeyList(request, passkeys))
        }
        router.add(.GET, "/v1/users/:userId/passkeys/:passkeyId", cors: true) { request in
            let (_, user) = try target(request, sesame, .usersRead)
            let passkey = try PasskeyRoutes.passkeyCall { () throws(SesameError) in
                try sesame.passkeys.get(userID: user.id, id: request.pathParameters["passkeyId"] ?? "")
            }
            return AppwriteAPI.json(PasskeyModel(passkey))
        }
        router.add(.PATCH, "/v1/users/:userId/passkeys/:passkeyId", cors: true) { request in
            let (_, user) = try target(request, sesame, .usersWrite)
            let name = try AppwriteAPI.required(try decodeJSONBody(RenameBody.self, from: request).name, "name")
            let passkey = try PasskeyRoutes.passkeyCall { () throws(SesameError) in
                try sesame.passkeys.rename(userID: user.id, id: request.pathParameters["passkeyId"] ?? "", name: name)
            }
            return AppwriteAPI.json(PasskeyModel(passkey))
        }
        router.add(.DELETE, "/v1/users/:userId/passkeys/:passkeyId", cors: true) { request in
            let (_, user) = try target(request, sesame, .usersWrite)
            try PasskeyRoutes.passkeyCall { () throws(SesameError) in
                try sesame.passkeys.delete(userID: user.id, id: request.pathParameters["passkeyId"] ?? "", session: nil)
            }
            return .noContent()
        }
    }

    /// The caller (an API key with `scope`) and the user the path names.
    /// - Throws: 401 `general_unauthorized_scope`, 404 `user_not_found`.
    private static func target(_ request: HTTPRequest, _ sesame: Sesame, _ scope: APIKey.Scope) throws(HTTPError) -> (Caller, User) {
        let caller = try Caller(request, sesame)
        try caller.requireKey(sesame, scope)
        let user = try userCall { () throws(SesameError) in
            try sesame.users.get(projectID: caller.project.id, id: request.pathParameters["userId"] ?? "")
        }
        return (caller, user)
    }

    /// Runs a domain call where `not_found` means the user: `user_not_found`.
    private static func userCall<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        try AppwriteAPI.call(notFound: .userNotFound, conflict: .userAlreadyExists, body)
    }
}

private struct CreateUserBody: Decodable {
    let userId: String?
    let email: String?
    let phone: String?
    let password: String?
    let name: String?
}

private struct TokenBody: Decodable {
    let length: ClientNumber?
    let expire: ClientNumber?
}

private struct FlagsBody: Decodable {
    let mfa: Bool?
    let emailVerification: Bool?
}

private struct StatusBody: Decodable {
    let status: Bool?
}

private struct RenameBody: Decodable {
    let name: String?
}
