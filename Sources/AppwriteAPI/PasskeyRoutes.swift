import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// Account passkeys (spec §3.1) and passkey sign-in tokens (§3.2).
enum PasskeyRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        // A1: the caller's verified passkeys.
        router.add(.GET, "/v1/account/passkeys", cors: true) { request in
            let (_, user) = try Caller(request, sesame).requireUser()
            let passkeys = try AppwriteAPI.call { () throws(SesameError) in try sesame.passkeys.list(userID: user.id) }
            return AppwriteAPI.json(try AppwriteAPI.passkeyList(request, passkeys))
        }

        // A2: start a registration in this session.
        router.add(.POST, "/v1/account/passkeys", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (session, user) = try caller.requireUser()
            let body = try decodeJSONBody(CreatePasskeyBody.self, from: request)
            let start = try passkeyCall { () throws(SesameError) in
                try sesame.passkeys.beginRegistration(project: caller.project, user: user, session: session, passkeyID: body.passkeyId,
                                                      name: body.name, requestOrigin: origin(request))
            }
            var response = AppwriteAPI.json(PasskeyChallengeModel(
                id: start.passkeyID, createdAt: AppwriteDate.string(start.createdAt), passkeyId: start.passkeyID,
                expire: AppwriteDate.string(start.expiresAt), publicKey: start.options), status: 201)
            AppwriteAPI.setRateLimitHeaders(&response.headers, start.rateLimit)
            return response
        }

        // A3, A4, A5: one passkey.
        router.add(.GET, "/v1/account/passkeys/:passkeyId", cors: true) { request in
            let (_, user) = try Caller(request, sesame).requireUser()
            let passkey = try passkeyCall { () throws(SesameError) in
                try sesame.passkeys.get(userID: user.id, id: request.pathParameters["passkeyId"] ?? "")
            }
            return AppwriteAPI.json(PasskeyModel(passkey))
        }
        router.add(.PATCH, "/v1/account/passkeys/:passkeyId", cors: true) { request in
            let (_, user) = try Caller(request, sesame).requireUser()
            let name = try AppwriteAPI.required(try decodeJSONBody(RenameBody.self, from: request).name, "name")
            let passkey = try passkeyCall { () throws(SesameError) in
                try sesame.passkeys.rename(userID: user.id, id: request.pathParameters["passkeyId"] ?? "", name: name)
            }
            return AppwriteAPI.json(PasskeyModel(passkey))
        }
        router.add(.DELETE, "/v1/account/passkeys/:passkeyId", cors: true) { request in
            let (session, user) = try Caller(request, sesame).requireUser()
            try passkeyCall { () throws(SesameError) in
                try sesame.passkeys.delete(userID: user.id, id: request.pathParameters["passkeyId"] ?? "", session: session)
            }
            return .noContent()
        }

        // A6: finish the registration with the authenticator's RegistrationResponseJSON.
        router.add(.PUT, "/v1/account/passkeys/:passkeyId/verification", cors: true) { request in
            let caller = try Caller(request, sesame)
            let (session, user) = try caller.requireUser()
            let credential = try credentialJSON(JSONObjectMembers(request.body))
            let (passkey, observed) = try ceremonyCall("registration") { () throws(SesameError) in
                try sesame.passkeys.finishRegistration(project: caller.project, user: user, session: session,
                                                       passkeyID: request.pathParameters["passkeyId"] ?? "", credentialJSON: credential,
                                                       requestOrigin: origin(request))
            }
            var response = AppwriteAPI.json(PasskeyModel(passkey))
            response.ceremony = observed
            return response
        }

        // T1: start a usernameless sign-in (API keys are not rate limited).
        router.add(.POST, "/v1/account/tokens/passkey", cors: true) { request in
            let caller = try Caller(request, sesame)
            let withKey = try caller.requireSessionsWrite(sesame)
            let start = try passkeyCall { () throws(SesameError) in
                try sesame.passkeys.beginSignIn(project: caller.project, requestOrigin: origin(request),
                                                clientIP: withKey ? nil : request.remoteAddress)
            }
            var response = AppwriteAPI.json(PasskeyChallengeModel(
                id: start.challengeID, createdAt: AppwriteDate.string(start.createdAt), passkeyId: "",
                expire: AppwriteDate.string(start.expiresAt), publicKey: start.options), status: 201)
            AppwriteAPI.setRateLimitHeaders(&response.headers, start.rateLimit)
            return response
        }

        // T2: finish it with the AuthenticationResponseJSON; answers a TokenSecret for POST /v1/account/sessions/token.
        router.add(.PUT, "/v1/account/tokens/passkey", cors: true) { request in
            let caller = try Caller(request, sesame)
            let withKey = try caller.requireSessionsWrite(sesame)
            let body = try AppwriteAPI.members(request)
            let challengeID = try AppwriteAPI.required(try AppwriteAPI.string(body, "challengeId"), "challengeId")
            let credential = try credentialJSON(body)
            let (token, observed) = try markingUnknownCredential { () throws(HTTPError) in
                try ceremonyCall("authentication") { () throws(SesameError) in
                    try sesame.passkeys.finishSignIn(project: caller.project, challengeID: challengeID, credentialJSON: credential,
                                                     requestOrigin: origin(request), clientIP: withKey ? nil : request.remoteAddress)
                }
            }
            var response = AppwriteAPI.json(TokenSecretModel(token), status: 201)
            response.ceremony = observed
            AppwriteAPI.setRateLimitHeaders(&response.headers, token.rateLimit)
            return response
        }
    }

    /// Runs a passkey domain call: `not_found` is `user_passkey_not_found`, `conflict` `user_passkey_already_exists`.
    static func passkeyCall<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        try AppwriteAPI.call(notFound: .userPasskeyNotFound, conflict: .userPasskeyAlreadyExists, body)
    }

    /// Runs the domain call that finishes a ceremony: the client gets this face's generic error, the operator (metrics,
    /// request log) the reason, attached to the answer either way.
    static func ceremonyCall<T>(_ ceremony: String, _ body: () throws(SesameError) -> T) throws(HTTPError) -> (T, CeremonyObservation) {
        do {
            return (try body(), CeremonyObservation(face: "appwrite", ceremony: ceremony, reason: ""))
        } catch {
            var refused = appwriteError(error, notFound: .userPasskeyNotFound, conflict: .userPasskeyAlreadyExists)
            refused.ceremony = CeremonyObservation(face: "appwrite", ceremony: ceremony, reason: error.reason)
            throw refused
        }
    }

    /// Runs a sign-in finish; a refusal because no passkey has the credential ID (deleted, or never registered here)
    /// keeps Appwrite's generic `user_passkey_invalid` but adds `X-Sesame-Unknown-Credential: true`, so the browser
    /// SDK can tell the browser to forget that passkey (WebAuthn's `signalUnknownCredential`). It tells the holder of a
    /// credential only that this server does not know it, which is what the Signal API exists for.
    static func markingUnknownCredential<T>(_ body: () throws(HTTPError) -> T) throws(HTTPError) -> T {
        do {
            return try body()
        } catch {
            var refused = error
            if refused.ceremony?.reason == "unknown_credential" {
                refused.headers.set("X-Sesame-Unknown-Credential", "true")
                refused.headers.set("Access-Control-Expose-Headers", "X-Sesame-Unknown-Credential")
            }
            throw refused
        }
    }

    /// The calling web origin: `Origin`, else the origin of `Referer` (spec §4.3).
    static func origin(_ request: HTTPRequest) -> String? {
        if let origin = request.headers["Origin"], !origin.isEmpty { return origin }
        guard let referer = request.headers["Referer"], let url = URL(string: referer), let scheme = url.scheme, let host = url.host
        else { return nil }
        return url.port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }

    /// The `credential` member of the body (`nil`: not a JSON object), an object, as its JSON text for the WebAuthn core.
    static func credentialJSON(_ body: JSONObjectMembers?) throws(HTTPError) -> [UInt8] {
        guard let body, body.contains("credential") else { throw .appwrite(.generalArgumentInvalid, "Param \"credential\" is not optional.") }
        guard let credential = body.object("credential") else {
            throw .appwrite(.generalArgumentInvalid, "Invalid credential param: Value must be a valid object.")
        }
        return credential
    }
}

private struct CreatePasskeyBody: Decodable {
    let passkeyId: String?
    let name: String?
}

private struct RenameBody: Decodable {
    let name: String?
}

