import Foundation
import SesameClient
import SesameCore
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// The hand-off path (the hosted page's server side) and how it meets the inline passkey: one completion routine.
@Suite struct HandOffTests {
    @Test("row 21: passkey-complete after the hand-off finished the request -> failed/request_closed", arguments: Backend.allCases)
    func closedByHandOff(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        let options = try #require(try await harness.options(requestID).data)
        let answer = try harness.assert(options)
        #expect(try await harness.verifyByHandOff(requestID).outcome.outcome == "verified")
        let late = try await harness.complete(requestID, challengeID: try #require(options["challenge_id"] as? String), response: answer)
        #expect(late.outcome.outcome == "failed" && late.outcome.code == "request_closed", "\(late)")
        #expect(Set(try #require(late.data).keys) == ["outcome", "code"])
    }

    @Test("row 29: after assertion_invalid, wrong_identity and link_changed the request is pending and the hand-off completes it",
          arguments: Backend.allCases)
    func inlineFailuresFallBack(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let alice = try harness.person(), bob = try harness.person()
        try harness.link("acct_a", to: alice.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_a")["request_id"] as? String)

        // assertion_invalid: one flipped signature byte.
        var payload = try #require(try await harness.options(requestID).data)
        var answer = try InlineHarness.flippingSignature(try harness.assert(payload))
        var reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.code == "assertion_invalid", "\(reply)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")

        // wrong_identity: Bob's genuine assertion on Alice's request (his credential answers options naming Alice's).
        payload = try #require(try await harness.options(requestID).data)
        var options = try #require(payload["options"] as? [String: Any])
        options["allowCredentials"] = [["id": Base64URL.encode(bob.credentials[0]), "type": "public-key"]]
        payload["options"] = options
        reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String),
                                           response: try harness.assert(payload))
        #expect(reply.outcome.outcome == "wrong_identity" && reply.outcome.code == nil, "\(reply)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")

