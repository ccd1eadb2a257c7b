import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The server API (spec §2, S1-S10): the integrator's backend with its tenant secret in HTTP Basic. No CORS: a tenant
/// secret must never be in a browser.
enum ServerRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        let base = AuthsignalAPI.prefix
        let service = sesame.authsignal

        // S1: track an action.
        router.add(.POST, base + "/users/:userId/actions/:action") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let body = try AuthsignalAPI.members(request)
            let input = TrackInput(idempotencyKey: try Wire.string(body, "idempotencyKey"), scopes: try scopes(body),
                                   attributes: try Wire.attributes(body))
            let tracked = try AuthsignalAPI.call { () throws(SesameError) in
                try service.track(project: project, userID: userID(request), actionCode: request.pathParameters["action"] ?? "", input: input)
            }
            return AuthsignalAPI.response { writer in
                writer.member("allowedVerificationMethods", strings: Wire.allowedMethods(tracked.user))
                writer.member("defaultVerificationMethod", tracked.user.enrolledVerificationMethods.first ?? passkeyVerificationMethod)
                writer.member("enrolledVerificationMethods", strings: tracked.user.enrolledVerificationMethods)
                writer.member("idempotencyKey", tracked.action.idempotencyKey)
                writer.member("isEnrolled", tracked.user.isEnrolled)
                writer.member("ruleIds", strings: [])
                writer.member("state", tracked.action.state.rawValue)
                writer.member("token", tracked.token)
                writer.member("url", sesame.inline.apiURL + "/authsignal/challenge?token=" + tracked.token)
            }
        }

        // S2: validate a token from the app.
        router.add(.POST, base + "/validate") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let body = try AuthsignalAPI.members(request)
            guard let token = try Wire.string(body, "token", limit: 4096) else { throw AuthsignalAPI.invalidRequest("token is required.") }
            let userID = try Wire.string(body, "userId"), actionCode = try Wire.string(body, "action", limit: 64)
            let validation = try AuthsignalAPI.call { () throws(SesameError) in
                try service.validate(project: project, token: token, userID: userID, actionCode: actionCode)
            }
            let action = validation.action
            return AuthsignalAPI.response { writer in
                if let action {
                    writer.member("action", action.actionCode)
                    writer.member("actionCode", action.actionCode)
                }
                if let error = validation.error { writer.member("error", error) }
                if let action { writer.member("idempotencyKey", action.idempotencyKey) }
                writer.member("isValid", validation.isValid)
                if let action {
                    writer.member("state", action.state.rawValue)
                    writer.member("stateUpdatedAt", Wire.timestamp(action.stateUpdatedAt))
                    if let userID = action.userID { writer.member("userId", userID) }
                    if let method = action.verificationMethod { writer.member("verificationMethod", method) }
                }
            }
        }

        // S3, S4: read and set an action's state.
        router.add(.GET, base + "/users/:userId/actions/:action/:idempotencyKey") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let action = try AuthsignalAPI.call { () throws(SesameError) in
                try service.action(project: project, userID: userID(request), actionCode: request.pathParameters["action"] ?? "",
                                   idempotencyKey: request.pathParameters["idempotencyKey"] ?? "")
            }
            return AuthsignalAPI.response(Wire.action(action))
        }
        router.add(.PATCH, base + "/users/:userId/actions/:action/:idempotencyKey") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let body = try AuthsignalAPI.members(request)
            guard let text = try Wire.string(body, "state", limit: 32), let state = ActionState(rawValue: text) else {
                throw AuthsignalAPI.invalidRequest("state must be one of \(ActionState.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            let action = try AuthsignalAPI.call { () throws(SesameError) in
                try service.updateAction(project: project, userID: userID(request), actionCode: request.pathParameters["action"] ?? "",
                                         idempotencyKey: request.pathParameters["idempotencyKey"] ?? "", state: state)
            }
            return AuthsignalAPI.response(Wire.action(action))
        }

        // S5-S7: users.
        router.add(.GET, base + "/users/:userId") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let user = try AuthsignalAPI.call { () throws(SesameError) in try service.user(project: project, userID: userID(request)) }
            return AuthsignalAPI.response(Wire.user(user))
        }
        let update: @Sendable (HTTPRequest) throws -> HTTPResponse = { request in
            let project = try Authorization.serverTenant(request, sesame)
            let attributes = try Wire.attributes(try AuthsignalAPI.members(request))
            let user = try AuthsignalAPI.call { () throws(SesameError) in
                try service.updateUser(project: project, userID: userID(request), attributes: attributes)
            }
            return AuthsignalAPI.response(Wire.user(user))
        }
        router.add(.PATCH, base + "/users/:userId", update)
        router.add(.POST, base + "/users/:userId", update)
        router.add(.DELETE, base + "/users/:userId") { request in
            let project = try Authorization.serverTenant(request, sesame)
            try AuthsignalAPI.call { () throws(SesameError) in try service.deleteUser(project: project, userID: userID(request)) }
            return AuthsignalAPI.response([String: Any]())
        }

        // S8-S10: authenticators.
        router.add(.GET, base + "/users/:userId/authenticators") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let all = try AuthsignalAPI.call { () throws(SesameError) in try service.authenticators(project: project, userID: userID(request)) }
            return AuthsignalAPI.response(all.map(Wire.authenticator))
        }
        router.add(.POST, base + "/users/:userId/authenticators") { request in
            let project = try Authorization.serverTenant(request, sesame)
            let body = try AuthsignalAPI.members(request)
            guard let method = try Wire.string(body, "verificationMethod", limit: 32) else {
                throw AuthsignalAPI.invalidRequest("verificationMethod is required.")
            }
            let email = try Wire.string(body, "email"), phone = try Wire.string(body, "phoneNumber")
            _ = try Wire.bool(body, "isDefault")
            let enrolled = try AuthsignalAPI.call { () throws(SesameError) in
                try service.enrollContact(project: project, userID: userID(request), verificationMethod: method, email: email, phoneNumber: phone)
            }
            return AuthsignalAPI.response(["authenticator": Wire.authenticator(enrolled), "recoveryCodes": [String]()])
        }
        router.add(.DELETE, base + "/users/:userId/authenticators/:userAuthenticatorId") { request in
            let project = try Authorization.serverTenant(request, sesame)
            try AuthsignalAPI.call { () throws(SesameError) in
                try service.deleteAuthenticator(project: project, userID: userID(request),
                                                authenticatorID: request.pathParameters["userAuthenticatorId"] ?? "")
            }
            return AuthsignalAPI.response([String: Any]())
        }
    }

    /// The integrator's user ID (the router has percent-decoded the segment).
    private static func userID(_ request: HTTPRequest) -> String { request.pathParameters["userId"] ?? "" }

    /// Track's `scope`: space-separated authenticator scopes.
    /// - Throws: 400 `invalid_request` for a scope the spec does not name.
    private static func scopes(_ body: JSONObjectMembers) throws(HTTPError) -> Set<AuthenticatorScope> {
        guard let text = try Wire.string(body, "scope") else { return [] }
        var scopes = Set<AuthenticatorScope>()
        for word in text.split(separator: " ") {
            guard let scope = AuthenticatorScope(rawValue: String(word)) else {
                throw AuthsignalAPI.invalidRequest("scope is a space-separated list of read:, add:, update: and remove:authenticators.")
            }
            scopes.insert(scope)
        }
        return scopes
    }
}
