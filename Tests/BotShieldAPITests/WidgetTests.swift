import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web widget's public endpoints (spec §2.9, §2.11, P14) against a real server on loopback.
@Suite struct WidgetTests {
    static let shop = "https://shop.example"

    /// A test-environment site key of the harness's partner for `origins`.
    static func siteKey(_ harness: InlineHarness, origins: [String] = [shop], environment: PartnerEnvironment = .test) throws -> String {
        try harness.sesame.partners.createSiteKey(partnerID: harness.partner.id, environment: environment, origins: origins).id
    }

    static func create(_ harness: InlineHarness, siteKey: String, origin: String? = shop, body: [String: Any]? = nil) async throws -> HTTPReply {
        try await harness.post("/operations/widget/create-verification", body ?? ["site_key": siteKey, "scope": "checkout"],
                               headers: origin.map { ["Origin": $0] } ?? [:])
    }

    static func status(_ harness: InlineHarness, _ requestID: String) async throws -> HTTPReply {
        try await harness.send("GET", "/operations/widget/status?request_id=\(requestID)", body: nil, headers: ["Origin": shop])
    }

    static func expectRefused(_ reply: HTTPReply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
        #expect(reply.publicError?["statusCode"] as? Int == status, "\(reply)", sourceLocation: sourceLocation)
        #expect(reply.publicError?["message"] as? String == code, "\(reply)", sourceLocation: sourceLocation)
        #expect(reply.data == nil, sourceLocation: sourceLocation)
        #expect(reply.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test("a registered page origin opens an ordinary request in the key's environment; any other origin is 403 (P14)",
          arguments: Backend.allCases)
    func originCheck(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness, origins: ["HTTPS://Shop.Example:443/", "http://localhost:3000"])
        #expect(try harness.sesame.partners.listSiteKeys(partnerID: harness.partner.id).first?.origins == [Self.shop, "http://localhost:3000"])

        let created = try await Self.create(harness, siteKey: key)
        #expect(created.status == 200 && created.header("Cache-Control") == "no-store", "\(created)")
        #expect(created.header("Access-Control-Allow-Origin") == "*" && created.header("Access-Control-Allow-Credentials") == nil)
        let payload = try #require(created.data, "\(created)")
        #expect(Set(payload.keys) == ["request_id", "web_url", "qr_code_url", "expires_at"])
        let requestID = try #require(payload["request_id"] as? String)
        #expect(VerificationService.isRequestID(requestID))
        #expect(payload["web_url"] as? String == "\(InlineHarness.appURL)/verify?request_id=\(requestID)")
        #expect(payload["qr_code_url"] as? String == "\(InlineHarness.apiURL)/operations/qr/\(requestID).svg")
        // The partner's server sees it with its test key (the site key's environment), not with its live key.
        let status = try await harness.status(requestID, key: harness.testKey)
        #expect(status.data?["status"] as? String == "pending" && status.data?["scope"] as? String == "checkout", "\(status)")
        #expect(try await harness.status(requestID, key: harness.liveKey).data?["status"] as? String == "not_found")
        #expect(try await Self.create(harness, siteKey: key, origin: "http://localhost:3000").data != nil)

