import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The client API (spec §3, C1-C7) the iOS, Android and web SDKs call: every success is HTTP 200, CORS for any origin
/// (the credentials are headers, never cookies), and the passkey ceremonies run on the ceremony engine.
enum ClientRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        let base = AuthsignalAPI.prefix + "/client"
        let service = sesame.authsignal

        // C1: registration options for the token's user.
        router.add(.POST, base + "/user-authenticators/passkey/registration-options", corsAnyOrigin: true) { request in
            let token = try Authorization.clientToken(request, sesame)
            let body = try AuthsignalAPI.members(request)
            let username = try Wire.string(body, "username"), displayName = try Wire.string(body, "displayName")
            let start = try AuthsignalAPI.call { () throws(SesameError) in
                try service.registrationOptions(token: token, username: username, displayName: displayName, requestOrigin: origin(request))
            }
            return AuthsignalAPI.response(["challengeId": start.challengeID, "options": start.options])
        }

        // C2: verify the registration and add the passkey.
        router.add(.POST, base + "/user-authenticators/passkey", corsAnyOrigin: true) { request in
            let token = try Authorization.clientToken(request, sesame)
            let body = try AuthsignalAPI.members(request)
            let challengeID = try required(body, "challengeId"), credential = try Wire.object(body, "registrationCredential")
            let deviceID = try Wire.string(body, "deviceId")
            let outcome = try observed("registration") { () throws(SesameError) in
                try service.addPasskey(token: token, challengeID: challengeID, credentialJSON: credential, deviceID: deviceID,
                                       requestOrigin: origin(request))
            }
            return respond(outcome, ceremony: "registration") { result in
                AuthsignalAPI.response([
                    "isVerified": true, "accessToken": result.token, "userAuthenticatorId": result.authenticator.id, "userId": result.userID,
                    "credentialId": result.authenticator.passkey.map { Base64URL.encode($0.credentialID) } ?? "",
                    "userAuthenticator": Wire.authenticator(result.authenticator),
                ])
            }
        }

        // C3: a user-less action for a usernameless sign-in with a named action.
        router.add(.POST, base + "/challenge", corsAnyOrigin: true) { request in
            guard case .tenant(let project) = try Authorization.client(request, sesame, token: false, tenant: true) else {
                throw AuthsignalAPI.unauthorized
            }
            let body = try AuthsignalAPI.members(request)
            let action = try required(body, "action"), key = try Wire.string(body, "idempotencyKey")
            let id = try AuthsignalAPI.call { () throws(SesameError) in try service.initiateChallenge(project: project, actionCode: action, idempotencyKey: key) }
            return AuthsignalAPI.response { writer in writer.member("challengeId", id) }
        }

        // C4: authentication options (tenant Basic: usernameless; Bearer: the token's user).
        router.add(.POST, base + "/user-authenticators/passkey/authentication-options", corsAnyOrigin: true) { request in
            let caller = try Authorization.client(request, sesame, token: true, tenant: true)
            let challengeID = try Wire.string(try AuthsignalAPI.members(request), "challengeId")
            let start = try AuthsignalAPI.call { () throws(SesameError) in
                try service.authenticationOptions(caller: caller, challengeID: challengeID, requestOrigin: origin(request))
            }
            return AuthsignalAPI.response { writer in
                writer.member("challengeId", start.challengeID)
                writer.member("options", start.options)
            }
        }

        // C5: verify the assertion.
        router.add(.POST, base + "/verify/passkey", corsAnyOrigin: true) { request in
            let caller = try Authorization.client(request, sesame, token: true, tenant: true)
            let body = try AuthsignalAPI.members(request)
            let challengeID = try required(body, "challengeId"), credential = try Wire.object(body, "authenticationCredential")
            _ = try Wire.string(body, "deviceId")
            let outcome = try observed("authentication") { () throws(SesameError) in
                try service.verifyPasskey(caller: caller, challengeID: challengeID, credentialJSON: credential, requestOrigin: origin(request))
            }
            return respond(outcome, ceremony: "authentication") { result in
                AuthsignalAPI.response { writer in
                    writer.member("accessToken", result.token)
                    writer.member("isVerified", true)
                    writer.member("userAuthenticatorId", result.authenticator.id)
                    if let displayName = result.displayName { writer.member("userDisplayName", displayName) }
                    writer.member("userId", result.userID)
                    if let username = result.username { writer.member("username", username) }
                }
            }
        }

        // C6: does the tenant know this passkey (shouldPromptToCreatePasskey)?
        router.add(.GET, base + "/user-authenticators/passkey", corsAnyOrigin: true) { request in
            guard case .tenant(let project) = try Authorization.client(request, sesame, token: false, tenant: true) else {
                throw AuthsignalAPI.unauthorized
            }
            let ids = (request.query["credentialId"].map { [$0] } ?? [])
                + (request.query["credentialIds"]?.split(separator: ",").map(String.init) ?? [])
            guard !ids.isEmpty else { throw AuthsignalAPI.invalidRequest("credentialId is required.") }
            let found = try AuthsignalAPI.call { () throws(SesameError) in try service.passkey(project: project, credentialIDs: ids, requestOrigin: origin(request)) }
            guard let found else {
                throw HTTPError(status: 404, code: "invalid_credential", message: "No passkey of this tenant has this credential ID.")
            }
            return AuthsignalAPI.response(["credentialId": found.credentialID, "verifiedAt": Wire.timestamp(found.verifiedAt)])
        }

        // C7: the token holder's authenticators.
        router.add(.GET, base + "/user-authenticators", corsAnyOrigin: true) { request in
            guard case .token(let claims, let project) = try Authorization.client(request, sesame, token: true, tenant: false) else {
                throw AuthsignalAPI.unauthorized
            }
            let all = try AuthsignalAPI.call { () throws(SesameError) in try service.authenticators(claims: claims, project: project) }
            return AuthsignalAPI.response(all.map(Wire.authenticator))
        }
    }

    private static func origin(_ request: HTTPRequest) -> String? { request.headers["Origin"] }

    private static func required(_ body: JSONObjectMembers, _ name: String) throws(HTTPError) -> String {
        guard let value = try Wire.string(body, name), !value.isEmpty else { throw AuthsignalAPI.invalidRequest("\(name) is required.") }
        return value
    }

    /// Runs a ceremony finish; a refusal it throws (an unknown or used challenge) is observed with its reason.
    private static func observed(_ ceremony: String, _ body: () throws(SesameError) -> ActionCeremonyOutcome) throws(HTTPError)
        -> ActionCeremonyOutcome
    {
        do { return try body() } catch {
            var mapped = AuthsignalAPI.map(error)
            if error.code == .expired || error.code == .conflict || error.code == .limitReached {
                mapped.ceremony = CeremonyObservation(face: AuthsignalAPI.face, ceremony: ceremony, reason: error.reason)
            }
            throw mapped
        }
    }

    /// The verified answer, `{"isVerified": false}`, or 400 `unknown_credential` / `invalid_credential`; observed.
    private static func respond(_ outcome: ActionCeremonyOutcome, ceremony: String, _ verified: (ActionPasskeyResult) -> HTTPResponse) -> HTTPResponse {
        var response: HTTPResponse
        let reason: String
        switch outcome {
        case .verified(let result):
            response = verified(result)
            reason = ""
        case .refused(let refusal, let why):
            reason = why
            switch refusal {
            case .unknownCredential:
                response = AuthsignalAPI.errorResponse("unknown_credential", "No passkey of this tenant has this credential ID.", status: 400)
            case .otherUsersCredential:
                response = AuthsignalAPI.errorResponse("invalid_credential", "The passkey belongs to another user.", status: 400)
            case .notVerified:
                response = AuthsignalAPI.response(["isVerified": false])
            }
        }
        response.ceremony = CeremonyObservation(face: AuthsignalAPI.face, ceremony: ceremony, reason: reason)
        return response
    }
}
