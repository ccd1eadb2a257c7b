import Foundation
import SesameClient
import SesameCore
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// Negative tests of §1.5 steps 3 and 6 beyond the matrix: a challenge works only on its own path, and an answer is
/// refused when its userHandle, its id or its sign count does not check out.
@Suite struct AssertionBindingTests {
    @Test("a hand-off challenge is not an inline challenge, and the other way round; a refused one stays usable on its own path",
          arguments: Backend.allCases)
    func challengePurpose(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)

        let handOff = try #require(try await harness.post("/operations/handoff/options", ["request_id": requestID]).data)
        let handOffID = try #require(handOff["challenge_id"] as? String)
        let inline = try await harness.complete(requestID, challengeID: handOffID,
                                                response: try harness.assert(handOff, origin: InlineHarness.iosOrigin))
        #expect(inline.outcome.outcome == "expired" && inline.outcome.code == "challenge_expired", "\(inline)")

        let options = try #require(try await harness.options(requestID).data)
        let optionsID = try #require(options["challenge_id"] as? String)
        let crossed = try await harness.post("/operations/handoff/complete",
                                             ["request_id": requestID, "challenge_id": optionsID,
                                              "response": try harness.assert(options, origin: InlineHarness.appURL)])
        #expect(crossed.outcome.code == "challenge_expired", "\(crossed)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")

        // Neither refusal used the challenge up: each still works where it belongs.
        let own = try await harness.post("/operations/handoff/complete",
                                         ["request_id": requestID, "challenge_id": handOffID,
                                          "response": try harness.assert(handOff, origin: InlineHarness.appURL)])
        #expect(own.outcome.outcome == "verified", "\(own)")
    }

    @Test("another person's userHandle, an id that is not the rawId, or a sign count that went back -> assertion_invalid",
          arguments: Backend.allCases)
    func answerFields(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let alice = try harness.person(), bob = try harness.person()
        try harness.link("acct_a", to: alice.id)
        let bobHandle = try #require(try harness.sesame.store.users.get(projectID: harness.projectID, id: bob.id)).userHandle
        let requestID = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)

        func refused(_ mutate: (inout [String: Any]) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let payload = try #require(try await harness.options(requestID).data)
            var answer = try harness.assert(payload)
            try mutate(&answer)
            let reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
            #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "assertion_invalid", "\(reply)", sourceLocation: sourceLocation)
        }
        // The signature does not cover userHandle: only the owner check refuses it.
        try await refused { answer in
            var response = try #require(answer["response"] as? [String: Any])
            response["userHandle"] = Base64URL.encode(bobHandle)
            answer["response"] = response
        }
        try await refused { answer in answer["id"] = Base64URL.encode(bob.credentials[0]) }

        // Counter: the credential records 5, then presents 3.
        harness.authenticator.settings.counter = .fixed(5)
        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
        let next = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)
        harness.authenticator.settings.counter = .fixed(3)
        let payload = try #require(try await harness.options(next).data)
        let reply = try await harness.complete(next, challengeID: try #require(payload["challenge_id"] as? String),
                                               response: try harness.assert(payload))
        #expect(reply.outcome.code == "assertion_invalid", "\(reply)")
        harness.authenticator.settings.counter = .fixed(6)
        #expect(try await harness.verifyInline(next).outcome.outcome == "verified")
    }

    @Test("verify-token: another partner's or environment's key -> wrong_audience, after exp -> expired; neither uses the token up",
          arguments: Backend.allCases)
    func tokenReasons(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
        let token = try #require(try await harness.status(requestID).data?["verification_token"] as? String)
        let other = try harness.sesame.partners.create(projectID: harness.projectID, name: "Other")
        let otherKey = try harness.sesame.partners.createAPIKey(partnerID: other.id, environment: .live).secret

        func check(_ key: String) async throws -> [String: Any] {
            try #require(try await harness.post("/operations/sdk/verify-token", ["token": token], bearer: key).data)
        }
        for key in [otherKey, harness.testKey] {
            let answer = try await check(key)
            #expect(answer["valid"] as? Bool == false && answer["reason"] as? String == "wrong_audience" && answer["claims"] == nil, "\(answer)")
        }
        harness.clock.advance(by: 300)
        #expect(try await check(harness.liveKey)["reason"] as? String == "expired")
        harness.clock.advance(by: -1)
        let valid = try await check(harness.liveKey)
        #expect(valid["valid"] as? Bool == true && (valid["claims"] as? [String: Any])?["request_id"] as? String == requestID, "\(valid)")
    }
}
