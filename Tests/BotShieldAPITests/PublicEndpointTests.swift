import BotShieldAPI
import Foundation
import SesameClient
import SesameCore
import SesameCrypto
@testable import SesameStore
import SesameTestSupport
import Synchronization
import Testing
import WebAuthn

/// The two public endpoints, `passkey-options` and `passkey-complete`, over real HTTP, one test (or group) per row of
/// the spec's test matrix (`botshield-inline-passkey.md` Part 3). Every test runs on SQLite and PostgreSQL.
@Suite struct PublicEndpointTests {
    // MARK: Rows 1 to 7: options

    @Test("row 1: passkey-options is public; a bogus or real API key changes nothing", arguments: Backend.allCases)
    func row1(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        var challenges: Set<String> = []
        for bearer in [nil, "bogus", "sesame_live_sk_0000000000000000", harness.liveKey, harness.testKey] {
            let reply = try await checkedPublic(harness.post("/operations/request/passkey-options", ["request_id": requestID], bearer: bearer))
            let payload = try #require(reply.data, "\(reply)")
            #expect(Set(payload.keys) == Self.optionsKeys, "bearer \(bearer ?? "none"): \(reply)")
            challenges.insert(try challengeID(payload))
        }
        #expect(challenges.count == 5)
        // passkey-complete too: a bogus key neither blocks nor changes the answer.
        let payload = try await harness.optionsPayload(requestID)
        let answer = try harness.assert(payload)
        let reply = try await harness.post("/operations/request/passkey-complete",
                                           ["request_id": requestID, "challenge_id": try challengeID(payload), "response": answer], bearer: "bogus")
        expectOutcome(reply, .verified)
        #expect(try await harness.statusOf(requestID) == "completed")
    }

    @Test("row 2: request ids are req_ + 32 lowercase hex, and 10,000 are distinct", arguments: Backend.allCases)
    func row2(backend: Backend) async throws {
        let shape = try Regex("^req_[0-9a-f]{32}$")
        var seen: Set<String> = []
        for _ in 0..<10_000 {
            let id = VerificationService.newRequestID()
            #expect(id.wholeMatch(of: shape) != nil, "\(id)")
            #expect(VerificationService.isRequestID(id))
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        // The ids the API hands out have the same shape.
        let harness = try InlineHarness(backend)
        var issued: Set<String> = []
        for _ in 0..<5 {
            let id = try await harness.newRequest()
            #expect(id.wholeMatch(of: shape) != nil, "\(id)")
            issued.insert(id)
        }
        #expect(issued.count == 5)
    }

    @Test("row 3: every answer is HTTP 200 with .data.data (options, fallback, closed, complete outcomes)", arguments: Backend.allCases)
    func row3(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let linked = try await harness.newRequest(ref: "acct_1")
        let unlinked = try await harness.newRequest()
        var replies: [(String, HTTPReply)] = []
        replies.append(("options", try await harness.options(linked)))
        replies.append(("fallback", try await harness.options(unlinked)))
        replies.append(("closed", try await harness.options(VerificationService.newRequestID())))
        let payload = try await harness.optionsPayload(linked)
        replies.append(("complete failed", try await harness.complete(linked, challengeID: try challengeID(payload),
                                                                       response: try flipped(harness.assert(payload), "signature"))))
        replies.append(("complete expired", try await harness.complete(linked, challengeID: try challengeID(payload),
                                                                        response: try harness.assert(payload))))
        replies.append(("complete verified", try await harness.verifyInline(linked)))
        replies.append(("closed after completion", try await harness.options(linked)))
        for (name, reply) in replies {
            checkedPublic(reply)
            #expect(Set(reply.object.keys) == ["data"], "\(name): \(reply)")
            #expect(Set(((reply.object["data"] as? [String: Any]) ?? [:]).keys) == ["data"], "\(name): \(reply)")
            #expect(reply.data?.isEmpty == false, "\(name): \(reply)")
        }
        #expect(replies[0].1.data?["options"] != nil)
        #expect(replies[1].1.data?["fallback"] as? String == "app")
        #expect(replies[2].1.outcome == ("failed", "unknown_request"))
        #expect(replies[3].1.outcome == ("failed", "assertion_invalid"))
        #expect(replies[4].1.outcome == ("expired", "challenge_expired"))
        #expect(replies[5].1.outcome == ("verified", nil))
        #expect(replies[6].1.outcome == ("failed", "request_closed"))
    }

    @Test("row 4: the options shape has exactly its fields, and options exactly the WebAuthn ones", arguments: Backend.allCases)
    func row4(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 2)
        try harness.link("acct_1", to: person.id)
        let created = try await harness.createRequest(ref: "acct_1")
        let requestID = try #require(created["request_id"] as? String)
        let payload = try await harness.optionsPayload(requestID)
        #expect(Set(payload.keys) == Self.optionsKeys)
        let options = try #require(payload["options"] as? [String: Any])
        #expect(Set(options.keys) == ["rpId", "challenge", "allowCredentials", "userVerification", "timeout"])
        let allowed = try #require(options["allowCredentials"] as? [[String: Any]])
        #expect(allowed.count == 2)
        for descriptor in allowed {
            #expect(Set(descriptor.keys) == ["id", "type", "transports"], "\(descriptor)")
            #expect(descriptor["type"] as? String == "public-key")
        }
        // The challenge: 32 bytes, base64url without padding.
        let challenge = try #require(options["challenge"] as? String)
        #expect(!challenge.contains("=") && !challenge.contains("+") && !challenge.contains("/"))
        #expect(try Base64URL.decode(challenge).count == 32)
        // challenge_id is a UUID; expires_at is RFC 3339 UTC with milliseconds, the earlier of challenge and request expiry.
        #expect(UUID(uuidString: try challengeID(payload)) != nil)
        let expiresAt = try #require(payload["expires_at"] as? String)
        #expect(expiresAt.wholeMatch(of: try Regex(#"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#)) != nil, "\(expiresAt)")
        #expect(expiresAt == created["expires_at"] as? String)
        // The same instant, to the millisecond, wherever the request's expiry is printed (create-link prints it from
        // memory, status and options from the store): checked over a run of consecutive milliseconds.
        #expect(try await harness.status(requestID).data?["expires_at"] as? String == created["expires_at"] as? String)
        for _ in 0..<10 {
            harness.clock.advance(by: 0.001)
            let another = try await harness.createRequest(ref: "acct_1")
            let anotherID = try #require(another["request_id"] as? String)
            let printed = try await harness.status(anotherID).data?["expires_at"] as? String
            #expect(printed == another["expires_at"] as? String)
            #expect(try await harness.optionsPayload(anotherID)["expires_at"] as? String == printed)
        }
        #expect(payload["url"] as? String == created["web_url"] as? String)
        #expect(payload["setup_url"] as? String == "\(InlineHarness.appURL)/app/account/passkey")
    }

    @Test("row 5: userVerification required, timeout 60000, rpId is ours", arguments: Backend.allCases)
    func row5(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let payload = try await harness.optionsPayload(try await harness.newRequest(ref: "acct_1"))
        let options = try #require(payload["options"] as? [String: Any])
        #expect(options["userVerification"] as? String == "required")
        #expect(options["timeout"] as? Int == 60000)
        #expect(options["rpId"] as? String == InlineHarness.rpID)
        #expect(options["rpId"] as? String == (try harness.sesame.projects.get(harness.projectID)).relyingPartyID)
    }

