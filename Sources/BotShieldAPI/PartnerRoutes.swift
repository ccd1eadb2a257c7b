import Foundation
import SesameCore
import SesameHTTP

/// Pattern B, server to server: grants, verification links, status, the online token check and unlinking.
/// No CORS: an API key must never be in a browser.
enum PartnerRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.POST, "/operations/sdk/create-session") { request in
            let caller = try apiKeyCaller(request, sesame)
            let grant = try call { () throws(SesameError) in try sesame.partners.openGrant(caller) }
            return BotShieldAPI.envelope([
                "anchor_grant_token": grant.secret,
                "anchor_grant_expires_at": Timestamps.rfc3339(grant.expiresAt),
                "anchor_grant_expires_in_seconds": Int(PartnerService.grantLifetime),  // trap-safe: a constant
                "organization": ["id": caller.partner.id, "environment": caller.environment.rawValue],
            ])
        }

        router.add(.POST, "/operations/sdk/logout") { request in
            let grant = BotShieldAPI.string(BotShieldAPI.object(request), "session_token") ?? bearer(request) ?? ""
            let revoked = try call { () throws(SesameError) in try sesame.partners.revokeGrant(grant) }
            return BotShieldAPI.envelope(["logged_out": revoked])
        }

        router.add(.POST, "/operations/sdk/create-verification-link") { request in
            let caller: PartnerCaller
            do throws(SesameError) { caller = try sesame.partners.authenticate(grant: bearer(request) ?? "") } catch {
                throw error.code == .unauthorized ? HTTPError.unauthorized(code: "invalid_grant", message: "The grant is unknown, expired or revoked.")
                    : map(error)
            }
            guard let body = BotShieldAPI.object(request) else { throw HTTPError.badRequest(code: "invalid_json", message: "The body is not a JSON object.") }
            let input = try LinkInput(body)
            let created: VerificationRequest
            do throws(SesameError) {
                created = try sesame.verifications.create(caller, scope: input.scope, partnerUserRef: input.partnerUserRef, link: input.link,
                                                          metadata: input.metadata, returnURL: input.returnURL)
            } catch {
                throw error.reason == PartnerService.returnURLNotAllowed ? returnURLNotAllowed : map(error)
            }
            let url = sesame.inline.handOffURL(requestID: created.id)
            return BotShieldAPI.tagged(BotShieldAPI.envelope([
                "request_id": created.id, "expires_at": Timestamps.rfc3339(created.expiresAt), "scope": created.scope,
                "web_url": url, "deep_link": url, "qr_code_url": sesame.inline.qrCodeURL(requestID: created.id),
            ]), requestID: created.id, sesame)
        }

        router.add(.GET, "/operations/verification/status", requiresJSONBody: false) { request in
            let caller = try apiKeyCaller(request, sesame)
            let requestID = request.query["request_id"] ?? ""
            do throws(SesameError) {
                let found = try sesame.verifications.status(caller, requestID: requestID)
                return BotShieldAPI.tagged(BotShieldAPI.envelope(statusPayload(found)), requestID: requestID, sesame)
            } catch where error.code == .notFound {
                return BotShieldAPI.tagged(BotShieldAPI.envelope(["request_id": String(requestID.prefix(64)), "status": "not_found"]),
                                           requestID: requestID, sesame)
            } catch {
                throw map(error)
            }
        }

        router.add(.POST, "/operations/sdk/verify-token") { request in
            let caller = try apiKeyCaller(request, sesame)
            guard let token = BotShieldAPI.string(BotShieldAPI.object(request), "token") else {
                throw HTTPError.badRequest(code: "token_required", message: "Send the verification token as token.")
            }
            let check = try call { () throws(SesameError) in try sesame.verifications.checkToken(caller, token: token) }
            var payload: [String: Any] = ["valid": check.valid]
            if let reason = check.reason { payload["reason"] = reason }
            if let claims = check.claims, let object = try? JSONSerialization.jsonObject(with: JSONEncoder().encode(claims)) {
                payload["claims"] = object
            }
            return BotShieldAPI.envelope(payload)
        }

        router.add(.POST, "/operations/sdk/unlink") { request in
            let caller = try apiKeyCaller(request, sesame)
            guard let ref = BotShieldAPI.string(BotShieldAPI.object(request), "partner_user_ref"),
                  (try? PartnerService.checkRef(ref)) != nil
            else { throw HTTPError.badRequest(code: "partner_user_ref_invalid", message: "partner_user_ref is 1 to 128 of A-Z a-z 0-9 . _ : -.") }
            let unlinked = try call { () throws(SesameError) in
                try sesame.partners.unlink(partnerID: caller.partner.id, environment: caller.environment, partnerUserRef: ref)
            }
            return BotShieldAPI.envelope(["unlinked": unlinked])
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

        init(_ body: [String: Any]) throws(HTTPError) {
            scope = try PartnerRoutes.scope(body["scope"])
            partnerUserRef = try PartnerRoutes.partnerUserRef(body["partner_user_ref"])
            switch body["link"] {
            case nil, is NSNull: link = false
            case let flag as Bool: link = flag
            default: throw HTTPError.badRequest(code: "link_invalid", message: "link is a boolean.")
            }
            if link, partnerUserRef == nil {
                throw HTTPError.badRequest(code: "link_requires_partner_user_ref", message: "link: true needs partner_user_ref.")
            }
            switch body["return_url"] {
            case nil, is NSNull: returnURL = nil
            case let url as String: returnURL = url
            default: throw PartnerRoutes.returnURLNotAllowed
            }
            switch body["metadata"] {
            case nil, is NSNull: metadata = nil
            case let object as [String: Any]:
                guard let bytes = try? JSONSerialization.data(withJSONObject: object),
                      let checked = try? VerificationService.checkMetadata(Array(bytes))
                else { throw HTTPError.badRequest(code: "metadata_invalid", message: "metadata is a JSON object of at most 2 KB.") }
                metadata = checked
            default: throw HTTPError.badRequest(code: "metadata_invalid", message: "metadata is a JSON object of at most 2 KB.")
            }
        }
    }

    static let returnURLNotAllowed = HTTPError.badRequest(code: "return_url_not_allowed",
                                                          message: "return_url's origin is not registered for this organization.")

    /// A `scope` member (create-verification-link, the widget's create-verification).
    /// - Throws: 400 `scope_invalid`.
    static func scope(_ value: Any?) throws(HTTPError) -> String {
        guard let scope = value as? String, (try? VerificationService.checkScope(scope)) != nil else {
            throw HTTPError.badRequest(code: "scope_invalid", message: "scope is required: 1 to 64 of a-z 0-9 _ . : -.")
        }
        return scope
    }

    /// An optional `partner_user_ref` member (absent or null: none).
    /// - Throws: 400 `partner_user_ref_invalid`.
    static func partnerUserRef(_ value: Any?) throws(HTTPError) -> String? {
        switch value {
        case nil, is NSNull: return nil
        case let ref as String where (try? PartnerService.checkRef(ref)) != nil: return ref
        default:
            throw HTTPError.badRequest(code: "partner_user_ref_invalid",
                                       message: "partner_user_ref is 1 to 128 of A-Z a-z 0-9 . _ : - and never an email address.")
        }
    }

    /// Status, token and timestamps; the same whichever path completed the request.
    static func statusPayload(_ request: VerificationRequest) -> [String: Any] {
        var payload: [String: Any] = [
            "request_id": request.id, "status": request.status.rawValue, "scope": request.scope,
            "created_at": Timestamps.rfc3339(request.createdAt), "expires_at": Timestamps.rfc3339(request.expiresAt),
        ]
        if let ref = request.partnerUserRef { payload["partner_user_ref"] = ref }
        if request.status == .completed {
            if let completedAt = request.completedAt { payload["completed_at"] = Timestamps.rfc3339(completedAt) }
            if let token = request.verificationToken { payload["verification_token"] = token }
        }
        if request.status == .failed, let reason = request.failureReason { payload["failure_reason"] = reason }
        if let metadata = request.metadata, let object = try? JSONSerialization.jsonObject(with: Data(metadata.utf8)) {
            payload["metadata"] = object
        }
        return payload
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
