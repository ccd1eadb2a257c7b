import Foundation
import SesameCore
import SesameHTTP
import SesameStore
import SesameTestSupport
import Testing

/// Every error under `/authsignal/v1` has the §1.4 body and `Content-Type: application/json`, whoever made it (a
/// route, the router, a limit), and bad input is a 4xx, never a 5xx.
@Suite struct ErrorShapeTests {
    @Test("router errors (unknown route, wrong method, wrong media type) have the face's shape", arguments: Backend.allCases)
    func routerErrors(backend: Backend) throws {
        let harness = try Harness(backend)
        #expect(harness.send(.GET, "/nope", authorization: nil).isError(404, "not_found"))
        #expect(harness.send(.GET, "/validate", authorization: harness.serverAuthorization).isError(405, "invalid_request"))
        let text = harness.send(.POST, "/validate", nil, authorization: harness.serverAuthorization,
                                headers: [("Content-Type", "text/plain")])
        #expect(text.status == 415 || text.isError(400, "invalid_request"))
        #expect(text.response.headers["Content-Type"] == "application/json" && text.object["errorCode"] as? String == text.object["error"] as? String)
    }

    @Test("bad input is 400 invalid_request: long or control-character IDs, wrong member types, non-object bodies",
          arguments: Backend.allCases)
    func badInput(backend: Backend) throws {
        let harness = try Harness(backend)
        let auth = harness.serverAuthorization
        #expect(harness.send(.GET, "/users/" + String(repeating: "u", count: 256), authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.GET, "/users/a\u{0}b", authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.PATCH, "/users/alice", ["email": 5], authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.PATCH, "/users/alice", ["email": String(repeating: "e", count: 300)], authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.PATCH, "/users/alice", [1, 2], authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.POST, "/users/alice/actions/signIn", ["idempotencyKey": 1e300], authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.POST, "/users/alice/actions/signIn", ["idempotencyKey": "a\u{1}"], authorization: auth).isError(400, "invalid_request"))
        #expect(harness.send(.POST, "/validate", ["token": 7], authorization: auth).isError(400, "invalid_request"))
        let tenant = harness.tenantAuthorization
        #expect(harness.send(.POST, "/client/challenge", ["action": ["x"]], authorization: tenant).isError(400, "invalid_request"))
        #expect(harness.send(.POST, "/client/verify/passkey", ["challengeId": "x", "authenticationCredential": "no"], authorization: tenant)
            .isError(400, "invalid_request"))
        let ids = (0..<21).map { _ in "AAAA" }.joined(separator: ",")
        #expect(harness.send(.GET, "/client/user-authenticators/passkey", authorization: tenant, query: ["credentialIds": ids]).isError(400, "invalid_request"))
        #expect(harness.send(.GET, "/client/user-authenticators/passkey", authorization: tenant).isError(400, "invalid_request"))
    }

    @Test("server bodies are read strictly too: a member given twice is 400, null is absent; custom is a flat object of at most 2 KB as compact JSON, kept so in name order",
          arguments: Backend.allCases)
    func strictServerBodies(backend: Backend) throws {
        let harness = try Harness(backend)
        let auth = harness.serverAuthorization
        func send(_ method: HTTPMethod, _ path: String, _ body: String) -> Harness.Reply {
            harness.send(method, path, raw: Array(body.utf8), authorization: auth)
        }
        #expect(send(.POST, "/users/alice/actions/signIn", #"{"idempotencyKey":"k-1","idempotencyKey":"k-2"}"#).isError(400, "invalid_request"))
        #expect(send(.PATCH, "/users/alice", #"{"email":"a@example.com","email":"b@example.com"}"#).isError(400, "invalid_request"))
        #expect(send(.PATCH, "/users/alice", #"{"emailVerified":1}"#).isError(400, "invalid_request"))
        #expect(send(.PATCH, "/users/alice", #"{"custom":{"a":[1]}}"#).isError(400, "invalid_request"))
        #expect(send(.PATCH, "/users/alice", #"{"custom":{"a":1,"a":2}}"#).isError(400, "invalid_request"))
        // 2,048 bytes as compact JSON, more as sent: kept, compact and in name order; null members are absent.
        let note = String(repeating: "n", count: 2048 - #"{"a":true,"b":null,"note":"","z":-2.5}"#.utf8.count)
        let pretty = #"{ "email": null, "custom": { "z": -2.5, "note": "\#(note)", "b": null, "a": true } }"#
        let kept = #"{"a":true,"b":null,"note":"\#(note)","z":-2.5}"#
        #expect(kept.utf8.count == 2048)
        let updated = send(.PATCH, "/users/alice", pretty)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(updated.object["email"] == nil, "\(updated.text)")
        #expect(try harness.sesame.store.authsignal.user(projectID: harness.tenantID, externalID: "alice")?.custom == kept)
        #expect(send(.PATCH, "/users/alice", #"{"custom":{"a":true,"b":null,"note":"\#(note)x","z":-2.5}}"#).isError(400, "invalid_request"))
    }

    @Test("client bodies are read strictly: a member given twice, invalid UTF-8 or a non-object is 400; null is absent, snake_case is read",
          arguments: Backend.allCases)
    func strictClientBodies(backend: Backend) throws {
        let harness = try Harness(backend)
        let tenant = harness.tenantAuthorization
        for body in [#"{"action":"signIn","action":"other"}"#, "[1]", #"{"action":"sign"#] {
            #expect(harness.send(.POST, "/client/challenge", raw: Array(body.utf8), authorization: tenant).isError(400, "invalid_request"), "\(body)")
        }
        #expect(harness.send(.POST, "/client/challenge", raw: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], authorization: tenant)
            .isError(400, "invalid_request"))
        // `action` null is absent (and required here); `idempotency_key` is read as `idempotencyKey`.
        #expect(harness.send(.POST, "/client/challenge", raw: Array(#"{"action":null}"#.utf8), authorization: tenant).isError(400, "invalid_request"))
        let first = harness.send(.POST, "/client/challenge", raw: Array(#"{"action":"signIn","idempotency_key":"k-1"}"#.utf8), authorization: tenant)
        let again = harness.send(.POST, "/client/challenge", raw: Array(#"{"action":"signIn","idempotencyKey":"k-1"}"#.utf8), authorization: tenant)
        #expect(first.status == 200 && first.object["challengeId"] as? String != nil, "\(first.text)")
        #expect(again.object["challengeId"] as? String == first.object["challengeId"] as? String, "\(again.text)")
    }

    @Test("a tenant without a relying party gets 400 invalid_configuration from the passkey routes", arguments: Backend.allCases)
    func noRelyingParty(backend: Backend) throws {
        let harness = try Harness(backend)
        let bare = try harness.sesame.projects.create(name: "Bare", relyingPartyID: "bare.example")
        let tenant = "Basic " + Data("\(bare.id):".utf8).base64EncodedString()
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", [:], authorization: tenant)
            .isError(400, "invalid_configuration"))
    }
}