    @Test("row 6: allowCredentials lists exactly this person's passkeys, with their stored transports", arguments: Backend.allCases)
    func row6(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let a = try harness.person(passkeys: 2)
        let b = try harness.person(passkeys: 1)
        try harness.link("acct_a", to: a.id)
        try harness.link("acct_b", to: b.id)
        for (ref, person, other) in [("acct_a", a, b), ("acct_b", b, a)] {
            let payload = try await harness.optionsPayload(try await harness.newRequest(ref: ref))
            let allowed = try #require((payload["options"] as? [String: Any])?["allowCredentials"] as? [[String: Any]])
            var listed: [String: [String]] = [:]
            for descriptor in allowed {
                listed[try #require(descriptor["id"] as? String)] = descriptor["transports"] as? [String]
            }
            #expect(Set(listed.keys) == Set(person.credentials.map { Base64URL.encode($0) }))
            #expect(Set(listed.keys).isDisjoint(with: other.credentials.map { Base64URL.encode($0) }))
            let stored = try harness.sesame.store.credentials.list(userID: person.id)
            #expect(stored.count == person.credentials.count)
            for record in stored {
                #expect(!record.transports.isEmpty)
                #expect(listed[Base64URL.encode(record.credentialID)] == record.transports, "\(record.transports)")
            }
        }
    }

    @Test("row 7: the options answer says nothing about the person", arguments: Backend.allCases)
    func row7(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let email = "alice.liddell@example.com", name = "Alice Liddell"
        let user = try harness.sesame.users.create(projectID: harness.projectID, id: nil, email: email, password: nil, name: name)
        try harness.addPasskey(userID: user.id)
        try harness.link("acct_1", to: user.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let reply = try await checkedPublic(harness.options(requestID))
        #expect(reply.data?["options"] != nil, "\(reply)")
        let text = reply.text
        var secrets = [user.id, email, name, "alice", "Alice", Base64URL.encode(user.userHandle), Data(user.userHandle).base64EncodedString(),
                       user.userHandle.map { String(format: "%02x", $0) }.joined(), harness.projectID, harness.partner.id]
        for record in try harness.sesame.store.credentials.list(userID: user.id) {
            secrets.append(record.id)
            if let passkeyName = record.name { secrets.append(passkeyName) }
        }
        for secret in secrets { #expect(!text.contains(secret), "options reveal \(secret): \(text)") }
        let forbidden: Set<String> = ["user", "name", "displayName", "email", "userHandle", "userId", "user_id", "person_id", "id_token"]
        let keys = Self.allKeys(reply.object)
        #expect(keys.isDisjoint(with: forbidden), "\(keys)")
    }

    // MARK: Rows 8 to 11: the challenge

    @Test("row 8: a challenge lasts 5 minutes: issued with its request, it still verifies at +4:59", arguments: Backend.allCases)
    func row8WithinLife(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        harness.alignClock()
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(requestID)
        let challenge = try harness.challengeRecord(try challengeID(payload))
        #expect(challenge.expiresAt.millisecondsSince1970 - challenge.createdAt.millisecondsSince1970 == 300_000)
        harness.clock.advance(by: 4 * 60 + 59)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .verified)
    }

    @Test("row 8: a challenge is expired from exactly 5:00.000 after issue (request life extended in the store to isolate it)",
          arguments: Backend.allCases)
    func row8Boundary(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        harness.alignClock()
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        // Test-only: a request lives exactly as long as a challenge and is always older, so with real lifetimes the
        // request's expiry answers first (row 8, request-expired variant). Give the request an hour more so that only
        // the challenge's own clock is on trial.
        let changed = try harness.sesame.store.database.execute(
            "UPDATE verification_requests SET expires_at = expires_at + 3600000 WHERE id = $1", [.text(requestID)])
        #expect(changed == 1)
        // Three challenges, issued 1 ms apart.
        var payloads: [[String: Any]] = []
        for index in 0..<3 {
            if index > 0 { harness.clock.advance(by: 0.001) }
            payloads.append(try await harness.optionsPayload(requestID))
        }
        let records = try payloads.map { try harness.challengeRecord(try challengeID($0)) }
        for record in records { #expect(record.expiresAt.millisecondsSince1970 - record.createdAt.millisecondsSince1970 == 300_000) }
        // Now: the first is 5:00.001 old, the second exactly 5:00.000, the third 4:59.999.
        harness.setClock(records[0].expiresAt, plusMilliseconds: 1)
        #expect(harness.clock.now().millisecondsSince1970 == records[1].expiresAt.millisecondsSince1970)
        #expect(harness.clock.now().millisecondsSince1970 == records[2].expiresAt.millisecondsSince1970 - 1)
        for payload in payloads[0..<2] {
            expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                          .challengeExpired)
            #expect(try await harness.statusOf(requestID) == "pending")
        }
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payloads[2]),
                                                 response: try harness.assert(payloads[2])), .verified)
    }

    @Test("row 8: with real lifetimes, at issue +5:00.001 the request's expiry answers (expired/request_expired, §1.5 step 2 first)",
          arguments: Backend.allCases)
    func row8RequestFirst(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        harness.alignClock()
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let created = try await harness.createRequest(ref: "acct_1")
        let requestID = try #require(created["request_id"] as? String)
        harness.clock.advance(by: 10)
        let payload = try await harness.optionsPayload(requestID)
        // expires_at is the earlier of the two: the request's.
        #expect(payload["expires_at"] as? String == created["expires_at"] as? String)
        let challenge = try harness.challengeRecord(try challengeID(payload))
        #expect(challenge.expiresAt > (try harness.requestRecord(requestID)).expiresAt)
        harness.setClock(challenge.expiresAt, plusMilliseconds: 1)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .requestExpired)
        #expect(try await harness.statusOf(requestID) == "expired")
    }

    @Test("row 9: a challenge works once (any attempt past the challenge check uses it up)", arguments: Backend.allCases)
    func row9(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        // A failed first attempt uses the challenge: a second, genuinely valid assertion on it is refused.
        for firstAttempt in ["bad signature", "user not verified"] {
            let payload = try await harness.optionsPayload(requestID)
            let first: [String: Any]
            if firstAttempt == "bad signature" {
                first = try flipped(harness.assert(payload), "signature")
            } else {
                harness.authenticator.settings.userVerified = false
                defer { harness.authenticator.settings.userVerified = true }
                first = try harness.assert(payload)
            }
            let firstReply = try await harness.complete(requestID, challengeID: try challengeID(payload), response: first)
            expectOutcome(firstReply, firstAttempt == "bad signature" ? .assertionInvalid : .userNotVerified)
            expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                          .challengeExpired)
            #expect(try await harness.statusOf(requestID) == "pending")
        }
        // A fresh challenge verifies; replaying that one then meets a closed request (the request check comes first).
        let payload = try await harness.optionsPayload(requestID)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .verified)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .requestClosed)
        #expect(try await harness.statusOf(requestID) == "completed")
    }

    @Test("row 11: a challenge belongs to its request: used with another it is expired, and both requests stay pending",
          arguments: Backend.allCases)
    func row11(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let first = try await harness.newRequest(ref: "acct_1")
        let second = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(first)
        let answer = try harness.assert(payload)
        expectOutcome(try await harness.complete(second, challengeID: try challengeID(payload), response: answer), .challengeExpired)
        #expect(try await harness.statusOf(second) == "pending")
        #expect(try await harness.statusOf(first) == "pending")
        // The foreign use did not consume it: the first request still completes with its own challenge.
        expectOutcome(try await harness.complete(first, challengeID: try challengeID(payload), response: answer), .verified)
        #expect(try await harness.statusOf(second) == "pending")
        expectOutcome(try await harness.verifyInline(second), .verified)
    }

    @Test("§1.5 step 3: an inline challenge issued to nobody (only a hand-off's may be) is challenge_expired and used up, the request pending",
          arguments: Backend.allCases)
    func challengeWithoutPerson(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let request = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(request)
        // The stored challenge loses its person, as no code path of ours writes it.
        var challenge = try harness.challengeRecord(try challengeID(payload))
        challenge.userID = nil
        let store = harness.sesame.store
        if let memory = store.pendingChallenges {
            _ = try #require(try memory.take(id: challenge.id, now: harness.clock.now()))
            try memory.insert(challenge)
        } else {
            _ = try #require(try store.challenges.consume(id: challenge.id, now: harness.clock.now()))
            try store.challenges.create(challenge)
        }
        let answer = try harness.assert(payload)
        expectOutcome(try await harness.complete(request, challengeID: challenge.id, response: answer), .challengeExpired)
        #expect(try await harness.statusOf(request) == "pending")
        #expect(try harness.storedChallenge(challenge.id) == nil)
        expectOutcome(try await harness.verifyInline(request), .verified)
    }

    // MARK: Rows 12 to 15: fallback

    @Test("row 12: the fallback shape is exactly fallback app, reason, url, setup_url", arguments: Backend.allCases)
    func row12(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 0)
        try harness.link("acct_empty", to: person.id)
        for (ref, reason) in [(nil, "not_linked"), ("acct_nobody", "not_linked"), ("acct_empty", "no_passkey")] as [(String?, String)] {
            let created = try await harness.createRequest(ref: ref)
            let requestID = try #require(created["request_id"] as? String)
            let reply = try await checkedPublic(harness.options(requestID))
            let payload = try #require(reply.data)
            #expect(Set(payload.keys) == ["fallback", "reason", "url", "setup_url"], "\(reply)")
            #expect(payload["fallback"] as? String == "app")
            #expect(payload["reason"] as? String == reason, "\(ref ?? "no ref"): \(reply)")
            #expect(payload["url"] as? String == created["web_url"] as? String)
            #expect(payload["setup_url"] as? String == "\(InlineHarness.appURL)/app/account/passkey")
        }
    }

    @Test("row 13: not_linked when the request has no partner_user_ref, or the ref has no link", arguments: Backend.allCases)
    func row13(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let noRef = try await harness.newRequest()
        try await expectFallback(harness, noRef, "not_linked")
        let unknownRef = try await harness.newRequest(ref: "acct_2")
        try await expectFallback(harness, unknownRef, "not_linked")
        // Control: once acct_2 is linked to someone with a passkey, the same request gets options; the ref-less one never.
        let other = try harness.person()
        try harness.link("acct_2", to: other.id)
        #expect(try await harness.optionsPayload(unknownRef)["options"] != nil)
        try await expectFallback(harness, noRef, "not_linked")
        #expect(try await harness.statusOf(noRef) == "pending")
    }

    @Test("row 14: not_linked when the ref is secured only in the other environment", arguments: Backend.allCases)
    func row14(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_env", to: person.id, environment: .test)
        let live = try await harness.newRequest(ref: "acct_env", key: harness.liveKey)
        try await expectFallback(harness, live, "not_linked")
        // The same ref in the environment where it is linked: options.
        let test = try await harness.newRequest(ref: "acct_env", key: harness.testKey)
        let payload = try await harness.optionsPayload(test)
        expectOutcome(try await harness.complete(test, challengeID: try challengeID(payload), response: try harness.assert(payload)), .verified)
        #expect(try await harness.statusOf(test, key: harness.testKey) == "completed")
        #expect(try await harness.statusOf(live) == "pending")
        // And the other way round: a live link does not serve a test request.
        let second = try harness.person()
        try harness.link("acct_live", to: second.id, environment: .live)
        try await expectFallback(harness, try await harness.newRequest(ref: "acct_live", key: harness.testKey), "not_linked")
        #expect(try await harness.optionsPayload(try await harness.newRequest(ref: "acct_live"))["options"] != nil)
    }

    @Test("row 15: no_passkey for a linked person without passkeys; after adding one, the same request gets options",
          arguments: Backend.allCases)
    func row15(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 0)
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        try await expectFallback(harness, requestID, "no_passkey")
        let credential = try harness.addPasskey(userID: person.id)
        let payload = try await harness.optionsPayload(requestID)
        let allowed = try #require((payload["options"] as? [String: Any])?["allowCredentials"] as? [[String: Any]])
        #expect(allowed.compactMap { $0["id"] as? String } == [Base64URL.encode(credential)])
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .verified)
    }

    // MARK: Rows 16 to 18: closed requests and errors

    @Test("row 16: closed shapes: unknown_request, request_closed, request_expired, with only outcome and code",
          arguments: Backend.allCases)
    func row16(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let anyAnswer = try harness.assert(try await harness.optionsPayload(try await harness.newRequest(ref: "acct_1")))
        // Unknown ids, well-formed or not, and a missing id.
        for id in [VerificationService.newRequestID(), "req_nope", "REQ_" + String(repeating: "A", count: 32), ""] {
            expectOutcome(try await harness.options(id), .unknownRequest, closedShape: true)
            expectOutcome(try await harness.complete(id, challengeID: UUID().uuidString.lowercased(), response: anyAnswer), .unknownRequest)
        }
        expectOutcome(try await checkedPublic(harness.post("/operations/request/passkey-options", [:])), .unknownRequest, closedShape: true)
        expectOutcome(try await checkedPublic(harness.post("/operations/request/passkey-complete", ["challenge_id": "x", "response": anyAnswer])),
                      .unknownRequest)
        // A completed request.
        let completed = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(completed)
        expectOutcome(try await harness.verifyInline(completed), .verified)
        expectOutcome(try await harness.options(completed), .requestClosed, closedShape: true)
        expectOutcome(try await harness.complete(completed, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .requestClosed)
        // A request past 5 minutes.
        let old = try await harness.newRequest(ref: "acct_1")
        let oldPayload = try await harness.optionsPayload(old)
        harness.clock.advance(by: 300.001)
        expectOutcome(try await harness.options(old), .requestExpired, closedShape: true)
        expectOutcome(try await harness.complete(old, challengeID: try challengeID(oldPayload), response: try harness.assert(oldPayload)),
                      .requestExpired)
        #expect(try await harness.statusOf(old) == "expired")
        #expect(try await harness.statusOf(completed) == "completed")
    }

    @Test("row 17: a request lives 5 minutes: pending at +4:59.999, expired from +5:00.000", arguments: Backend.allCases)
    func row17(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        harness.alignClock()
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let record = try harness.requestRecord(requestID)
        #expect(record.expiresAt.millisecondsSince1970 - record.createdAt.millisecondsSince1970 == 300_000)
        harness.clock.advance(by: 4 * 60 + 59)
        #expect(try await harness.statusOf(requestID) == "pending")
        let payload = try await harness.optionsPayload(requestID)
        harness.setClock(record.expiresAt, plusMilliseconds: -1)
        #expect(try await harness.statusOf(requestID) == "pending")
        harness.setClock(record.expiresAt, plusMilliseconds: 0)
        #expect(try await harness.statusOf(requestID) == "expired")
        harness.setClock(record.expiresAt, plusMilliseconds: 1)
        #expect(try await harness.statusOf(requestID) == "expired")
        expectOutcome(try await harness.options(requestID), .requestExpired, closedShape: true)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: try harness.assert(payload)),
                      .requestExpired)
        #expect(try await harness.statusOf(requestID) == "expired")
    }

    @Test("row 18: a storage failure is HTTP 200 with exactly .data.error {statusCode 500, message internal_error}",
          arguments: Backend.allCases)
    func row18(backend: Backend) async throws {
        let (database, harness, requestID, payload, answer) = try await failingRequest(backend)
        let expected = #"{"data":{"error":{"message":"internal_error","statusCode":500}}}"#
        // Every statement failing, or only the one each endpoint needs late in its work: on PostgreSQL the challenge's
        // own row; on SQLite, where an authentication's challenge is held in memory, the read of the link and its
        // passkeys before it.
        let late = backend == .postgres ? [("INSERT INTO challenges", "options"), ("DELETE FROM challenges", "complete")]
            : [("LEFT JOIN credentials", "options")]
        for (marker, endpoint) in [("", "options"), ("", "complete")] + late {
            database.fail(when: marker)
            let reply = endpoint == "options" ? try await harness.options(requestID)
                : try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer)
            database.fail(when: nil)
            checkedPublic(reply)
            #expect(reply.text == expected, "\(endpoint), failing \"\(marker)\": \(reply)")
            #expect(reply.publicError?["statusCode"] as? Int == 500, "\(reply)")
            #expect(reply.publicError?["message"] as? String == "internal_error")
            #expect(reply.data == nil)
        }
        // The failures changed nothing: the request is pending and the untouched challenge still verifies.
        #expect(try await harness.statusOf(requestID) == "pending")
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer), .verified)
    }

    @Test("§1.5 step 9's other error: a failing write of the completion is failed/completion_failed, and nothing of its transaction stays",
          arguments: Backend.allCases)
    func completionWriteFails(backend: Backend) async throws {
        let (database, harness, requestID, payload, answer) = try await failingRequest(backend)
        // The request's completion, and the event written with it.
        for marker in ["completed_at = $6", "INSERT INTO webhook_events"] {
            database.fail(when: marker)
            let reply = try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer)
            database.fail(when: nil)
            expectOutcome(reply, .completionFailed, "failing \"\(marker)\"")
            #expect(try await harness.statusOf(requestID) == "pending")
        }
        // The challenge's taking and the passkey's use went with the rest: the same answer verifies now.
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer), .verified)
    }

    // MARK: Rows 19 and 20: passkey-complete's input and output

    @Test("row 19: passkey-complete accepts the seed's Swift AuthenticationResponseJSON (authenticatorAttachment, empty userHandle)",
          arguments: Backend.allCases)
    func row19(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        let other = try harness.person()
        try harness.link("acct_1", to: person.id)
        let owner = try harness.sesame.users.get(projectID: harness.projectID, id: person.id)
        let stranger = try harness.sesame.users.get(projectID: harness.projectID, id: other.id)
        for userHandle in ["", nil, Base64URL.encode(owner.userHandle)] as [String?] {
            let requestID = try await harness.newRequest(ref: "acct_1")
            let payload = try await harness.optionsPayload(requestID)
            let reply = try await harness.complete(requestID, challengeID: try challengeID(payload),
                                                   response: try Self.seedSwiftEncoding(harness.assert(payload), userHandle: userHandle))
            expectOutcome(reply, .verified)
            #expect(try await harness.statusOf(requestID) == "completed")
        }
        // Control: a non-empty userHandle is checked (another person's handle does not verify).
        let requestID = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(requestID)
        let reply = try await harness.complete(requestID, challengeID: try challengeID(payload),
                                               response: try Self.seedSwiftEncoding(harness.assert(payload),
                                                                                    userHandle: Base64URL.encode(stranger.userHandle)))
        expectOutcome(reply, .assertionInvalid)
        #expect(try await harness.statusOf(requestID) == "pending")
    }

    @Test("row 20: for every outcome, passkey-complete answers only outcome and code", arguments: Backend.allCases)
    func row20(backend: Backend) async throws {
        let results = try await Self.everyOutcome(backend)
        #expect(Set(results.map(\.expected)).count == 10)
        for (expected, reply) in results {
            expectOutcome(reply, expected)
            let payload = try #require(reply.data, "\(reply)")
            #expect(Set(payload.keys).isSubset(of: ["outcome", "code"]), "\(reply)")
            #expect(Set(payload.keys) == (expected.code == nil ? ["outcome"] : ["outcome", "code"]), "\(reply)")
            for leak in ["token", "eyJ", "session", "user_id", "userHandle", "credential", "req_", "person"] {
                #expect(!reply.text.contains(leak), "\(expected.outcome)/\(expected.code ?? "-") carries \(leak): \(reply)")
            }
        }
    }

    // MARK: Rows 24 to 27: the assertion

    @Test("row 24: wrong_identity is no oracle: B's credential id with a garbage signature is assertion_invalid", arguments: Backend.allCases)
    func row24(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let a = try harness.person()
        let b = try harness.person()
        let link = try harness.link("acct_a", to: a.id)
        let requestID = try await harness.newRequest(ref: "acct_a")
        for garbage in [SecureRandom.bytes(count: 70), Array(repeating: 0, count: 8), []] {
            let payload = try await harness.optionsPayload(requestID)
            var answer = try harness.assert(Self.allowing(payload, b.credentials[0]))
            answer = try replaced(answer, "signature", garbage)
            expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer), .assertionInvalid)
        }
        #expect(try await harness.statusOf(requestID) == "pending")
        #expect(try harness.sesame.store.partners.findLink(partnerID: harness.partner.id, environment: "live", partnerUserRef: "acct_a")?.id == link.id)
        // Control: the same credential with its genuine signature is wrong_identity.
        let payload = try await harness.optionsPayload(requestID)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload),
                                                 response: try harness.assert(Self.allowing(payload, b.credentials[0]))), .wrongIdentity)
        #expect(try await harness.statusOf(requestID) == "pending")
    }

    @Test("row 25: an assertion with UP=1, UV=0 and a valid signature is failed/user_not_verified", arguments: Backend.allCases)
    func row25(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(requestID)
        harness.authenticator.settings.userVerified = false
        let answer = try harness.assert(payload)
        harness.authenticator.settings.userVerified = true
        let flags = try Base64URL.decode(try #require((answer["response"] as? [String: Any])?["authenticatorData"] as? String))[32]
        #expect(flags & 0b101 == 0b001, "UP set, UV clear")
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: answer), .userNotVerified)
        #expect(try await harness.statusOf(requestID) == "pending")
        // The same passkey unlocked: verified.
        expectOutcome(try await harness.verifyInline(requestID), .verified)
    }

    @Test("row 26: an answer that does not check out is failed/assertion_invalid, each defect alone, request still pending",
          arguments: Backend.allCases)
    func row26(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 0)
        // A passkey whose key the test holds, so that each defect can be signed validly.
        let fixture = try harness.fixturePasskey(userID: person.id)
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let defects: [(String, (inout CeremonyFixture) -> Void)] = [
            ("type webauthn.create", { $0.clientData["type"] = .string("webauthn.create") }),
            ("rpIdHash of another relying party", { $0.rpID = "other.example" }),
            ("UP=0", { $0.flags = [.userVerified] }),
            ("origin of a partner web page", { $0.origin = "https://partner.example" }),
        ]
        for (name, defect) in defects {
            let payload = try await harness.optionsPayload(requestID)
            let reply = try await harness.complete(requestID, challengeID: try challengeID(payload),
                                                   response: try Self.fixtureAnswer(fixture, for: payload, defect))
            expectOutcome(reply, .assertionInvalid, name)
            #expect(try await harness.statusOf(requestID) == "pending", "\(name)")
        }
        // One flipped signature byte.
        let flippedPayload = try await harness.optionsPayload(requestID)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(flippedPayload),
                                                 response: try flipped(Self.fixtureAnswer(fixture, for: flippedPayload), "signature")),
                      .assertionInvalid, "flipped signature byte")
        #expect(try await harness.statusOf(requestID) == "pending")
        // A wrong challenge: the answer to a second options payload, sent with the first's challenge_id.
        let first = try await harness.optionsPayload(requestID)
        let second = try await harness.optionsPayload(requestID)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(first), response: try Self.fixtureAnswer(fixture, for: second)),
                      .assertionInvalid, "wrong challenge")
        #expect(try await harness.statusOf(requestID) == "pending")
        // UP=0 from the software authenticator too.
        try harness.addPasskey(userID: person.id)
        let upPayload = try await harness.optionsPayload(requestID)
        harness.authenticator.settings.userPresent = false
        let noPresence = try harness.assert(upPayload)
        harness.authenticator.settings.userPresent = true
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(upPayload), response: noPresence),
                      .assertionInvalid, "UP=0 (software authenticator)")
        #expect(try await harness.statusOf(requestID) == "pending")
        // Control: the undamaged answer to the second payload verifies.
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(second), response: try Self.fixtureAnswer(fixture, for: second)),
                      .verified, "control")
    }

    @Test("§1.5 step 1: the body is read strictly: a member given twice makes it no object; the answer's bytes reach the core as sent",
          arguments: Backend.allCases)
    func strictBody(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 1)
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(requestID)
        let challenge = try challengeID(payload)
        let answer = String(decoding: try JSONSerialization.data(withJSONObject: try harness.assert(payload)), as: UTF8.self)
        func complete(_ body: String) async throws -> HTTPReply {
            try await harness.send("POST", "/operations/request/passkey-complete", body: Data(body.utf8))
        }
        // request_id twice: not one JSON object, so no request is looked up.
        expectOutcome(try await complete(#"{"request_id":"\#(requestID)","request_id":"\#(requestID)","challenge_id":"\#(challenge)","response":\#(answer)}"#),
                      .unknownRequest, "duplicate request_id", closedShape: true)
        // response twice: the whole body is refused, nothing is tried.
        expectOutcome(try await complete(#"{"request_id":"\#(requestID)","challenge_id":"\#(challenge)","response":\#(answer),"response":\#(answer)}"#),
                      .unknownRequest, "duplicate response", closedShape: true)
        // response not an object.
        expectOutcome(try await complete(#"{"request_id":"\#(requestID)","challenge_id":"\#(challenge)","response":"\#(requestID)"}"#),
                      .assertionInvalid, "response a string")
        #expect(try await harness.statusOf(requestID) == "pending")
        // The same answer, well-formed and with insignificant white space, verifies: the challenge was never used.
        expectOutcome(try await complete(#"{ "request_id" : "\#(requestID)", "challenge_id":"\#(challenge)", "response" : \#(answer) }"#),
                      .verified, "control")
    }

    @Test("row 27: an unknown credential (random rawId) is failed/assertion_invalid", arguments: Backend.allCases)
    func row27(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let random = Base64URL.encode(SecureRandom.bytes(count: 16))
        let cases: [(String, ([String: Any]) -> [String: Any])] = [
            ("random id and rawId", { var a = $0; a["id"] = random; a["rawId"] = random; return a }),
            ("random rawId, genuine id", { var a = $0; a["rawId"] = random; return a }),
            ("random id, genuine rawId", { var a = $0; a["id"] = random; return a }),
        ]
        for (name, change) in cases {
            let payload = try await harness.optionsPayload(requestID)
            expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(payload), response: change(try harness.assert(payload))),
                          .assertionInvalid, name)
            #expect(try await harness.statusOf(requestID) == "pending")
        }
        expectOutcome(try await harness.verifyInline(requestID), .verified, "control")
    }

    // MARK: Row 31: codes

    @Test("row 31: every code the endpoints emit is in the fixed allow-list", arguments: Backend.allCases)
    func row31(backend: Backend) async throws {
        // The spec's list (§1.4 closed shape, §1.5 table, completion refusals), and nothing else.
        let specCodes: Set<String> = [
            "unknown_request", "request_closed", "request_expired", "challenge_expired", "link_changed", "assertion_invalid",
            "user_not_verified", "completion_failed",
        ]
        #expect(InlineOutcome.allCodes == specCodes)
        #expect([CompletionRefusal.requestClosed.rawValue, CompletionRefusal.completionFailed.rawValue].allSatisfy(specCodes.contains))
        var codes: Set<String> = []
        for (_, reply) in try await Self.everyOutcome(backend) {
            checkedPublic(reply)
            if let code = reply.outcome.code { codes.insert(code) }
        }
        #expect(codes == specCodes, "the scenario reaches every code")
        // Everything seen by every test of this suite so far, on either endpoint.
        let seen = SeenCodes.all()
        #expect(seen.isSuperset(of: codes))
        for code in seen {
            #expect(InlineOutcome.allCodes.contains(code), "\(code) is not in the allow-list")
            #expect(code.wholeMatch(of: try Regex("^[a-z_]+$")) != nil, "\(code)")
        }
        for reason in SeenCodes.allReasons() { #expect(["not_linked", "no_passkey"].contains(reason), "\(reason)") }
    }

    // MARK: Rows 35 to 38: CORS and links

    @Test("row 35: preflight on the public endpoints allows any origin without credentials; partner routes have no CORS",
          arguments: Backend.allCases)
    func row35(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let origin = "capacitor://localhost"
        for path in ["/operations/request/passkey-options", "/operations/request/passkey-complete"] {
            let preflight = try await harness.send("OPTIONS", path, body: nil, headers: [
                "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
            ])
            #expect((200..<300).contains(preflight.status), "\(path): \(preflight)")
            #expect(preflight.header("Access-Control-Allow-Origin") == "*", "\(path)")
            #expect(preflight.header("Access-Control-Allow-Credentials") == nil, "\(path)")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("POST") == true, "\(path)")
            #expect(preflight.header("Access-Control-Allow-Headers")?.lowercased().contains("content-type") == true, "\(path)")
        }
        // The real call from a WebView origin.
        let reply = try await checkedPublic(harness.post("/operations/request/passkey-options", ["request_id": VerificationService.newRequestID()],
                                                         headers: ["Origin": origin]))
        #expect(reply.header("Access-Control-Allow-Origin") == "*")
        #expect(reply.header("Access-Control-Allow-Credentials") == nil)
        // A partner route: no CORS header on preflight or call.
        let partnerPreflight = try await harness.send("OPTIONS", "/operations/sdk/create-session", body: nil, headers: [
            "Origin": origin, "Access-Control-Request-Method": "POST",
        ])
        #expect(partnerPreflight.header("Access-Control-Allow-Origin") == nil, "\(partnerPreflight)")
        #expect(partnerPreflight.header("Access-Control-Allow-Credentials") == nil)
        let partnerCall = try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey, headers: ["Origin": origin])
        #expect(partnerCall.status == 200, "\(partnerCall)")
        #expect(partnerCall.header("Access-Control-Allow-Origin") == nil)
        #expect(partnerCall.header("Access-Control-Allow-Credentials") == nil)
        #expect(partnerCall.header("Cache-Control") == "no-store")
    }

    @Test("row 36: url and setup_url come from configuration in every shape", arguments: Backend.allCases)
    func row36(backend: Backend) async throws {
        let appURL = "https://pages.other-brand.example:8443/"
        let base = "https://pages.other-brand.example:8443"
        for (harness, expected) in [(try InlineHarness(backend, appURL: appURL), base), (try InlineHarness(backend), InlineHarness.appURL)] {
            let withPasskey = try harness.person()
            let without = try harness.person(passkeys: 0)
            try harness.link("acct_1", to: withPasskey.id)
            try harness.link("acct_2", to: without.id)
            for ref in ["acct_1", "acct_2", nil] as [String?] {
                let created = try await harness.createRequest(ref: ref)
                let requestID = try #require(created["request_id"] as? String)
                let payload = try #require(try await checkedPublic(harness.options(requestID)).data)
                #expect(payload["url"] as? String == "\(expected)/verify?request_id=\(requestID)", "\(payload)")
                #expect(payload["setup_url"] as? String == "\(expected)/app/account/passkey", "\(payload)")
                #expect(created["web_url"] as? String == "\(expected)/verify?request_id=\(requestID)")
                if expected == base {
                    #expect(!(payload["url"] as? String ?? "").contains(InlineHarness.appURL))
                    #expect(!(payload["setup_url"] as? String ?? "").contains(InlineHarness.appURL))
                }
            }
        }
    }

    @Test("row 37: url is this request's hand-off; setup_url carries no request id", arguments: Backend.allCases)
    func row37(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        for ref in ["acct_1", nil] as [String?] {
            let created = try await harness.createRequest(ref: ref)
            let requestID = try #require(created["request_id"] as? String)
            let payload = try #require(try await checkedPublic(harness.options(requestID)).data)
            let urlText = try #require(payload["url"] as? String)
            let url = try #require(URLComponents(string: urlText))
            #expect(url.scheme == "https" && url.host == "app.id.example" && url.path == "/verify")
            #expect(url.queryItems?.count == 1)
            #expect(url.queryItems?.first { $0.name == "request_id" }?.value == requestID)
            #expect(payload["url"] as? String == created["web_url"] as? String)
            let setup = try #require(payload["setup_url"] as? String)
            #expect(!setup.contains("req_") && !setup.contains(requestID) && !setup.contains("?"), "\(setup)")
        }
    }

    @Test("row 38: options, then no_passkey, then a passkey is added: the same request gets options with a new challenge",
          arguments: Backend.allCases)
    func row38(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        let first = try await harness.optionsPayload(requestID)
        // The person's passkeys go away (removed on the account page).
        for record in try harness.sesame.store.credentials.list(userID: person.id) {
            #expect(try harness.sesame.store.credentials.delete(userID: person.id, id: record.id))
        }
        try await expectFallback(harness, requestID, "no_passkey")
        #expect(try await harness.statusOf(requestID) == "pending")
        try harness.addPasskey(userID: person.id)
        let second = try await harness.optionsPayload(requestID)
        let third = try await harness.optionsPayload(requestID)
        let challenges = try [first, second, third].map { try #require(($0["options"] as? [String: Any])?["challenge"] as? String) }
        #expect(Set(challenges).count == 3)
        #expect(Set(try [first, second, third].map(challengeID)).count == 3)
        expectOutcome(try await harness.complete(requestID, challengeID: try challengeID(third), response: try harness.assert(third)), .verified)
    }

    // MARK: P15: rate limits

    @Test("P15: the 11th passkey-options (and passkey-complete) for one request is HTTP 200 with .data.error statusCode 429",
          arguments: Backend.allCases)
    func p15(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try await harness.newRequest(ref: "acct_1")
        for _ in 0..<10 { _ = try await harness.optionsPayload(requestID) }
        for _ in 0..<2 { expectRateLimited(try await harness.options(requestID)) }
        // The limit is per request.
        let other = try await harness.newRequest(ref: "acct_1")
        let payload = try await harness.optionsPayload(other)
        for _ in 0..<10 {
            expectOutcome(try await harness.complete(other, challengeID: UUID().uuidString.lowercased(), response: try harness.assert(payload)),
                          .challengeExpired)
        }
        expectRateLimited(try await harness.complete(other, challengeID: try challengeID(payload), response: try harness.assert(payload)))
        #expect(try await harness.statusOf(other) == "pending")
        #expect(try await harness.statusOf(requestID) == "pending")
    }

    @Test("P15 on SQLite: the calls are counted in memory, the request's row untouched; without room, in the row; a count moves from the row to memory whole")
    func p15InMemory() async throws {
        func storedCalls(_ harness: InlineHarness, _ requestID: String) throws -> Int64? {
            try harness.sesame.store.database.queryFirst("SELECT options_calls FROM verification_requests WHERE id = $1",
                                                         [.text(requestID)])?.integer("options_calls")
        }
        func store(requestCalls: Int) throws -> Store {
            let path = String(try Backend.sqlite.makeURL().dropFirst("sqlite:".count))
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            return try Store(database: SQLiteDatabase(path: path), rateLimitSharing: RateLimitRepository.sharingInterval, requestCalls: requestCalls)
        }
        let inMemory = try InlineHarness(.sqlite)
        try inMemory.link("acct_1", to: try inMemory.person().id)
        let counted = try await inMemory.newRequest(ref: "acct_1")
        for _ in 0..<10 { _ = try await inMemory.optionsPayload(counted) }
        expectRateLimited(try await inMemory.options(counted))
        #expect(try storedCalls(inMemory, counted) == 0, "counted without a write")

        // No room: the row counts, and the limit holds.
        let full = try InlineHarness(.sqlite, store: try store(requestCalls: 0))
        try full.link("acct_1", to: try full.person().id)
        let inRow = try await full.newRequest(ref: "acct_1")
        for _ in 0..<10 { _ = try await full.optionsPayload(inRow) }
        expectRateLimited(try await full.options(inRow))
        #expect(try storedCalls(full, inRow) == 11)

        // Room for one request: the second is counted in its row until the first expires and is swept for it; it then
        // goes on from the row's count.
        let one = try InlineHarness(.sqlite, store: try store(requestCalls: 1))
        try one.link("acct_1", to: try one.person().id)
        let first = try await one.newRequest(ref: "acct_1")
        _ = try await one.optionsPayload(first)
        one.clock.advance(by: 240)
        let second = try await one.newRequest(ref: "acct_1")
        for _ in 0..<3 { _ = try await one.optionsPayload(second) }
        #expect(try storedCalls(one, second) == 3)
        one.clock.advance(by: 61)
        #expect(try await one.options(first).data?["outcome"] as? String == "expired", "the first request expired")
        for _ in 0..<7 { _ = try await one.optionsPayload(second) }
        expectRateLimited(try await one.options(second))
        #expect(try storedCalls(one, second) == 3, "the later calls were counted in memory, from the row's 3")
    }

    @Test("P15 (per IP, §2.11): the 61st public call in a minute from one IP is HTTP 200 with .data.error statusCode 429",
          arguments: Backend.allCases)
    func p15PerIP(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        // Start of a minute, so that the fixed window holds all calls.
        let minute = (harness.clock.now().timeIntervalSince1970 / 60).rounded(.down) * 60 + 60
        harness.clock.set(Date(timeIntervalSince1970: minute + 1))
        for index in 0..<60 {
            let reply = index.isMultiple(of: 2) ? try await harness.options(VerificationService.newRequestID())
                : try await harness.complete(VerificationService.newRequestID(), challengeID: "x", response: [:])
            expectOutcome(reply, .unknownRequest, "call \(index + 1)")
        }
        expectRateLimited(try await harness.options(VerificationService.newRequestID()))
        expectRateLimited(try await harness.complete(VerificationService.newRequestID(), challengeID: "x", response: [:]))
        harness.clock.advance(by: 60)
        expectOutcome(try await harness.options(VerificationService.newRequestID()), .unknownRequest, "next minute")
    }

    // MARK: Scenarios and shapes

    static let optionsKeys: Set<String> = ["options", "challenge_id", "expires_at", "url", "setup_url"]

    /// Drives passkey-complete into each of the ten outcomes of §1.5, each with the outcome it must have.
    static func everyOutcome(_ backend: Backend) async throws -> [(expected: InlineOutcome, reply: HTTPReply)] {
        let harness = try InlineHarness(backend)
        let a = try harness.person()
        let b = try harness.person()
        try harness.link("acct_a", to: a.id)
        var results: [(expected: InlineOutcome, reply: HTTPReply)] = []
        // verified, then request_closed on the same request, and unknown_request.
        let first = try await harness.newRequest(ref: "acct_a")
        let p1 = try await harness.optionsPayload(first)
        results.append((.verified, try await harness.complete(first, challengeID: try challengeID(p1), response: try harness.assert(p1))))
        results.append((.requestClosed, try await harness.complete(first, challengeID: try challengeID(p1), response: try harness.assert(p1))))
        results.append((.unknownRequest, try await harness.complete(VerificationService.newRequestID(), challengeID: try challengeID(p1),
                                                                    response: try harness.assert(p1))))
        // wrong_identity, then challenge_expired on the challenge it used.
        let second = try await harness.newRequest(ref: "acct_a")
        let p2 = try await harness.optionsPayload(second)
        results.append((.wrongIdentity, try await harness.complete(second, challengeID: try challengeID(p2),
                                                                   response: try harness.assert(allowing(p2, b.credentials[0])))))
        results.append((.challengeExpired, try await harness.complete(second, challengeID: try challengeID(p2), response: try harness.assert(p2))))
        // assertion_invalid.
        let p3 = try await harness.optionsPayload(second)
        results.append((.assertionInvalid, try await harness.complete(second, challengeID: try challengeID(p3),
                                                                      response: try flipped(harness.assert(p3), "signature"))))
        // user_not_verified.
        let p4 = try await harness.optionsPayload(second)
        harness.authenticator.settings.userVerified = false
        let unverified = try harness.assert(p4)
        harness.authenticator.settings.userVerified = true
        results.append((.userNotVerified, try await harness.complete(second, challengeID: try challengeID(p4), response: unverified)))
        // link_changed: unlinked and relinked (to the same person) between options and complete.
        let p5 = try await harness.optionsPayload(second)
        #expect(try harness.sesame.partners.unlink(partnerID: harness.partner.id, environment: .live, partnerUserRef: "acct_a"))
        try harness.link("acct_a", to: a.id)
        results.append((.linkChanged, try await harness.complete(second, challengeID: try challengeID(p5), response: try harness.assert(p5))))
        #expect(try await harness.statusOf(second) == "pending")
        // request_expired.
        let third = try await harness.newRequest(ref: "acct_a")
        let p6 = try await harness.optionsPayload(third)
        harness.clock.advance(by: 300.001)
        results.append((.requestExpired, try await harness.complete(third, challengeID: try challengeID(p6), response: try harness.assert(p6))))
        // completion_failed: a token signer that fails.
        let failing = try InlineHarness(backend, tokenSigner: FailingSigner())
        let person = try failing.person()
        try failing.link("acct_f", to: person.id)
        let fourth = try await failing.newRequest(ref: "acct_f")
        results.append((.completionFailed, try await failing.verifyInline(fourth)))
        #expect(try await failing.statusOf(fourth) == "pending")
        #expect(try await harness.statusOf(third) == "expired")
        return results
    }

    /// The response dictionary exactly as the seed's Swift sample builds it (`authenticatorAttachment`, empty
    /// `clientExtensionResults`, `userHandle` as given; `nil` leaves it out).
    static func seedSwiftEncoding(_ answer: [String: Any], userHandle: String?) throws -> [String: Any] {
        let response = try #require(answer["response"] as? [String: Any])
        var inner: [String: Any] = [
            "clientDataJSON": try #require(response["clientDataJSON"] as? String),
            "authenticatorData": try #require(response["authenticatorData"] as? String),
            "signature": try #require(response["signature"] as? String),
        ]
        if let userHandle { inner["userHandle"] = userHandle }
        let id = try #require(answer["id"] as? String)
        return [
            "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform", "response": inner,
            "clientExtensionResults": [String: Any](),
        ]
    }

    /// An options payload whose allow list names only `credentialID` (to run someone else's passkey on it).
    static func allowing(_ payload: [String: Any], _ credentialID: [UInt8]) throws -> [String: Any] {
        var payload = payload
        var options = try #require(payload["options"] as? [String: Any])
        options["allowCredentials"] = [["id": Base64URL.encode(credentialID), "type": "public-key"]]
        payload["options"] = options
        return payload
    }

    /// The fixture's answer to an options payload from an iOS app, after `defect`.
    static func fixtureAnswer(_ fixture: CeremonyFixture, for payload: [String: Any],
                              _ defect: (inout CeremonyFixture) -> Void = { _ in }) throws -> [String: Any] {
        var fixture = fixture
        let options = try #require(payload["options"] as? [String: Any])
        fixture.challenge = try Base64URL.decode(try #require(options["challenge"] as? String))
        fixture.origin = InlineHarness.iosOrigin
        defect(&fixture)
        let json = CeremonyFixture.json(fixture.authentication())
        return try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
    }

    /// Every key of every object in a JSON value.
    static func allKeys(_ value: Any) -> Set<String> {
        if let object = value as? [String: Any] {
            return object.reduce(into: Set(object.keys)) { $0.formUnion(allKeys($1.value)) }
        }
        if let array = value as? [Any] { return array.reduce(into: []) { $0.formUnion(allKeys($1)) } }
        return []
    }
}

// MARK: - Checks shared by the tests

/// Every code and fallback reason the public endpoints answered during this test run (row 31).
private enum SeenCodes {
    private static let seen = Mutex<(codes: Set<String>, reasons: Set<String>)>(([], []))

    static func record(_ reply: HTTPReply) {
        let code = reply.data?["code"] as? String, reason = reply.data?["reason"] as? String
        seen.withLock {
            if let code { $0.codes.insert(code) }
            if let reason { $0.reasons.insert(reason) }
        }
    }

    static func all() -> Set<String> { seen.withLock { $0.codes } }
    static func allReasons() -> Set<String> { seen.withLock { $0.reasons } }
}

/// Checks what every public answer shares (HTTP 200, JSON, `Cache-Control: no-store`) and records its code.
@discardableResult
private func checkedPublic(_ reply: HTTPReply, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPReply {
    #expect(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.header("Cache-Control") == "no-store", "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
    SeenCodes.record(reply)
    return reply
}

/// Checks a `{ outcome, code? }` answer: exactly those members, in the `{data:{data}}` envelope.
/// - Parameter closedShape: a closed passkey-options answer (the same two members).
private func expectOutcome(_ reply: HTTPReply, _ expected: InlineOutcome, _ context: String = "", closedShape: Bool = false,
                   sourceLocation: SourceLocation = #_sourceLocation) {
    checkedPublic(reply, sourceLocation: sourceLocation)
    #expect(reply.outcome.outcome == expected.outcome && reply.outcome.code == expected.code,
            "\(context) expected \(expected.outcome)/\(expected.code ?? "-"): \(reply)", sourceLocation: sourceLocation)
    let keys = Set(reply.data.map { Array($0.keys) } ?? [])
    #expect(keys == (expected.code == nil ? ["outcome"] : ["outcome", "code"]), "\(context): \(reply)", sourceLocation: sourceLocation)
    #expect(Set(reply.object.keys) == ["data"], "\(context): \(reply)", sourceLocation: sourceLocation)
}

/// Checks a rate-limited public answer: HTTP 200 with `.data.error.statusCode` 429 and no payload.
private func expectRateLimited(_ reply: HTTPReply, sourceLocation: SourceLocation = #_sourceLocation) {
    checkedPublic(reply, sourceLocation: sourceLocation)
    #expect(reply.publicError?["statusCode"] as? Int == 429, "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.data == nil, "\(reply)", sourceLocation: sourceLocation)
}

/// passkey-options must answer the fallback shape with `reason`.
private func expectFallback(_ harness: InlineHarness, _ requestID: String, _ reason: String,
                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let reply = checkedPublic(try await harness.options(requestID), sourceLocation: sourceLocation)
    #expect(reply.data?["fallback"] as? String == "app", "\(reply)", sourceLocation: sourceLocation)
    #expect(reply.data?["reason"] as? String == reason, "\(reply)", sourceLocation: sourceLocation)
}

/// The `challenge_id` of an options payload.
private func challengeID(_ payload: [String: Any]) throws -> String {
    try #require(payload["challenge_id"] as? String, "no challenge_id in \(payload)")
}

/// An answer with one bit of a `response` member flipped (in its last byte: for a DER signature, inside `s`).
private func flipped(_ answer: [String: Any], _ member: String) throws -> [String: Any] {
    let response = try #require(answer["response"] as? [String: Any])
    var bytes = try Base64URL.decode(try #require(response[member] as? String))
    bytes[bytes.count - 1] ^= 0x01
    return try replaced(answer, member, bytes)
}

/// An answer with a `response` member replaced.
private func replaced(_ answer: [String: Any], _ member: String, _ bytes: [UInt8]) throws -> [String: Any] {
    var answer = answer
    var response = try #require(answer["response"] as? [String: Any])
    response[member] = Base64URL.encode(bytes)
    answer["response"] = response
    return answer
}

/// A token signer that always fails (completion_failed).
private struct FailingSigner: VerificationTokenSigner {
    func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String {
        throw SesameError(.internalFailure, "signer unavailable")
    }

    func readied() -> any VerificationTokenSigner { self }
}

/// A linked person's request on a database that fails statements on demand, with options issued and answered.
private func failingRequest(_ backend: Backend) async throws
    -> (database: FailingDatabase, harness: InlineHarness, requestID: String, payload: [String: Any], answer: [String: Any])
{
    let database = FailingDatabase(base: try Store.open(try backend.makeURL()).database)
    let harness = try InlineHarness(backend, store: try Store(database: database))
    let person = try harness.person()
    try harness.link("acct_1", to: person.id)
    let requestID = try await harness.newRequest(ref: "acct_1")
    let payload = try await harness.optionsPayload(requestID)
    return (database, harness, requestID, payload, try harness.assert(payload))
}

/// A database that forwards to a real one, and while armed fails every statement (or those whose SQL contains a
/// marker) with `unavailable`, as a lost database connection would.
private final class FailingDatabase: SQLDatabase {
    let base: any SQLDatabase
    private let marker = Mutex<String?>(nil)

    init(base: any SQLDatabase) { self.base = base }

    /// Fails every statement (`""`) or those containing `marker`; `nil` disarms.
    func fail(when marker: String?) { self.marker.withLock { $0 = marker } }

    func check(_ sql: String) throws(StoreError) {
        guard let marker = marker.withLock({ $0 }), marker.isEmpty || sql.contains(marker) else { return }
        throw StoreError(.unavailable, "injected failure: connection lost")
    }

    var dialect: SQLDialect { base.dialect }

    func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try base.transaction { connection throws(StoreError) -> T in try body(FailingConnection(base: connection, owner: self)) }
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try check(sql)
        return try base.query(sql, parameters)
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try check(sql)
        return try base.execute(sql, parameters)
    }

    func bookkeeping(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try check(sql)
        return try base.bookkeeping(sql, parameters)
    }

    func bookkeepingTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try base.bookkeepingTransaction { connection throws(StoreError) -> T in try body(FailingConnection(base: connection, owner: self)) }
    }
}

/// A connection of ``FailingDatabase``'s transactions.
private struct FailingConnection: SQLConnection {
    let base: any SQLConnection
    let owner: FailingDatabase

    var dialect: SQLDialect { base.dialect }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try owner.check(sql)
        return try base.query(sql, parameters)
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try owner.check(sql)
        return try base.execute(sql, parameters)
    }

    func onRollback(_ giveBack: @escaping () -> Void) { base.onRollback(giveBack) }
    func onCommit(_ followUp: @escaping () -> Void) { base.onCommit(followUp) }
}