        // link_changed: relinked between options and complete.
        payload = try #require(try await harness.options(requestID).data)
        answer = try harness.assert(payload)
        #expect(try harness.sesame.partners.unlink(partnerID: harness.partner.id, environment: .live, partnerUserRef: "acct_a"))
        try harness.link("acct_a", to: alice.id)
        reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "link_changed", "\(reply)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")

        // The hand-off still works.
        #expect(try await harness.verifyByHandOff(requestID).outcome.outcome == "verified")
        #expect(try await harness.status(requestID).data?["status"] as? String == "completed")
    }

    @Test("row 43: status and webhook bodies are path-blind: inline and hand-off differ only in IDs and times", arguments: Backend.allCases)
    func pathBlind(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        _ = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: "http://127.0.0.1:9/hook")
        let inlineID = try #require(try await harness.createRequest(ref: "acct_1", extra: ["metadata": ["order": 7]])["request_id"] as? String)
        let handOffID = try #require(try await harness.createRequest(ref: "acct_1", extra: ["metadata": ["order": 7]])["request_id"] as? String)
        #expect(try await harness.verifyInline(inlineID).outcome.outcome == "verified")
        #expect(try await harness.verifyByHandOff(handOffID).outcome.outcome == "verified")

        func normalized(_ object: [String: Any]) throws -> [String: Any] {
            var object = object
            for key in ["request_id", "created_at", "expires_at", "completed_at", "timestamp"] where object[key] != nil { object[key] = "*" }
            if let token = object["verification_token"] as? String, !token.isEmpty {
                // The token's claims, without their IDs and times, must match too.
                let payload = try Base64URL.decode(String(token.split(separator: ".")[1]))
                var claims = try #require(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
                for key in ["request_id", "jti", "iat", "exp"] { claims[key] = "*" }
                object["verification_token"] = claims
            }
            if let data = object["data"] as? [String: Any] { object["data"] = try normalized(data) }
            return object
        }
        let inlineStatus = try normalized(try #require(try await harness.status(inlineID).data))
        let handOffStatus = try normalized(try #require(try await harness.status(handOffID).data))
        #expect(NSDictionary(dictionary: inlineStatus) == NSDictionary(dictionary: handOffStatus), "\(inlineStatus) vs \(handOffStatus)")
        #expect(inlineStatus["method"] == nil && inlineStatus.count == 9, "\(inlineStatus.keys.sorted())")

        let events = try harness.sesame.store.webhooks.events(partnerID: harness.partner.id)
        #expect(events.count == 2)
        let bodies = try events.map { event in try normalized(try #require(JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])) }
        #expect(bodies.count == 2 && NSDictionary(dictionary: bodies[0]) == NSDictionary(dictionary: bodies[1]), "\(bodies)")
        // The stored bodies keep no token: it waits sealed beside them until delivered.
        #expect(events.allSatisfy { $0.tokenOffset != nil && !String(decoding: $0.body, as: UTF8.self).contains("eyJ") })
    }

    @Test("an unlinked request completes with any person's passkey (linked: false); link: true links the ref in the same transaction",
          arguments: Backend.allCases)
    func unlinkedAndLinking(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        let plain = try #require(try await harness.createRequest()["request_id"] as? String)
        #expect(try await harness.verifyByHandOff(plain).outcome.outcome == "verified")
        let plainToken = try #require(try await harness.status(plain).data?["verification_token"] as? String)
        #expect(try harness.sesame.signingKeys.verify(plainToken).linked == false)

        // link: true secures the account; inline works for the ref afterwards.
        let linking = try #require(try await harness.createRequest(ref: "acct_9", extra: ["link": true])["request_id"] as? String)
        #expect(try await harness.options(linking).data?["reason"] as? String == "not_linked")
        #expect(try await harness.verifyByHandOff(linking).outcome.outcome == "verified")
        let linkingToken = try #require(try await harness.status(linking).data?["verification_token"] as? String)
        #expect(try harness.sesame.signingKeys.verify(linkingToken).linked == true)
        #expect(try harness.sesame.store.partners.findLink(partnerID: harness.partner.id, environment: "live", partnerUserRef: "acct_9")?.userID
                == person.id)
        let next = try #require(try await harness.createRequest(ref: "acct_9")["request_id"] as? String)
        #expect(try await harness.verifyInline(next).outcome.outcome == "verified")
    }

    @Test("P10: one human, one account: a person linked to ref A confirming link: true for ref B fails the request with already_linked",
          arguments: Backend.allCases)
    func oneHumanOneAccount(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_a", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_b", extra: ["link": true])["request_id"] as? String)
        let reply = try await harness.verifyByHandOff(requestID)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "already_linked", "\(reply)")
        let status = try #require(try await harness.status(requestID).data)
        #expect(status["status"] as? String == "failed" && status["failure_reason"] as? String == "already_linked", "\(status)")
        #expect(status["verification_token"] == nil)
        #expect(try harness.sesame.store.partners.findLink(partnerID: harness.partner.id, environment: "live", partnerUserRef: "acct_b") == nil)
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).isEmpty)
    }

    @Test("the hand-off accepts only the hosted pages' origin, and a decline fails the request with user_denied", arguments: Backend.allCases)
    func originAndDecline(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        let payload = try #require(try await harness.post("/operations/handoff/options", ["request_id": requestID]).data)
        #expect(payload["scope"] as? String == "checkout" && (payload["partner"] as? [String: Any])?["name"] as? String == "Ticketz")
        let answer = try harness.assert(payload, origin: InlineHarness.iosOrigin)
        let reply = try await harness.post("/operations/handoff/complete",
                                           ["request_id": requestID, "challenge_id": try #require(payload["challenge_id"] as? String),
                                            "response": answer])
        #expect(reply.outcome.code == "assertion_invalid", "\(reply)")
        let declined = try await harness.post("/operations/handoff/decline", ["request_id": requestID])
        #expect(declined.outcome.outcome == "failed" && declined.outcome.code == "user_denied", "\(declined)")
        let status = try #require(try await harness.status(requestID).data)
        #expect(status["status"] as? String == "failed" && status["failure_reason"] as? String == "user_denied")
        #expect(try await harness.options(requestID).outcome.code == "request_closed")
    }
}
