import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// `POST /operations/request/passkey-options` and `POST /operations/request/passkey-complete` (spec §1.3-§1.5).
///
/// No authentication: the request ID is the only credential. Every answer is HTTP 200 with `{ "data": { "data": … } }`
/// (or `{ "data": { "error": … } }` for a server error or a rate limit). CORS is open to any origin without credentials,
/// since hybrid apps call from WebView origins.
enum PublicRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.POST, "/operations/request/passkey-options", corsAnyOrigin: true) { request in
            let requestID = BotShieldAPI.members(request)?.string("request_id") ?? ""
            let answer = try PartnerRoutes.call { () throws(SesameError) in
                try sesame.inlinePasskey.options(requestID: requestID, clientIP: request.remoteAddress)
            }
            return BotShieldAPI.tagged(optionsResponse(answer), requestID: requestID, sesame)
        }

        router.add(.POST, "/operations/request/passkey-complete", corsAnyOrigin: true) { request in
            try completion(request, sesame, face: "inline") { requestID, challengeID, credentialJSON throws(SesameError) in
                try sesame.inlinePasskey.complete(requestID: requestID, challengeID: challengeID, credentialJSON: credentialJSON,
                                                  clientIP: request.remoteAddress)
            }
        }

        // The hosted hand-off page's calls (the page itself comes with the web pages).
        router.add(.POST, "/operations/handoff/options", corsAnyOrigin: true) { request in
            let requestID = BotShieldAPI.members(request)?.string("request_id") ?? ""
            let answer = try PartnerRoutes.call { () throws(SesameError) in
                try sesame.handOff.options(requestID: requestID, clientIP: request.remoteAddress)
            }
            return BotShieldAPI.tagged(handOffResponse(answer), requestID: requestID, sesame)
        }

        router.add(.POST, "/operations/handoff/complete", corsAnyOrigin: true) { request in
            try completion(request, sesame, face: "handoff") { requestID, challengeID, credentialJSON throws(SesameError) in
                try sesame.handOff.complete(requestID: requestID, challengeID: challengeID, credentialJSON: credentialJSON,
                                            clientIP: request.remoteAddress)
            }
        }

        router.add(.POST, "/operations/handoff/decline", corsAnyOrigin: true) { request in
            let requestID = BotShieldAPI.members(request)?.string("request_id") ?? ""
            let outcome = try PartnerRoutes.call { () throws(SesameError) in try sesame.handOff.decline(requestID: requestID) }
            return BotShieldAPI.tagged(envelope(outcome), requestID: requestID, sesame)
        }
    }

    /// The three shapes of passkey-options.
    static func optionsResponse(_ answer: InlineOptionsAnswer) -> HTTPResponse {
        switch answer {
        case .options(let options):
            BotShieldAPI.envelope { writer in
                writer.member("challenge_id", options.challengeID)
                writer.member("expires_at", Timestamps.rfc3339(options.expiresAt))
                writer.member("options", options.options)
                writer.member("setup_url", options.setupURL)
                writer.member("url", options.url)
            }
        case .fallback(let fallback, let url, let setupURL):
            BotShieldAPI.envelope { writer in
                writer.member("fallback", "app")
                writer.member("reason", InlineOutcome.reason(of: fallback))
                writer.member("setup_url", setupURL)
                writer.member("url", url)
            }
        case .closed(let outcome):
            envelope(outcome)
        }
    }

    /// The hand-off page's view of a request, or its closed outcome.
    static func handOffResponse(_ answer: HandOffAnswer) -> HTTPResponse {
        switch answer {
        case .options(let options):
            BotShieldAPI.envelope { writer in
                writer.member("challenge_id", options.challengeID)
                writer.member("expires_at", Timestamps.rfc3339(options.expiresAt))
                writer.member("link", options.linkIntent)
                writer.member("options", options.options)
                writer.key("partner")
                writer.object { writer in writer.member("name", options.partnerName) }
                writer.member("returns", options.hasReturnURL)
                writer.member("scope", options.scope)
            }
        case .closed(let outcome):
            envelope(outcome)
        }
    }

    /// Reads `{request_id, challenge_id, response}` and runs `complete`. §1.5 step 1: a body that is not an object, or
    /// lacks a field, fails before anything is looked up. The answer carries the ceremony's outcome and reason for the
    /// operator (`face` is `inline` or `handoff`); the client sees only the outcome and its code.
    static func completion(_ request: HTTPRequest, _ sesame: Sesame, face: String,
                           _ complete: (String, String, [UInt8]) throws(SesameError) -> InlineCompletion) throws(HTTPError) -> HTTPResponse {
        func observed(_ reason: String?) -> CeremonyObservation {
            CeremonyObservation(face: face, ceremony: "authentication", reason: reason ?? "")
        }
        let body = BotShieldAPI.members(request)
        guard let requestID = body?.string("request_id") else {
            var response = envelope(.unknownRequest)
            response.ceremony = observed(InlineVerdict.unknownRequest.reason)
            return response
        }
        guard let challengeID = body?.string("challenge_id"), challengeID.utf8.count <= 64, let credentialJSON = body?.object("response") else {
            var response = BotShieldAPI.tagged(envelope(.assertionInvalid), requestID: requestID, sesame)
            response.ceremony = observed(WebAuthnError.Code.malformedResponse.rawValue)
            return response
        }
        let completion: InlineCompletion
        do {
            completion = try complete(requestID, challengeID, credentialJSON)
        } catch {
            var refused = PartnerRoutes.map(error)
            refused.ceremony = observed(error.reason)
            throw refused
        }
        var answer = BotShieldAPI.tagged(envelope(completion.outcome), requestID: requestID, sesame)
        answer.ceremony = observed(completion.reason)
        return answer
    }

    /// `{ outcome, code? }` and nothing else, in the envelope.
    static func envelope(_ verdict: InlineVerdict) -> HTTPResponse {
        let outcome = InlineOutcome(verdict)
        return BotShieldAPI.envelope { writer in
            if let code = outcome.code { writer.member("code", code) }
            writer.member("outcome", outcome.outcome)
        }
    }
}