// MARK: - Harness conveniences of this suite

fileprivate extension InlineHarness {
    /// create-verification-link; the new request's ID.
    func newRequest(ref: String? = nil, key: String? = nil) async throws -> String {
        try #require(try await createRequest(ref: ref, key: key)["request_id"] as? String)
    }

    /// The request's status as its partner reads it.
    func statusOf(_ requestID: String, key: String? = nil) async throws -> String? {
        try await status(requestID, key: key).data?["status"] as? String
    }

    /// passkey-options, which must answer the options shape; its payload.
    func optionsPayload(_ requestID: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let reply = checkedPublic(try await options(requestID), sourceLocation: sourceLocation)
        let payload = try #require(reply.data, "\(reply)", sourceLocation: sourceLocation)
        try #require(payload["options"] is [String: Any], "\(reply)", sourceLocation: sourceLocation)
        return payload
    }

    func requestRecord(_ requestID: String) throws -> VerificationRequestRecord {
        try #require(try sesame.store.verificationRequests.get(id: requestID))
    }

    func challengeRecord(_ challengeID: String) throws -> ChallengeRecord {
        try #require(try storedChallenge(challengeID))
    }

    /// An inline challenge as stored: in memory on SQLite, a row on PostgreSQL.
    func storedChallenge(_ challengeID: String) throws -> ChallengeRecord? {
        try sesame.store.pendingChallenges?.get(id: challengeID) ?? sesame.store.challenges.get(id: challengeID)
    }

    /// Puts the clock 0.2 ms into a whole millisecond, so stored (millisecond) times are exact.
    func alignClock() {
        let milliseconds = (clock.now().timeIntervalSince1970 * 1000).rounded(.down)
        clock.set(Date(timeIntervalSince1970: milliseconds / 1000 + 0.0002))
    }

    /// Sets the clock `milliseconds` after a stored time, 0.2 ms into that millisecond.
    func setClock(_ stored: Date, plusMilliseconds milliseconds: Int64) {
        let target = Double(stored.millisecondsSince1970 + milliseconds)
        clock.set(Date(timeIntervalSince1970: target / 1000 + 0.0002))
    }

    /// Registers a passkey whose private key the test holds, through the same domain path as ``addPasskey(userID:)``.
    func fixturePasskey(userID: String) throws -> CeremonyFixture {
        let project = try sesame.projects.get(projectID)
        let user = try sesame.users.get(projectID: projectID, id: userID)
        let session = try sesame.sessions.create(projectID: projectID, userID: userID, provider: "passkey", factors: ["passkey"],
                                                 client: ClientInfo(ip: "127.0.0.1", userAgent: "tests")).session
        let start = try sesame.passkeys.beginRegistration(project: project, user: user, session: session, passkeyID: nil, name: nil,
                                                          requestOrigin: Self.appURL)
        var fixture = CeremonyFixture()
        fixture.rpID = Self.rpID
        fixture.origin = Self.appURL
        fixture.challenge = start.challenge
        fixture.credentialID = SecureRandom.bytes(count: 16)
        fixture.userHandle = start.userHandle
        _ = try sesame.passkeys.finishRegistration(project: project, user: user, session: session, passkeyID: start.passkeyID,
                                                   credentialJSON: CeremonyFixture.json(fixture.registration()), requestOrigin: Self.appURL)
        fixture.clientData = [:]
        return fixture
    }
}

fileprivate extension Date {
    /// Whole milliseconds since 1970, as the store keeps times.
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}
