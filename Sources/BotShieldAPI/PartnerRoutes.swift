import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// Pattern B, server to server: grants, verification links, status, the online token check and unlinking.
/// No CORS: an API key must never be in a browser.
enum PartnerRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.POST, "/operations/sdk/create-session") { request in
            let caller = try apiKeyCaller(request, sesame)
            let grant = try call { () throws(SesameError) in try sesame.partners.openGrant(caller) }
            return BotShieldAPI.envelope { writer in
                writer.member("anchor_grant_expires_at", Timestamps.rfc3339(grant.expiresAt))
                writer.member("anchor_grant_expires_in_seconds", Int(PartnerService.grantLifetime))  // trap-safe: a constant
                writer.member("anchor_grant_token", grant.secret)
                writer.key("organization")
                writer.object { writer in
                    writer.member("environment", caller.environment.rawValue)
                    writer.member("id", caller.partner.id)
                }
            }
        }

        router.add(.POST, "/operations/sdk/logout") { request in
            let grant = BotShieldAPI.members(request)?.string("session_token") ?? bearer(request) ?? ""
            let revoked = try call { () throws(SesameError) in try sesame.partners.revokeGrant(grant) }
            return BotShieldAPI.envelope { writer in writer.member("logged_out", revoked) }
        }

        router.add(.POST, "/operations/sdk/create-verification-link") { request in
            let caller: PartnerCaller
            do throws(SesameError) { caller = try sesame.partners.authenticate(grant: bearer(request) ?? "") } catch {
                throw error.code == .unauthorized ? HTTPError.unauthorized(code: "invalid_grant", message: "The grant is unknown, expired or revoked.")
                    : map(error)
            }
            guard let body = BotShieldAPI.members(request) else { throw HTTPError.badRequest(code: "invalid_json", message: "The body is not a JSON object.") }
            let input = try LinkInput(body)
            let created: VerificationRequest
            do throws(SesameError) {
                created = try sesame.verifications.create(caller, scope: input.scope, partnerUserRef: input.partnerUserRef, link: input.link,
                                                          metadata: input.metadata, returnURL: input.returnURL)
            } catch {
                throw error.reason == PartnerService.returnURLNotAllowed ? returnURLNotAllowed : map(error)
            }
            let url = sesame.inline.handOffURL(requestID: created.id)
            return BotShieldAPI.tagged(BotShieldAPI.envelope { writer in
                writer.member("deep_link", url)
                writer.member("expires_at", Timestamps.rfc3339(created.expiresAt))
                writer.member("qr_code_url", sesame.inline.qrCodeURL(requestID: created.id))
                writer.member("request_id", created.id)
                writer.member("scope", created.scope)
                writer.member("web_url", url)
            }, requestID: created.id, sesame)
        }

        router.add(.GET, "/operations/verification/status", requiresJSONBody: false) { request in
            let caller = try apiKeyCaller(request, sesame)
            let requestID = request.query["request_id"] ?? ""
            do throws(SesameError) {
                let found = try sesame.verifications.status(caller, requestID: requestID)
                return BotShieldAPI.tagged(BotShieldAPI.envelope { writer in writeStatus(found, to: &writer) }, requestID: requestID, sesame)
            } catch where error.code == .notFound {
                return BotShieldAPI.tagged(BotShieldAPI.envelope { writer in
                    writer.member("request_id", String(requestID.prefix(64)))
                    writer.member("status", "not_found")
                }, requestID: requestID, sesame)
            } catch {
                throw map(error)
            }
        }

        router.add(.POST, "/operations/sdk/verify-token") { request in
            let caller = try apiKeyCaller(request, sesame)
            guard let token = BotShieldAPI.members(request)?.string("token") else {
                throw HTTPError.badRequest(code: "token_required", message: "Send the verification token as token.")
            }
            let check = try call { () throws(SesameError) in try sesame.verifications.checkToken(caller, token: token) }
            // Claims are strings, Booleans and whole numbers: they always encode.
            let claims = check.claims.flatMap { try? JSONValue.object($0.jsonObject).jsonEncoded() }
            return BotShieldAPI.envelope { writer in
                if let claims { writer.member("claims", json: claims) }
                if let reason = check.reason { writer.member("reason", reason) }
                writer.member("valid", check.valid)
            }
        }

        router.add(.POST, "/operations/sdk/unlink") { request in
            let caller = try apiKeyCaller(request, sesame)
            guard let ref = BotShieldAPI.members(request)?.string("partner_user_ref"),
                  (try? PartnerService.checkRef(ref)) != nil
            else { throw HTTPError.badRequest(code: "partner_user_ref_invalid", message: "partner_user_ref is 1 to 128 of A-Z a-z 0-9 . _ : -.") }
            let unlinked = try call { () throws(SesameError) in
                try sesame.partners.unlink(partnerID: caller.partner.id, environment: caller.environment, partnerUserRef: ref)
            }
            return BotShieldAPI.envelope { writer in writer.member("unlinked", unlinked) }
        }
    }

    /// The fields of create-verification-link, each checked with its own error code.
    struct LinkInput {
        let scope: String
        let partnerUserRef: String?
        let link: Bool
        let metadata: String?
        /// Checked against the partner's return origins when the request is created.
        let returnURL: String?

        init(_ body: JSONObjectMembers) throws(HTTPError) {
            scope = try PartnerRoutes.scope(in: body)
            partnerUserRef = try PartnerRoutes.partnerUserRef(in: body)
            if body.isAbsentOrNull("link") {
                link = false
            } else if let flag = body.bool("link") {
                link = flag
            } else {
                throw HTTPError.badRequest(code: "link_invalid", message: "link is a boolean.")
            }
            if link, partnerUserRef == nil {
                throw HTTPError.badRequest(code: "link_requires_partner_user_ref", message: "link: true needs partner_user_ref.")
            }
            if body.isAbsentOrNull("return_url") {
                returnURL = nil
            } else if let url = body.string("return_url") {
                returnURL = url
            } else {
                throw PartnerRoutes.returnURLNotAllowed
            }
            if body.isAbsentOrNull("metadata") {
                metadata = nil
            } else if let object = body.object("metadata"), let checked = try? VerificationService.checkMetadata(object) {
                metadata = checked
            } else {
                throw HTTPError.badRequest(code: "metadata_invalid", message: "metadata is a JSON object of at most 2 KB.")
            }
        }
    }

    static let returnURLNotAllowed = HTTPError.badRequest(code: "return_url_not_allowed",
                                                          message: "return_url's origin is not registered for this organization.")

    /// The `scope` member (create-verification-link, the widget's create-verification).
    /// - Throws: 400 `scope_invalid`.
    static func scope(in body: JSONObjectMembers) throws(HTTPError) -> String {
        guard let scope = body.string("scope"), (try? VerificationService.checkScope(scope)) != nil else {
            throw HTTPError.badRequest(code: "scope_invalid", message: "scope is required: 1 to 64 of a-z 0-9 _ . : -.")
        }
        return scope
    }

    /// The optional `partner_user_ref` member (absent or null: none).
    /// - Throws: 400 `partner_user_ref_invalid`.
    static func partnerUserRef(in body: JSONObjectMembers) throws(HTTPError) -> String? {
        if body.isAbsentOrNull("partner_user_ref") { return nil }
        guard let ref = body.string("partner_user_ref"), (try? PartnerService.checkRef(ref)) != nil else {
            throw HTTPError.badRequest(code: "partner_user_ref_invalid",
                                       message: "partner_user_ref is 1 to 128 of A-Z a-z 0-9 . _ : - and never an email address.")
        }
        return ref
    }

    /// Status, token and timestamps; the same whichever path completed the request.
    static func writeStatus(_ request: VerificationRequest, to writer: inout JSONWriter) {
        let completed = request.status == .completed
        if completed, let completedAt = request.completedAt { writer.member("completed_at", Timestamps.rfc3339(completedAt)) }
        writer.member("created_at", Timestamps.rfc3339(request.createdAt))
        writer.member("expires_at", Timestamps.rfc3339(request.expiresAt))
        if request.status == .failed, let reason = request.failureReason { writer.member("failure_reason", reason) }
        if let metadata = VerificationService.storedMetadata(request.metadata) { writer.member("metadata", json: metadata) }
        if let ref = request.partnerUserRef { writer.member("partner_user_ref", ref) }
        writer.member("request_id", request.id)
        writer.member("scope", request.scope)
        writer.member("status", request.status.rawValue)
        if completed, let token = request.verificationToken { writer.member("verification_token", token) }
    }

    /// The caller of an `Authorization: Bearer <API key>` request.
    /// - Throws: 401 `invalid_api_key`.
    static func apiKeyCaller(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) -> PartnerCaller {
        do { return try sesame.partners.authenticate(apiKey: bearer(request) ?? "") } catch {
            throw error.code == .unauthorized ? HTTPError.unauthorized(code: "invalid_api_key", message: "The API key is missing, unknown or revoked.")
                : map(error)
        }
    }

    static func bearer(_ request: HTTPRequest) -> String? {
        request.authorizationCredentials(scheme: "bearer")
    }

    /// Runs a domain call, answering its error with this face's statuses.
    static func call<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch { throw map(error) }
    }

    static func map(_ error: SesameError) -> HTTPError {
        switch error.code {
        case .invalidArgument: HTTPError.badRequest(code: "invalid_argument", message: "The request is invalid.")
        case .notFound: HTTPError.notFound(code: "not_found", message: "Not found.")
        case .unauthorized: HTTPError.unauthorized(code: "unauthorized", message: "Authentication is required.")
        case .rateLimited: HTTPError.tooManyRequests()
        case .unavailable: HTTPError.serviceUnavailable()
        default: HTTPError.internalError()
        }
    }
}
