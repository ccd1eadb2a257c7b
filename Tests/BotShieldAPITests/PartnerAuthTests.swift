import Foundation
import SesameCore
import SesameStore
import SesameTestSupport
import Testing

/// Pattern B's authentication and input errors: each code, in the `{error:{statusCode, code, message}}` shape.
@Suite struct PartnerAuthTests {
    /// Checks the partner error shape exactly.
    func expectError(_ reply: HTTPReply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == status, "\(reply)", sourceLocation: sourceLocation)
        #expect(Set(reply.object.keys) == ["error"], "\(reply)", sourceLocation: sourceLocation)
        #expect(Set((reply.error ?? [:]).keys) == ["statusCode", "code", "message"], "\(reply)", sourceLocation: sourceLocation)
        #expect(reply.error?["statusCode"] as? Int == status && reply.error?["code"] as? String == code, "\(reply)",
                sourceLocation: sourceLocation)
        #expect(reply.header("Cache-Control") == "no-store" && reply.header("Access-Control-Allow-Origin") == nil,
                sourceLocation: sourceLocation)
    }

    @Test("API keys: missing, malformed, unknown, revoked, or a grant in their place -> 401 invalid_api_key", arguments: Backend.allCases)
    func apiKeys(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let (revokable, revokedSecret) = try harness.sesame.partners.createAPIKey(partnerID: harness.partner.id, environment: .live)
        try harness.sesame.partners.revokeAPIKey(partnerID: harness.partner.id, id: revokable.id)
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        let bad: [String?] = [nil, "", "not-a-key", "sesame_live_sk_" + String(repeating: "A", count: 43), revokedSecret, grant,
                              harness.liveKey + "x", String(repeating: "k", count: 4096)]
        for key in bad {
            expectError(try await harness.post("/operations/sdk/create-session", [:], bearer: key), 401, "invalid_api_key")
            expectError(try await harness.send("GET", "/operations/verification/status?request_id=req_0", body: nil, bearer: key), 401,
                        "invalid_api_key")
            expectError(try await harness.post("/operations/sdk/verify-token", ["token": "x"], bearer: key), 401, "invalid_api_key")
            expectError(try await harness.post("/operations/sdk/unlink", ["partner_user_ref": "acct_1"], bearer: key), 401, "invalid_api_key")
        }
        // Nothing was opened by the refused calls: only the one grant exists.
        #expect(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.testKey).status == 200)
    }

    @Test("grants: an API key in their place, a revoked (logged out) grant -> 401 invalid_grant; logout twice says false",
          arguments: Backend.allCases)
    func grants(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: harness.liveKey), 401,
                    "invalid_grant")
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"]), 401, "invalid_grant")
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        #expect(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant).status == 200)
        #expect(try await harness.post("/operations/sdk/logout", ["session_token": grant]).data?["logged_out"] as? Bool == true)
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant), 401, "invalid_grant")
        #expect(try await harness.post("/operations/sdk/logout", ["session_token": grant]).data?["logged_out"] as? Bool == false)
    }

    @Test("create-verification-link: a body that is not an object, a non-boolean link, a non-object metadata -> their 400 codes, nothing written",
          arguments: Backend.allCases)
    func linkBodies(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        for body in ["[]", "\"checkout\"", "{", ""] {
            expectError(try await harness.send("POST", "/operations/sdk/create-verification-link", body: Data(body.utf8), bearer: grant), 400,
                        "invalid_json")
        }
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout", "link": "yes"], bearer: grant), 400,
                    "link_invalid")
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout", "metadata": [1, 2]], bearer: grant),
                    400, "metadata_invalid")
        expectError(try await harness.post("/operations/sdk/create-verification-link", ["scope": 7], bearer: grant), 400, "scope_invalid")
        let rows = try harness.sesame.store.database.query("SELECT COUNT(*) AS n FROM verification_requests", [])
        #expect(try rows.first?.integer("n") == 0)
    }

    @Test("create-verification-link reads its body strictly: a member twice -> invalid_json (metadata_invalid inside metadata), a number for link -> link_invalid; metadata is measured and kept as compact JSON in name order",
          arguments: Backend.allCases)
    func strictLinkBody(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        func link(_ body: String) async throws -> HTTPReply {
            try await harness.send("POST", "/operations/sdk/create-verification-link", body: Data(body.utf8), bearer: grant)
        }
        expectError(try await link(#"{"scope":"checkout","scope":"login"}"#), 400, "invalid_json")
        expectError(try await link(#"{"scope":"checkout","metadata":{"a":1,"a":2}}"#), 400, "metadata_invalid")
        expectError(try await link(#"{"scope":"checkout","partner_user_ref":"acct_1","link":1}"#), 400, "link_invalid")
        expectError(try await link(#"{"scope":"checkout","partner_user_ref":7}"#), 400, "partner_user_ref_invalid")
        expectError(try await link(#"{"scope":"checkout","return_url":false}"#), 400, "return_url_not_allowed")
        #expect(try harness.sesame.store.database.query("SELECT COUNT(*) AS n FROM verification_requests", []).first?.integer("n") == 0)

        // Pretty-printed metadata over 2 KB as sent, exactly 2,048 bytes as compact JSON: accepted, kept compact in name order.
        let note = String(repeating: "x", count: 2010)
        let pretty = "{\n" + String(repeating: " ", count: 40) + #""z": 1,\#n  "note": "\#(note)",\#n  "a": [true, null, -2.5]\#n}"#
        #expect(pretty.utf8.count > 2048)
        let created = try await link(#"{"scope":"checkout","metadata":\#(pretty)}"#)
        #expect(created.status == 200, "\(created)")
        let requestID = try #require(created.data?["request_id"] as? String)
        let kept = #"{"a":[true,null,-2.5],"note":"\#(note)","z":1}"#
        #expect(kept.utf8.count == 2048)
        let status = try await harness.status(requestID)
        #expect(status.text.contains(#""metadata":\#(kept)"#), "\(status)")
        // One byte more as compact JSON: refused.
        expectError(try await link(#"{"scope":"checkout","metadata":{"z":1,"note":"\#(note)x","a":[true,null,-2.5]}}"#), 400, "metadata_invalid")
    }

    @Test("verify-token without a token -> 400 token_required; a malformed one is not valid; unlink checks its ref", arguments: Backend.allCases)
    func tokenAndUnlinkInput(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        expectError(try await harness.post("/operations/sdk/verify-token", [:], bearer: harness.liveKey), 400, "token_required")
        expectError(try await harness.post("/operations/sdk/verify-token", ["token": 5], bearer: harness.liveKey), 400, "token_required")
        for token in ["", "a.b", "a.b.c", String(repeating: "x", count: 9000)] {
            let check = try #require(try await harness.post("/operations/sdk/verify-token", ["token": token], bearer: harness.liveKey).data)
            #expect(check["valid"] as? Bool == false && check["claims"] == nil, "\(check)")
        }
        for ref in ["", "a@b.example", String(repeating: "r", count: 129)] {
            expectError(try await harness.post("/operations/sdk/unlink", ["partner_user_ref": ref], bearer: harness.liveKey), 400,
                        "partner_user_ref_invalid")
        }
        expectError(try await harness.post("/operations/sdk/unlink", [:], bearer: harness.liveKey), 400, "partner_user_ref_invalid")
        #expect(try await harness.post("/operations/sdk/unlink", ["partner_user_ref": "acct_none"], bearer: harness.liveKey)
            .data?["unlinked"] as? Bool == false)
    }
}
