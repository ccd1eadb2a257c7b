import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// `POST /operations/widget/create-verification` and `GET /operations/widget/status` (spec §2.9, §2.11): the web
/// widget's public calls, from partner pages in the browser.
///
/// Like the other public endpoints: CORS open to any origin without credentials, `Cache-Control: no-store`, and every
/// answer HTTP 200 with `{ "data": { "data": … } }`, or `{ "data": { "error": { "statusCode", "message" } } }` for a
/// refusal (403 `origin_not_allowed`, 401 `invalid_site_key`, 400 validation, 429 over a limit). The site key is public;
/// the page's `Origin` is what the key is bound to.
enum WidgetRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.POST, "/operations/widget/create-verification", corsAnyOrigin: true) { request in
            guard let body = BotShieldAPI.members(request) else { throw HTTPError.badRequest(code: "invalid_json", message: "The body is not a JSON object.") }
            guard let siteKey = body.string("site_key") else { throw invalidSiteKey }
            let scope = try PartnerRoutes.scope(in: body)
            let ref = try PartnerRoutes.partnerUserRef(in: body)
            let created: VerificationRequest
            do throws(SesameError) {
                created = try sesame.widget.createVerification(siteKey: siteKey, origin: request.headers["Origin"], scope: scope,
                                                               partnerUserRef: ref, clientIP: request.remoteAddress)
            } catch {
                switch error.reason {
                case WidgetService.invalidSiteKey: throw invalidSiteKey
                case WidgetService.originNotAllowed:
                    throw HTTPError.forbidden(code: "origin_not_allowed", message: "This page's origin is not registered for the site key.")
                default: throw PartnerRoutes.map(error)
                }
            }
            return BotShieldAPI.tagged(BotShieldAPI.envelope { writer in
                writer.member("expires_at", Timestamps.rfc3339(created.expiresAt))
                writer.member("qr_code_url", sesame.inline.qrCodeURL(requestID: created.id))
                writer.member("request_id", created.id)
                writer.member("web_url", sesame.inline.handOffURL(requestID: created.id))
            }, requestID: created.id, sesame)
        }

        // `{status}` only: no token, no ref, no timestamps (the partner's server reads those with its API key).
        router.add(.GET, "/operations/widget/status", corsAnyOrigin: true, requiresJSONBody: false) { request in
            let requestID = request.query["request_id"] ?? ""
            let status = try PartnerRoutes.call { () throws(SesameError) in
                try sesame.widget.status(requestID: requestID, clientIP: request.remoteAddress)
            }
            return BotShieldAPI.tagged(BotShieldAPI.envelope { writer in writer.member("status", status?.rawValue ?? "not_found") },
                                       requestID: requestID, sesame)
        }
    }

    static let invalidSiteKey = HTTPError.unauthorized(code: "invalid_site_key", message: "The site key is missing, unknown or revoked.")
}