        for origin in ["https://evil.example", "https://shop.example.evil.example", "http://shop.example", "https://shop.example:8443", "null", ""] {
            Self.expectRefused(try await Self.create(harness, siteKey: key, origin: origin), 403, "origin_not_allowed")
        }
        Self.expectRefused(try await Self.create(harness, siteKey: key, origin: nil), 403, "origin_not_allowed")
    }

    @Test("a missing, malformed, unknown or revoked site key is 401 invalid_site_key", arguments: Backend.allCases)
    func siteKeys(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness)
        for body: [String: Any] in [
            ["scope": "checkout"], ["site_key": 42, "scope": "checkout"], ["site_key": "pk_test_unknown", "scope": "checkout"],
            ["site_key": harness.testKey, "scope": "checkout"], ["site_key": String(repeating: "pk_test_", count: 40), "scope": "checkout"],
        ] {
            Self.expectRefused(try await Self.create(harness, siteKey: key, body: body), 401, "invalid_site_key")
        }
        #expect(try await Self.create(harness, siteKey: key).data != nil)
        try harness.sesame.partners.revokeSiteKey(partnerID: harness.partner.id, id: key)
        Self.expectRefused(try await Self.create(harness, siteKey: key), 401, "invalid_site_key")
        #expect(try harness.sesame.partners.listSiteKeys(partnerID: harness.partner.id).first?.revokedAt != nil)
        // A revoked key can neither be revoked again nor get new origins.
        #expect(throws: SesameError(.notFound, "")) { try harness.sesame.partners.revokeSiteKey(partnerID: harness.partner.id, id: key) }
        #expect(throws: SesameError(.notFound, "")) {
            try harness.sesame.partners.setSiteKeyOrigins(partnerID: harness.partner.id, id: key, origins: [Self.shop])
        }
    }

    @Test("a body that is not JSON, a bad scope or a bad ref get the face's 400 and 415 codes", arguments: Backend.allCases)
    func validation(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness)
        let notJSON = try await harness.send("POST", "/operations/widget/create-verification", body: Data("nope".utf8), headers: ["Origin": Self.shop])
        Self.expectRefused(notJSON, 400, "invalid_json")
        let plain = try await harness.send("POST", "/operations/widget/create-verification", body: Data("{}".utf8), headers: ["Origin": Self.shop],
                                           contentType: "text/plain")
        Self.expectRefused(plain, 415, plain.publicError?["message"] as? String ?? "?")
        for scope: Any in ["", "Checkout", String(repeating: "a", count: 65), 7] {
            Self.expectRefused(try await Self.create(harness, siteKey: key, body: ["site_key": key, "scope": scope]), 400, "scope_invalid")
        }
        for ref: Any in ["grace@example.org", "", 12] {
            let body: [String: Any] = ["site_key": key, "scope": "checkout", "partner_user_ref": ref]
            Self.expectRefused(try await Self.create(harness, siteKey: key, body: body), 400, "partner_user_ref_invalid")
        }
    }

    @Test("create-verification is limited per site key and per IP; status per IP (HTTP 200, statusCode 429)", arguments: Backend.allCases)
    func rateLimits(backend: Backend) async throws {
        let perKey = try InlineHarness(backend, siteKeyLimit: 3)
        let key = try Self.siteKey(perKey), other = try Self.siteKey(perKey)
        for _ in 0..<3 { #expect(try await Self.create(perKey, siteKey: key).data != nil) }
        Self.expectRefused(try await Self.create(perKey, siteKey: key), 429, "too_many_requests")
        // Another key of the same partner has its own budget.
        #expect(try await Self.create(perKey, siteKey: other).data != nil)

        let perIP = try InlineHarness(backend, ipLimit: 4)
        let ipKey = try Self.siteKey(perIP)
        let requestID = try #require(try await Self.create(perIP, siteKey: ipKey).data?["request_id"] as? String)
        #expect(try await Self.status(perIP, requestID).data?["status"] as? String == "pending")
        #expect(try await Self.create(perIP, siteKey: ipKey).data != nil)
        #expect(try await Self.status(perIP, requestID).data?["status"] as? String == "pending")
        Self.expectRefused(try await Self.status(perIP, requestID), 429, "too_many_requests")
        Self.expectRefused(try await Self.create(perIP, siteKey: ipKey), 429, "too_many_requests")
        perIP.clock.advance(by: 61)
        #expect(try await Self.status(perIP, requestID).data?["status"] as? String == "pending")
    }

    @Test("both endpoints answer CORS preflights for any origin, without credentials", arguments: Backend.allCases)
    func preflight(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        for (path, method) in [("/operations/widget/create-verification", "POST"), ("/operations/widget/status", "GET")] {
            let reply = try await harness.send("OPTIONS", path, body: nil, headers: [
                "Origin": "https://anywhere.example", "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "content-type",
            ])
            #expect(reply.status == 204, "\(reply)")
            #expect(reply.header("Access-Control-Allow-Origin") == "*")
            #expect(reply.header("Access-Control-Allow-Methods")?.contains(method) == true)
            #expect(reply.header("Access-Control-Allow-Headers")?.lowercased() == "content-type")
            #expect(reply.header("Access-Control-Allow-Credentials") == nil)
        }
        // The partner API keeps no CORS.
        let partner = try await harness.send("OPTIONS", "/operations/sdk/create-verification-link", body: nil,
                                             headers: ["Origin": Self.shop, "Access-Control-Request-Method": "POST"])
        #expect(partner.header("Access-Control-Allow-Origin") == nil)
    }

    @Test("status tells {status} only, never the token, and nothing about requests the widget did not open", arguments: Backend.allCases)
    func status(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness)
        let person = try harness.person()
        try harness.link("acct_grace", to: person.id, environment: .test)
        let body: [String: Any] = ["site_key": key, "scope": "checkout", "partner_user_ref": "acct_grace"]
        let requestID = try #require(try await Self.create(harness, siteKey: key, body: body).data?["request_id"] as? String)
        let pending = try await Self.status(harness, requestID)
        #expect(pending.data?.count == 1 && pending.data?["status"] as? String == "pending", "\(pending)")
        #expect(pending.header("Cache-Control") == "no-store" && pending.header("Access-Control-Allow-Origin") == "*")

        // The frame's run: the assertion comes from the hosted pages' origin, cross-origin under the widget's page.
        let options = try #require(try await harness.options(requestID).data)
        let answer = try harness.assertCrossOrigin(options, topOrigin: Self.shop)
        let done = try await harness.complete(requestID, challengeID: try #require(options["challenge_id"] as? String), response: answer)
        #expect(done.outcome.outcome == "verified", "\(done)")
        let completed = try await Self.status(harness, requestID)
        #expect(completed.data?.count == 1 && completed.data?["status"] as? String == "completed", "\(completed)")
        #expect(!completed.text.contains("ey") && !completed.text.contains("token"))
        #expect(try await harness.status(requestID, key: harness.testKey).data?["verification_token"] is String)

        for unknown in ["req_" + String(repeating: "0", count: 32), "nope", "", "req_%00"] {
            #expect(try await Self.status(harness, unknown).data?["status"] as? String == "not_found")
        }
        // A request the partner's server opened is not the widget's to report.
        let direct = try #require(try await harness.createRequest(key: harness.testKey)["request_id"] as? String)
        #expect(try await Self.status(harness, direct).data?["status"] as? String == "not_found")

        let later = try #require(try await Self.create(harness, siteKey: key).data?["request_id"] as? String)
        harness.clock.advance(by: VerificationService.lifetime + 1)
        #expect(try await Self.status(harness, later).data?["status"] as? String == "expired")
    }

    @Test("a cross-origin (frame) assertion counts only for a widget request and only under its page origin", arguments: Backend.allCases)
    func frameOrigin(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness, origins: [Self.shop, "https://other.example"])
        let person = try harness.person()
        try harness.link("acct_grace", to: person.id, environment: .test)
        let body: [String: Any] = ["site_key": key, "scope": "checkout", "partner_user_ref": "acct_grace"]
        let requestID = try #require(try await Self.create(harness, siteKey: key, body: body).data?["request_id"] as? String)

        // Framed by another page (even one the key lists: the request is bound to the page that opened it).
        for top in ["https://evil.example", "https://other.example"] {
            let options = try #require(try await harness.options(requestID).data)
            let answer = try harness.assertCrossOrigin(options, topOrigin: top)
            let refused = try await harness.complete(requestID, challengeID: try #require(options["challenge_id"] as? String), response: answer)
            #expect(refused.outcome.outcome == "failed" && refused.outcome.code == "assertion_invalid", "\(refused)")
        }
        #expect(try await Self.status(harness, requestID).data?["status"] as? String == "pending")

        // A request opened by the partner's server never runs cross-origin.
        let direct = try #require(try await harness.createRequest(ref: "acct_grace", key: harness.testKey)["request_id"] as? String)
        let options = try #require(try await harness.options(direct).data)
        let answer = try harness.assertCrossOrigin(options, topOrigin: Self.shop)
        let refused = try await harness.complete(direct, challengeID: try #require(options["challenge_id"] as? String), response: answer)
        #expect(refused.outcome.code == "assertion_invalid", "\(refused)")
        #expect(try await harness.verifyInline(direct).outcome.outcome == "verified")
    }

    @Test("site key and return origins: https, or http on localhost and 127.0.0.1; canonical form; nothing else")
    func originRule() throws {
        let accepted = [
            ("https://shop.example", "https://shop.example"), ("HTTPS://Shop.Example:443/", "https://shop.example"),
            ("https://shop.example:8443", "https://shop.example:8443"), ("http://localhost:3000", "http://localhost:3000"),
            ("http://127.0.0.1", "http://127.0.0.1"), ("http://localhost:80", "http://localhost"), ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
        ]
        for (text, origin) in accepted { #expect(try PartnerWebOrigin.normalized(text) == origin, "\(text)") }
        let refused = [
            "", "shop.example", "http://shop.example", "ftp://shop.example", "https://", "https://shop.example/path", "https://shop.example?x",
            "https://shop.example#x", "https://user@shop.example", "https://shop.example:0", "https://shop.example:65536",
            "https://shop.example:99999999999999999999", "https://shop.example:", "https://-shop.example", "https://shop..example",
            "https://shop.example\\@evil.example", "https://shöp.example", "https://shop example", "https://shop.example\r\nX: 1",
            "http://localhost.evil.example", "http://127.0.0.2", "javascript:alert(1)", "https://" + String(repeating: "a.", count: 140) + "example",
        ]
        for text in refused { #expect(throws: SesameError(.invalidArgument, "")) { try PartnerWebOrigin.normalized(text) } }
        #expect(PartnerWebOrigin.origin(ofURL: "https://Shop.example/done?x=1#y") == "https://shop.example")
        #expect(PartnerWebOrigin.origin(ofURL: "https://shop.example") == "https://shop.example")
        for url in ["https://shop.example@evil.example/", "https://shop.example\\@evil.example/", "//shop.example/", "/done",
                    "https://shop.example/" + String(repeating: "a", count: 2048)] {
            #expect(PartnerWebOrigin.origin(ofURL: url) == nil, "\(url)")
        }
    }

    @Test("return_url: accepted only on a registered return origin; after the hand-off, /verify/return sends a 303 there",
          arguments: Backend.allCases)
    func returnURL(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let target = "https://shop.example/orders/42?step=done"
        let refusedBefore = try await harness.rawCreateLink(["scope": "checkout", "return_url": target])
        #expect(refusedBefore.status == 400 && refusedBefore.error?["code"] as? String == "return_url_not_allowed", "\(refusedBefore)")

        #expect(try harness.sesame.partners.addReturnOrigin(partnerID: harness.partner.id, origin: "HTTPS://shop.example/") == Self.shop)
        #expect(try harness.sesame.partners.listReturnOrigins(partnerID: harness.partner.id) == [Self.shop])
        for refused: Any in ["https://shop.example.evil.example/", "http://shop.example/", "https://shop.example@evil.example/",
                             "https://shop.example\\@evil.example/", "javascript:alert(1)", "https://shop.example:8443/", "/relative", 42, ["x"]] {
            let reply = try await harness.rawCreateLink(["scope": "checkout", "return_url": refused])
            #expect(reply.status == 400 && reply.error?["code"] as? String == "return_url_not_allowed", "\(refused): \(reply)")
        }

        let person = try harness.person()
        try harness.link("acct_grace", to: person.id)
        let created = try await harness.createRequest(ref: "acct_grace", extra: ["return_url": target])
        let requestID = try #require(created["request_id"] as? String)
        let plain = try #require(try await harness.createRequest(ref: "acct_grace")["request_id"] as? String)
        // The page learns only whether it will send the person back, not where.
        let options = try await harness.post("/operations/handoff/options", ["request_id": requestID])
        #expect(options.data?["returns"] as? Bool == true && !options.text.contains("shop.example"), "\(options)")
        #expect(try await harness.post("/operations/handoff/options", ["request_id": plain]).data?["returns"] as? Bool == false)

        // Pending: back to the page.
        let early = try await harness.noRedirect("/verify/return?request_id=\(requestID)")
        #expect(early.status == 303 && early.header("Location") == "/verify?request_id=\(requestID)", "\(early)")
        #expect(try await harness.verifyByHandOff(requestID).outcome.outcome == "verified")
        let back = try await harness.noRedirect("/verify/return?request_id=\(requestID)")
        #expect(back.status == 303 && back.header("Location") == target, "\(back)")
        #expect(back.header("Referrer-Policy") == "no-referrer" && back.header("Cache-Control") == "no-store")
        #expect(back.header("Content-Type") == "text/plain; charset=utf-8")
        // A finished request without return_url, a declined one with it, and IDs that are not requests.
        #expect(try await harness.verifyByHandOff(plain).outcome.outcome == "verified")
        #expect(try await harness.noRedirect("/verify/return?request_id=\(plain)").header("Location") == "/verify?request_id=\(plain)")
        let declined = try #require(try await harness.createRequest(extra: ["return_url": "https://shop.example/"])["request_id"] as? String)
        _ = try await harness.post("/operations/handoff/decline", ["request_id": declined])
        #expect(try await harness.noRedirect("/verify/return?request_id=\(declined)").header("Location") == "https://shop.example/")
        for bad in ["nope", "req_" + String(repeating: "0", count: 32) + "%0d%0aX:1", ""] {
            let reply = try await harness.noRedirect("/verify/return?request_id=\(bad)")
            #expect(reply.status == 404, "\(bad): \(reply)")
        }
        let unknown = "req_" + String(repeating: "0", count: 32)
        #expect(try await harness.noRedirect("/verify/return?request_id=\(unknown)").header("Location") == "/verify?request_id=\(unknown)")

        try harness.sesame.partners.removeReturnOrigin(partnerID: harness.partner.id, origin: Self.shop)
        #expect(try await harness.rawCreateLink(["scope": "checkout", "return_url": target]).error?["code"] as? String == "return_url_not_allowed")
        #expect(throws: SesameError(.notFound, "")) { try harness.sesame.partners.removeReturnOrigin(partnerID: harness.partner.id, origin: Self.shop) }
    }

    @Test("the frame may be framed only by the site key's origins; /sdk.js is a script any page may load", arguments: [Backend.sqlite])
    func frameAndScript(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let key = try Self.siteKey(harness, origins: [Self.shop, "http://localhost:3000"])
        let frame = try await harness.send("GET", "/frame/inline-passkey?site_key=\(key)", body: nil)
        #expect(frame.status == 200 && frame.header("Cache-Control") == "no-store", "\(frame)")
        let policy = try #require(frame.header("Content-Security-Policy"))
        #expect(policy.hasSuffix("frame-ancestors https://shop.example http://localhost:3000") && policy.contains("script-src 'self'"), "\(policy)")
        #expect(!policy.contains("unsafe-inline") && frame.header("X-Frame-Options") == nil)
        #expect(frame.text.contains(#"data-origins="https://shop.example http://localhost:3000""#) && !frame.text.contains("<script>"))
        try harness.sesame.partners.revokeSiteKey(partnerID: harness.partner.id, id: key)
        for url in ["/frame/inline-passkey?site_key=\(key)", "/frame/inline-passkey?site_key=pk_test_nope", "/frame/inline-passkey"] {
            let closed = try await harness.send("GET", url, body: nil)
            #expect(closed.header("Content-Security-Policy")?.hasSuffix("frame-ancestors 'none'") == true && closed.text.contains(#"data-origins="""#))
        }
        let script = try await harness.send("GET", "/sdk.js", body: nil, headers: ["Origin": Self.shop])
        #expect(script.status == 200 && script.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(script.header("Access-Control-Allow-Origin") == "*" && script.header("Cross-Origin-Resource-Policy") == "cross-origin")
        #expect(script.text.contains(#"customElements.define("botshield-verify""#) && script.text.contains(#"mode: "closed""#))
    }
}

extension InlineHarness {
    /// The frame's assertion: from the hosted pages' origin, in a cross-origin iframe under `topOrigin`.
    func assertCrossOrigin(_ payload: [String: Any], topOrigin: String) throws -> [String: Any] {
        let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(payload["options"])))
        let response = try authenticator.get(options, origin: Self.appURL, crossOrigin: true, topOrigin: topOrigin)
        return try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
    }

    /// create-session (live key) then create-verification-link with `body`, whatever the answer.
    func rawCreateLink(_ body: [String: Any]) async throws -> HTTPReply {
        let grant = try #require(try await post("/operations/sdk/create-session", [:], bearer: liveKey).data?["anchor_grant_token"] as? String)
        return try await post("/operations/sdk/create-verification-link", body, bearer: grant)
    }

    /// A GET whose redirect is reported, not followed.
    func noRedirect(_ path: String) async throws -> HTTPReply {
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let (data, response) = try await session.data(for: URLRequest(url: try #require(URL(string: base + path))))
        return HTTPReply(response: try #require(response as? HTTPURLResponse), body: data)
    }
}

/// Stops URLSession from following redirects.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
