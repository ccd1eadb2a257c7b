import Foundation
import SesameClient
import SesameCore
import SesameCrypto
import SesameServer
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// The inline and hand-off completions tell the operator why they failed (`/metrics`); the app sees only its outcome.
@Suite struct InlineCeremonyReasonTests {
    static func series(_ face: String, _ outcome: String, _ reason: String) -> String {
        #"sesame_ceremonies_total{face="\#(face)",ceremony="authentication",outcome="\#(outcome)",reason="\#(reason)"}"#
    }

    /// Waits until the server has recorded `series` `expected` times (it records a request once it is sent).
    static func expectCount(_ harness: InlineHarness, _ series: String, _ expected: Int, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        var text = ""
        for _ in 0..<50 {
            text = harness.application.metrics.exposition()
            if text.contains("\(series) \(expected)\n") { break }
            try await Task.sleep(for: .milliseconds(40))
        }
        #expect(text.contains("\(series) \(expected)\n"), "\(text)", sourceLocation: sourceLocation)
    }

    @Test("inline: a broken signature, someone else's passkey, another origin and a success, each with its reason",
          arguments: Backend.allCases)
    func inline(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let alice = try harness.person(), bob = try harness.person()
        try harness.link("acct_a", to: alice.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)

        var payload = try #require(try await harness.options(requestID).data)
        var answer = try InlineHarness.flippingSignature(try harness.assert(payload))
        var reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.code == "assertion_invalid" && !reply.text.contains("signature"), "\(reply.text)")
        try await Self.expectCount(harness, Self.series("inline", "failure", "invalid_signature"), 1)

        payload = try #require(try await harness.options(requestID).data)
        answer = try harness.assert(payload, origin: "https://evil.example")
        reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.code == "assertion_invalid", "\(reply.text)")
        try await Self.expectCount(harness, Self.series("inline", "failure", "origin_mismatch"), 1)

        payload = try #require(try await harness.options(requestID).data)
        var options = try #require(payload["options"] as? [String: Any])
        options["allowCredentials"] = [["id": Base64URL.encode(bob.credentials[0]), "type": "public-key"]]
        payload["options"] = options
        answer = try harness.assert(payload)
        reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.outcome == "wrong_identity", "\(reply.text)")
        try await Self.expectCount(harness, Self.series("inline", "failure", "wrong_identity"), 1)

        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
        try await Self.expectCount(harness, Self.series("inline", "success", ""), 1)
    }

    @Test("inline: a sign count that went back is assertion_invalid with reason sign_count_regression; the request stays pending",
          arguments: Backend.allCases)
    func signCountRegression(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let alice = try harness.person()
        try harness.link("acct_a", to: alice.id)
        harness.authenticator.settings.counter = .fixed(5)
        let first = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)
        #expect(try await harness.verifyInline(first).outcome.outcome == "verified")
        let second = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)
        let reply = try await harness.verifyInline(second)
        #expect(reply.outcome.code == "assertion_invalid", "\(reply.text)")
        try await Self.expectCount(harness, Self.series("inline", "failure", "sign_count_regression"), 1)
        #expect(try await harness.status(second).data?["status"] as? String == "pending")
        // The hand-off takes the same path: the same count is refused there too.
        let handOff = try await harness.verifyByHandOff(second)
        #expect(handOff.outcome.code == "assertion_invalid", "\(handOff.text)")
        try await Self.expectCount(harness, Self.series("handoff", "failure", "sign_count_regression"), 1)
        harness.authenticator.settings.counter = .fixed(6)
        #expect(try await harness.verifyInline(second).outcome.outcome == "verified")
    }

    @Test("hand-off: an assertion from an app origin is refused with origin_mismatch, then the page's own succeeds")
    func handOff() async throws {
        let harness = try InlineHarness(.sqlite)
        let alice = try harness.person()
        try harness.link("acct_a", to: alice.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)
        let options = try await harness.post("/operations/handoff/options", ["request_id": requestID])
        let payload = try #require(options.data, "\(options.text)")
        let answer = try harness.assert(payload, origin: InlineHarness.iosOrigin)
        let reply = try await harness.post("/operations/handoff/complete",
                                           ["request_id": requestID, "challenge_id": try #require(payload["challenge_id"] as? String),
                                            "response": answer])
        #expect(reply.outcome.code == "assertion_invalid", "\(reply.text)")
        try await Self.expectCount(harness, Self.series("handoff", "failure", "origin_mismatch"), 1)
        #expect(try await harness.verifyByHandOff(requestID).outcome.outcome == "verified")
        try await Self.expectCount(harness, Self.series("handoff", "success", ""), 1)
    }
}

/// verify-token's reasons come from the signing keys' error reason, never from its detail text.
@Suite struct TokenReasonTests {
    @Test("genuinely signed claims of another shape -> malformed; the same claims under a stranger's key -> invalid_signature")
    func malformedAndForged() async throws {
        let harness = try InlineHarness(.sqlite)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let (_, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        let parts = try TokenParts(token)
        guard case .string(let kid)? = parts.header["kid"] else { Issue.record("no kid in \(parts.header)"); return }
        let record = try #require(try harness.sesame.store.signingKeys.list().first { $0.id == kid })
        let pem = try harness.sesame.secrets.open(Array(record.privateKey.utf8), for: .signingKey, row: kid)
        let key = try PrivateKey(pemEncoded: String(decoding: pem, as: UTF8.self))
        let odd = try ES256JWS.sign(claims: ["shape": .string("not a verification token")], key: key, kid: kid)
        let malformed = try await harness.post("/operations/sdk/verify-token", ["token": odd], bearer: harness.liveKey)
        #expect(malformed.data?["valid"] as? Bool == false && malformed.data?["reason"] as? String == "malformed", "\(malformed)")
        let forged = try ES256JWS.sign(claims: parts.claims, key: PrivateKey.generate(.p256), kid: kid)
        let invalid = try await harness.post("/operations/sdk/verify-token", ["token": forged], bearer: harness.liveKey)
        #expect(invalid.data?["valid"] as? Bool == false && invalid.data?["reason"] as? String == "invalid_signature", "\(invalid)")
    }
}
