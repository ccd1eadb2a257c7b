import Foundation
import SesameClient
import SesameCore
import SesameCrypto
import SesameStore
import Synchronization
import SesameTestSupport
import Testing
import WebAuthn

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Part 3 rows about the partner's side of inline verification: single use under concurrency, the link and identity
/// checks, the completion routine, partner apps and association files, and the Pattern B endpoints.
@Suite struct PartnerTests {
    // MARK: Completion

    @Test("row 10: 20 parallel completes of one challenge -> exactly one verified, the others lose (challenge_expired, or request_closed once completed); one webhook",
          arguments: Backend.allCases)
    func concurrentCompletes(backend: Backend) async throws {
        let signer = SwitchableSigner()
        let harness = try InlineHarness(backend, tokenSigner: signer)
        signer.delegate = harness.sesame.signingKeys
        // Synced passkeys report a zero counter, so twenty assertions of one credential are each valid on their own.
        #expect(harness.authenticator.settings.counter == .zero)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)

        // Twenty answers to one challenge, sent at once. §2.11 lets 10 passkey-complete calls per request through; the
        // rest get the rate-limit shape (HTTP 200, .data.error.statusCode 429).
        func race() async throws -> (requestID: String, tally: [String: Int]) {
            let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
            let payload = try #require(try await harness.options(requestID).data)
            let challengeID = try #require(payload["challenge_id"] as? String)
            var bodies: [Data] = []
            for _ in 0..<20 {
                let answer = try harness.assert(payload)
                bodies.append(try JSONSerialization.data(withJSONObject: ["request_id": requestID, "challenge_id": challengeID, "response": answer]))
            }
            var tally: [String: Int] = [:]
            for (status, body) in try await PartnerKit.burst(harness, path: "/operations/request/passkey-complete", bodies: bodies) {
                let envelope = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["data"] as? [String: Any]
                let key: String
                if let data = envelope?["data"] as? [String: Any], Set(data.keys).isSubset(of: ["outcome", "code"]) {
                    key = [data["outcome"] as? String, data["code"] as? String].compactMap { $0 }.joined(separator: "/")
                } else if let error = envelope?["error"] as? [String: Any] {
                    key = "error \(error["statusCode"] ?? "?")"
                } else {
                    key = String(decoding: body, as: UTF8.self)
                }
                tally["\(status == 200 ? "" : "HTTP \(status) ")\(key)", default: 0] += 1
            }
            return (requestID, tally)
        }
        let admitted = InlinePasskeyService.callsPerRequest

        // With completion failing, the request stays pending, so only the challenge decides: one call gets past it.
        signer.fails = true
        let pending = try await race()
        #expect(pending.tally == ["failed/completion_failed": 1, "expired/challenge_expired": admitted - 1, "error 429": 20 - admitted],
                "\(pending.tally)")
        #expect(signer.calls == 1, "the signer ran for one call only")
        #expect(try await harness.status(pending.requestID).data?["status"] as? String == "pending")

        // With completion working: one verified; a loser sees challenge_expired, or request_closed when it arrives after
        // the winner completed the request (§1.5 checks the request, step 2, before the challenge, step 3).
        signer.fails = false
        let completed = try await race()
        #expect(completed.tally["verified"] == 1, "exactly one of the parallel completes wins: \(completed.tally)")
        #expect(completed.tally["error 429"] == 20 - admitted, "\(completed.tally)")
        let losers = (completed.tally["expired/challenge_expired"] ?? 0) + (completed.tally["failed/request_closed"] ?? 0)
        #expect(losers == admitted - 1, "every other admitted call lost the race: \(completed.tally)")
        #expect(completed.tally.values.reduce(0, +) == 20)

        let status = try await harness.status(completed.requestID)
        #expect(status.data?["status"] as? String == "completed", "\(status)")
        let events = try PartnerKit.humanVerified(harness)
        #expect(events.count == 1, "one gate.human_verified for both races together")
        #expect(try PartnerKit.eventData(try #require(events.first))["request_id"] as? String == completed.requestID)
    }

    @Test("row 22: unlink + relink of the ref between options and complete -> failed/link_changed; request pending",
          arguments: Backend.allCases)
    func linkChanged(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        let original = try harness.link("acct_1", to: person.id)
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let payload = try #require(try await harness.options(requestID).data)
        let answer = try harness.assert(payload)

        // The partner unlinks over the API, and the same person links the ref again: a new link, the same person.
        let unlink = try await harness.post("/operations/sdk/unlink", ["partner_user_ref": "acct_1"], bearer: harness.liveKey)
        #expect(unlink.status == 200 && unlink.data?["unlinked"] as? Bool == true, "\(unlink)")
        let relinked = try harness.link("acct_1", to: person.id)
        #expect(relinked.id != original.id && relinked.userID == original.userID)

        let reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.status == 200)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "link_changed", "\(reply)")
        #expect(Set(try #require(reply.data).keys) == ["outcome", "code"])
        // The attempt used the challenge up (step 3 comes before step 4): the same answer again is challenge_expired.
        let again = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(again.outcome.outcome == "expired" && again.outcome.code == "challenge_expired", "\(again)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")
        #expect(try PartnerKit.humanVerified(harness).isEmpty)
        // Still open: options issued under the new link complete it.
        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")

        // Unlinked (and not relinked) between options and complete: link_changed too, and the next options fall back.
        let second = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let secondPayload = try #require(try await harness.options(second).data)
        let secondAnswer = try harness.assert(secondPayload)
        #expect(try await harness.post("/operations/sdk/unlink", ["partner_user_ref": "acct_1"], bearer: harness.liveKey)
            .data?["unlinked"] as? Bool == true)
        let unlinked = try await harness.complete(second, challengeID: try #require(secondPayload["challenge_id"] as? String),
                                                  response: secondAnswer)
        #expect(unlinked.outcome.outcome == "failed" && unlinked.outcome.code == "link_changed", "\(unlinked)")
        #expect(try await harness.status(second).data?["status"] as? String == "pending")
        let fallback = try await harness.options(second)
        #expect(fallback.data?["fallback"] as? String == "app" && fallback.data?["reason"] as? String == "not_linked", "\(fallback)")
    }

    @Test("row 23: a valid assertion by B's passkey on A's request -> wrong_identity; request pending; link intact",
          arguments: Backend.allCases)
    func wrongIdentity(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let alice = try harness.person(), bob = try harness.person()
        let aliceLink = try harness.link("acct_a", to: alice.id)
        let bobLink = try harness.link("acct_b", to: bob.id)
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_a"))
        var payload = try #require(try await harness.options(requestID).data)
        var options = try #require(payload["options"] as? [String: Any])
        let allowed = try #require(options["allowCredentials"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(allowed == alice.credentials.map { Base64URL.encode($0) }, "the options name only Alice's passkey")

        // Bob's authenticator answers: the app's platform sheet would offer his passkey only if it were listed, so the
        // options are rewritten to name it. The challenge is the one issued for Alice's request.
        options["allowCredentials"] = [["id": Base64URL.encode(bob.credentials[0]), "type": "public-key"]]
        payload["options"] = options
        let answer = try harness.assert(payload, credentialID: bob.credentials[0])
        #expect(answer["rawId"] as? String == Base64URL.encode(bob.credentials[0]))
        let reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.status == 200)
        #expect(reply.outcome.outcome == "wrong_identity" && reply.outcome.code == nil, "\(reply)")
        #expect(Set(try #require(reply.data).keys) == ["outcome"])

        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")
        #expect(try PartnerKit.humanVerified(harness).isEmpty)
        let links = harness.sesame.store.partners
        let aliceNow = try links.findLink(partnerID: harness.partner.id, environment: "live", partnerUserRef: "acct_a")
        #expect(aliceNow?.id == aliceLink.id && aliceNow?.userID == alice.id, "Alice's link is untouched")
        let bobNow = try links.findLink(partnerID: harness.partner.id, environment: "live", partnerUserRef: "acct_b")
        #expect(bobNow?.id == bobLink.id && bobNow?.userID == bob.id, "Bob's link is untouched")
    }

    @Test("stored metadata that is not one JSON object (a damaged row) is left out of the status answer and the event, which stay valid JSON",
          arguments: Backend.allCases)
    func damagedMetadata(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 1)
        try harness.link("acct_123", to: person.id)
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_123", extra: ["metadata": ["order": "o-1"]]))
        #expect(try await harness.status(requestID).data?["metadata"] as? [String: String] == ["order": "o-1"])
        try harness.sesame.store.database.execute("UPDATE verification_requests SET metadata = $1 WHERE id = $2",
                                                  [.text(#"{"order":"o-1""#), .text(requestID)])
        let status = try await harness.status(requestID)
        #expect(status.status == 200 && status.data?["request_id"] as? String == requestID, "\(status)")
        #expect(status.data?["metadata"] == nil, "\(status)")
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.outcome.outcome == "verified", "\(reply)")
        let event = try #require(try PartnerKit.humanVerified(harness).first)
        let data = try PartnerKit.eventData(event)
        #expect(data["metadata"] == nil && data["request_id"] as? String == requestID)
        #expect(data["verification_token"] as? String == "")
    }

    @Test("row 28: verified completes like the hand-off: status completed with its token, exactly one gate.human_verified",
          arguments: Backend.allCases)
    func successCompletes(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 2)
        try harness.link("acct_123", to: person.id)
        let created = try await harness.createRequest(ref: "acct_123", extra: ["metadata": ["order": "o-1"]])
        let requestID = try PartnerKit.requestID(created)
        let reply = try await harness.verifyInline(requestID, credentialID: person.credentials[1])
        #expect(reply.status == 200 && reply.outcome.outcome == "verified", "\(reply)")
        #expect(Set(try #require(reply.data).keys) == ["outcome"], "no token, id or session reaches the app")

        let status = try await harness.status(requestID)
        let data = try #require(status.data, "\(status)")
        #expect(data["status"] as? String == "completed")
        #expect(data["completed_at"] is String)
        let token = try #require(data["verification_token"] as? String)
        #expect(token.split(separator: ".", omittingEmptySubsequences: false).count == 3)
        #expect(try await harness.status(requestID).data?["verification_token"] as? String == token, "never re-minted")

        let events = try PartnerKit.humanVerified(harness)
        #expect(events.count == 1, "\(events.map(\.type))")
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).count == 1, "no other event")
        let event = try #require(events.first)
        #expect(event.environment == "live")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
        #expect(Set(body.keys) == ["type", "timestamp", "data"])
        #expect(body["type"] as? String == "gate.human_verified")
        let eventData = try PartnerKit.eventData(event)
        #expect(Set(eventData.keys) == ["request_id", "scope", "env", "partner_user_ref", "linked", "verification_token", "metadata"])
        #expect(eventData["request_id"] as? String == requestID)
        #expect(eventData["scope"] as? String == "checkout" && eventData["env"] as? String == "live")
        #expect(eventData["partner_user_ref"] as? String == "acct_123" && eventData["linked"] as? Bool == true)
        // The stored body keeps no token: with no endpoint to deliver to, not even a sealed one.
        #expect(eventData["verification_token"] as? String == "", "the stored body holds no token")
        #expect(event.sealedToken == nil && event.tokenOffset != nil)
        #expect(!String(decoding: event.body, as: UTF8.self).contains(token))
        #expect(eventData["metadata"] as? [String: String] == ["order": "o-1"])
        let text = String(decoding: event.body, as: UTF8.self)
        for secret in [person.id] + person.credentials.map({ Base64URL.encode($0) }) { #expect(!text.contains(secret)) }

        // Completed is final: the app's next options say so and nothing more is queued.
        let again = try await harness.options(requestID)
        #expect(again.outcome.outcome == "failed" && again.outcome.code == "request_closed", "\(again)")
        #expect(try PartnerKit.humanVerified(harness).count == 1)
    }

    @Test("row 30: a token signer that throws -> failed/completion_failed; request pending; no webhook", arguments: Backend.allCases)
    func completionFailure(backend: Backend) async throws {
        let signer = SwitchableSigner()
        let harness = try InlineHarness(backend, tokenSigner: signer)
        signer.delegate = harness.sesame.signingKeys
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))

        signer.fails = true
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.status == 200)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "completion_failed", "\(reply)")
        #expect(Set(try #require(reply.data).keys) == ["outcome", "code"])
        #expect(signer.calls == 1, "the completion routine reached the signer")
        let status = try await harness.status(requestID)
        #expect(status.data?["status"] as? String == "pending" && status.data?["verification_token"] == nil, "\(status)")
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).isEmpty)

        // Nothing was half-done: once signing works, the same request completes, with one event.
        signer.fails = false
        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
        #expect(try await harness.status(requestID).data?["status"] as? String == "completed")
        #expect(try PartnerKit.humanVerified(harness).count == 1)
    }

    // MARK: Partner apps and association files

    @Test("row 32: an Android app's origin -> assertion_invalid while the app is pending; verified once approved",
          arguments: Backend.allCases)
    func androidApproval(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let app = try harness.sesame.partners.addApp(
            partnerID: harness.partner.id,
            platform: .android(packageName: "com.partner.app", sha256Fingerprints: [try PlatformValidation.sha256Fingerprint(PartnerKit.fingerprint)])
        )
        #expect(app.state == .pending)

        // Unregistered fingerprint, and the registered one while pending: both refused as the seed says.
        let pending = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let unknownOrigin = "android:apk-key-hash:" + Base64URL.encode([UInt8](repeating: 0x11, count: 32))
        for origin in [unknownOrigin, PartnerKit.goldenOrigin] {
            let reply = try await PartnerKit.completeInline(harness, pending, origin: origin)
            #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "assertion_invalid", "\(origin): \(reply)")
        }
        #expect(try await harness.status(pending).data?["status"] as? String == "pending")

        _ = try harness.sesame.partners.setAppState(partnerID: harness.partner.id, appID: app.id, to: .approved)
        let fresh = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let unknown = try await PartnerKit.completeInline(harness, fresh, origin: unknownOrigin)
        #expect(unknown.outcome.code == "assertion_invalid", "approving one app admits no other: \(unknown)")
        let approved = try await PartnerKit.completeInline(harness, fresh, origin: PartnerKit.goldenOrigin)
        #expect(approved.outcome.outcome == "verified", "\(approved)")
        #expect(try await harness.status(fresh).data?["status"] as? String == "completed")

        // Revoked: refused again.
        _ = try harness.sesame.partners.setAppState(partnerID: harness.partner.id, appID: app.id, to: .revoked)
        let afterRevoke = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let revoked = try await PartnerKit.completeInline(harness, afterRevoke, origin: PartnerKit.goldenOrigin)
        #expect(revoked.outcome.code == "assertion_invalid", "\(revoked)")
    }

    @Test("row 33: pending and rejected apps are absent from AASA and assetlinks; approved present; revoked removed",
          arguments: Backend.allCases)
    func associationFiles(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        // A second project, so the files served are chosen by the Host header (id.example), not by being the only one.
        _ = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example", relyingPartyName: "Other")
        let partners = harness.sesame.partners
        let partnerID = harness.partner.id
        let fingerprint = try PlatformValidation.sha256Fingerprint(PartnerKit.fingerprint)
        let ios = try partners.addApp(partnerID: partnerID, platform: .apple(teamID: "ABCDE12345", bundleID: "com.partner.app"))
        let android = try partners.addApp(partnerID: partnerID, platform: .android(packageName: "com.partner.app", sha256Fingerprints: [fingerprint]))
        let rejectedIOS = try partners.addApp(partnerID: partnerID, platform: .apple(teamID: "FGHIJ67890", bundleID: "com.partner.rejected"))
        let rejectedAndroid = try partners.addApp(
            partnerID: partnerID, platform: .android(packageName: "com.partner.rejected", sha256Fingerprints: [[UInt8](repeating: 0x22, count: 32)])
        )
        _ = try partners.setAppState(partnerID: partnerID, appID: rejectedIOS.id, to: .rejected)
        _ = try partners.setAppState(partnerID: partnerID, appID: rejectedAndroid.id, to: .rejected)

        var files = try await PartnerKit.associationFiles(harness)
        #expect(files.apps == [], "pending and rejected apps are not associated")
        #expect(files.android.isEmpty)

        _ = try partners.setAppState(partnerID: partnerID, appID: ios.id, to: .approved)
        _ = try partners.setAppState(partnerID: partnerID, appID: android.id, to: .approved)
        files = try await PartnerKit.associationFiles(harness)
        #expect(files.apps == ["ABCDE12345.com.partner.app"])
        #expect(files.android.count == 1)
        let statement = try #require(files.android.first)
        #expect(Set(statement["relation"] as? [String] ?? [])
            == ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"])
        let target = try #require(statement["target"] as? [String: Any])
        #expect(target["namespace"] as? String == "android_app" && target["package_name"] as? String == "com.partner.app")
        #expect(target["sha256_cert_fingerprints"] as? [String] == [PartnerKit.fingerprint])

        // A rejected app cannot be approved later; a revoked one leaves both files.
        #expect(throws: SesameError.self) { try partners.setAppState(partnerID: partnerID, appID: rejectedIOS.id, to: .approved) }
        _ = try partners.setAppState(partnerID: partnerID, appID: ios.id, to: .revoked)
        _ = try partners.setAppState(partnerID: partnerID, appID: android.id, to: .revoked)
        files = try await PartnerKit.associationFiles(harness)
        #expect(files.apps == [] && files.android.isEmpty, "revoked apps are removed")
    }

    @Test("row 34: no related origins for partner web origins (/.well-known/webauthn is 404); origin https://partner.example -> assertion_invalid",
          arguments: Backend.allCases)
    func partnerWebOrigins(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let partners = harness.sesame.partners
        #expect(throws: SesameError.self, "a partner cannot register a web origin") {
            try partners.addApp(partnerID: harness.partner.id, platform: .web(hostname: "partner.example"))
        }
        // Approved native apps never add a web origin either.
        let ios = try partners.addApp(partnerID: harness.partner.id, platform: .apple(teamID: "ABCDE12345", bundleID: "com.partner.app"))
        _ = try partners.setAppState(partnerID: harness.partner.id, appID: ios.id, to: .approved)

        _ = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example", relyingPartyName: "Other")
        let aasa = try await harness.send("GET", "/.well-known/apple-app-site-association", body: nil, headers: ["Host": InlineHarness.rpID])
        #expect(aasa.status == 200 && aasa.text.contains("ABCDE12345.com.partner.app"), "the Host header picks id.example: \(aasa)")
        let related = try await harness.send("GET", "/.well-known/webauthn", body: nil, headers: ["Host": InlineHarness.rpID])
        // §2.7: not served at all. (The harness registers its hosted pages, https://app.id.example, as the project's web
        // platform so passkeys can be registered; that origin must not turn the file on either.)
        #expect(related.status == 404, "\(related)")
        #expect(!related.text.contains("partner.example"))

        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        let reply = try await PartnerKit.completeInline(harness, requestID, origin: "https://partner.example")
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "assertion_invalid", "\(reply)")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")
        // The same ceremony from our own rpId origin goes through, so only the origin was refused.
        #expect(try await PartnerKit.completeInline(harness, requestID, origin: InlineHarness.iosOrigin).outcome.outcome == "verified")
    }

    // MARK: The partner's server

    @Test("row 44: a partner server acts only on status completed + a token it verified; a forged app verified is refused",
          arguments: Backend.allCases)
    func neverTrustTheApp(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        var server = SamplePartnerServer(harness: harness)

        // The app claims success for a request nobody confirmed.
        let forged = try await server.openRequest(action: "checkout", ref: "acct_1")
        #expect(try await server.appSaysDone(requestID: forged, action: "checkout") == false)

        // A genuine inline confirmation lets the action through once.
        let genuine = try await server.openRequest(action: "checkout", ref: "acct_1")
        #expect(try await harness.verifyInline(genuine).outcome.outcome == "verified")
        #expect(try await server.appSaysDone(requestID: genuine, action: "checkout") == true)
        #expect(try await server.appSaysDone(requestID: genuine, action: "checkout") == false, "a token settles one action")

        // Still refused: the forged request stays pending whatever the app says about the other one.
        #expect(try await server.appSaysDone(requestID: forged, action: "checkout") == false)
        // A completed request for another action does not unlock this one.
        let other = try await server.openRequest(action: "transfer", ref: "acct_1")
        #expect(try await harness.verifyInline(other).outcome.outcome == "verified")
        #expect(try await server.appSaysDone(requestID: other, action: "checkout") == false)
        // A request the partner did not open (another partner's, completed) reads not_found with this partner's key.
        let stranger = try harness.sesame.partners.create(projectID: harness.projectID, name: "Other")
        let strangerKey = try harness.sesame.partners.createAPIKey(partnerID: stranger.id, environment: .live).secret
        let strangerPerson = try harness.person()
        _ = try harness.sesame.partners.link(partnerID: stranger.id, environment: .live, partnerUserRef: "acct_1", userID: strangerPerson.id)
        let foreign = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1", key: strangerKey))
        #expect(try await harness.verifyInline(foreign).outcome.outcome == "verified")
        #expect(try await server.appSaysDone(requestID: foreign, action: "checkout") == false)
    }

    // MARK: Pattern B endpoints

    @Test("P1: a grant used at +5:01 -> 401 invalid_grant with {error:{statusCode, code, message}}", arguments: Backend.allCases)
    func grantLifetime(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let grant = try await PartnerKit.grant(harness)
        harness.clock.advance(by: 4 * 60 + 59)
        let inTime = try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant)
        #expect(inTime.status == 200 && inTime.data?["request_id"] is String, "\(inTime)")

        harness.clock.advance(by: 2)
        let late = try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant)
        #expect(late.status == 401, "\(late)")
        #expect(Set(late.object.keys) == ["error"])
        let error = try #require(late.error)
        #expect(Set(error.keys) == ["statusCode", "code", "message"])
        #expect(error["statusCode"] as? Int == 401 && error["code"] as? String == "invalid_grant")
        #expect((error["message"] as? String)?.isEmpty == false)
        #expect(try PartnerKit.requestCount(harness) == 1, "only the in-time call made a request")
    }

    @Test("P2: another partner's key, and the test key on a live request, read status not_found", arguments: Backend.allCases)
    func statusIsolation(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let other = try harness.sesame.partners.create(projectID: harness.projectID, name: "Other")
        let otherKey = try harness.sesame.partners.createAPIKey(partnerID: other.id, environment: .live).secret
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))

        func expectNotFound(_ key: String, _ label: String) async throws {
            let reply = try await harness.status(requestID, key: key)
            #expect(reply.status == 200, "\(label): \(reply)")
            #expect(reply.data?["status"] as? String == "not_found", "\(label): \(reply)")
            #expect(Set(reply.data?.keys.map { $0 } ?? []) == ["request_id", "status"], "\(label) learns nothing more: \(reply)")
        }
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")
        try await expectNotFound(otherKey, "another partner")
        try await expectNotFound(harness.testKey, "the test key")

        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
        #expect(try await harness.status(requestID).data?["verification_token"] is String)
        try await expectNotFound(otherKey, "another partner, completed")
        try await expectNotFound(harness.testKey, "the test key, completed")

        // And the other way round: a test request is invisible to the live key.
        let testRequest = try PartnerKit.requestID(try await harness.createRequest(key: harness.testKey))
        #expect(try await harness.status(testRequest, key: harness.testKey).data?["status"] as? String == "pending")
        #expect(try await harness.status(testRequest).data?["status"] as? String == "not_found")
    }

    @Test("P11: partner_user_ref with @ -> 400 partner_user_ref_invalid; bad scope, metadata > 2 KB, link without ref, return_url -> 400; nothing written",
          arguments: Backend.allCases)
    func linkValidation(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let grant = try await PartnerKit.grant(harness)
        let cases: [(String, [String: Any], String)] = [
            ("email ref", ["scope": "checkout", "partner_user_ref": "alice@example.com"], "partner_user_ref_invalid"),
            ("ref with @ only", ["scope": "checkout", "partner_user_ref": "acct@1"], "partner_user_ref_invalid"),
            ("ref too long", ["scope": "checkout", "partner_user_ref": String(repeating: "a", count: 129)], "partner_user_ref_invalid"),
            ("no scope", [:], "scope_invalid"),
            ("upper-case scope", ["scope": "Checkout"], "scope_invalid"),
            ("scope too long", ["scope": String(repeating: "a", count: 65)], "scope_invalid"),
            ("metadata over 2 KB", ["scope": "checkout", "metadata": ["note": String(repeating: "x", count: 2100)]], "metadata_invalid"),
            ("metadata not an object", ["scope": "checkout", "metadata": ["a", "b"]], "metadata_invalid"),
            ("link without ref", ["scope": "checkout", "link": true], "link_requires_partner_user_ref"),
            ("return_url", ["scope": "checkout", "return_url": "https://partner.example/done"], "return_url_not_allowed"),
        ]
        for (label, body, code) in cases {
            let reply = try await harness.post("/operations/sdk/create-verification-link", body, bearer: grant)
            #expect(reply.status == 400, "\(label): \(reply)")
            #expect(reply.error?["code"] as? String == code, "\(label): \(reply)")
            #expect(reply.error?["statusCode"] as? Int == 400 && reply.error?["message"] is String, "\(label): \(reply)")
            #expect(reply.data == nil)
        }
        #expect(try PartnerKit.requestCount(harness) == 0, "no rejected call wrote a request")

        // The boundaries that pass: a 128-character ref and metadata just under 2 KB.
        let ok = try await harness.post("/operations/sdk/create-verification-link",
                                        ["scope": "checkout", "partner_user_ref": String(repeating: "a", count: 128),
                                         "metadata": ["note": String(repeating: "x", count: 2000)]], bearer: grant)
        #expect(ok.status == 200, "\(ok)")
        #expect(try PartnerKit.requestCount(harness) == 1)
    }

    @Test("P12: fingerprint AB:CD:... -> android:apk-key-hash:<base64url, no padding> (golden vector)", arguments: Backend.allCases)
    func androidOriginEncoding(backend: Backend) async throws {
        // Computed here without the product: hex pairs to bytes, Foundation's base64, URL alphabet, padding removed.
        let bytes = PartnerKit.fingerprint.split(separator: ":").map { UInt8($0, radix: 16)! }
        #expect(bytes.count == 32)
        let computed = "android:apk-key-hash:" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(computed == PartnerKit.goldenOrigin)

        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let app = try harness.sesame.partners.addApp(
            partnerID: harness.partner.id,
            platform: .android(packageName: "com.partner.app", sha256Fingerprints: [try PlatformValidation.sha256Fingerprint(PartnerKit.fingerprint)])
        )
        _ = try harness.sesame.partners.setAppState(partnerID: harness.partner.id, appID: app.id, to: .approved)
        let requestID = try PartnerKit.requestID(try await harness.createRequest(ref: "acct_1"))
        // Near misses: standard base64 (with and without padding), padded base64url, and the hex forms.
        let standard = Data(bytes).base64EncodedString()
        let nearMisses = [
            "android:apk-key-hash:" + standard,
            "android:apk-key-hash:" + standard.replacingOccurrences(of: "=", with: ""),
            PartnerKit.goldenOrigin + "=",
            "android:apk-key-hash:" + PartnerKit.fingerprint,
            "android:apk-key-hash:" + bytes.map { String(format: "%02x", $0) }.joined(),
        ]
        for origin in nearMisses {
            let reply = try await PartnerKit.completeInline(harness, requestID, origin: origin)
            #expect(reply.outcome.code == "assertion_invalid", "\(origin): \(reply)")
        }
        let reply = try await PartnerKit.completeInline(harness, requestID, origin: PartnerKit.goldenOrigin)
        #expect(reply.outcome.outcome == "verified", "\(reply)")
    }
}

// MARK: - Helpers

/// Helpers of the partner and token suites.
enum PartnerKit {
    /// A signing-certificate fingerprint whose base64url form has both `-` and `_`.
    static let fingerprint = "AB:CD:EF:FB:FF:BF:01:23:45:67:89:AB:CD:EF:FE:DC:BA:98:76:54:32:10:0F:1E:2D:3C:4B:5A:69:78:87:96"
    /// Its origin, worked out by hand (Python: `base64.urlsafe_b64encode(bytes.fromhex(…)).rstrip(b"=")`).
    static let goldenOrigin = "android:apk-key-hash:q83v-_-_ASNFZ4mrze_-3LqYdlQyEA8eLTxLWml4h5Y"

    static func requestID(_ created: [String: Any]) throws -> String {
        try #require(created["request_id"] as? String)
    }

    /// A grant from create-session.
    static func grant(_ harness: InlineHarness, key: String? = nil) async throws -> String {
        let session = try await harness.post("/operations/sdk/create-session", [:], bearer: key ?? harness.liveKey)
        return try #require(session.data?["anchor_grant_token"] as? String, "\(session)")
    }

    /// passkey-options, the harness authenticator reporting `origin`, passkey-complete.
    static func completeInline(_ harness: InlineHarness, _ requestID: String, origin: String) async throws -> HTTPReply {
        let options = try await harness.options(requestID)
        let payload = try #require(options.data, "\(options)")
        let answer = try harness.assert(payload, origin: origin)
        return try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
    }

    /// A request completed inline for a linked ref, and its token from status.
    static func verifiedRequest(_ harness: InlineHarness, ref: String, scope: String = "checkout") async throws
        -> (requestID: String, token: String)
    {
        let requestID = try Self.requestID(try await harness.createRequest(scope: scope, ref: ref))
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.outcome.outcome == "verified", "\(reply)")
        let status = try await harness.status(requestID)
        return (requestID, try #require(status.data?["verification_token"] as? String, "\(status)"))
    }

    /// The partner's `gate.human_verified` events in the outbox.
    static func humanVerified(_ harness: InlineHarness) throws -> [WebhookEventRecord] {
        try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).filter { $0.type == "gate.human_verified" }
    }

    /// An event's `data` object.
    static func eventData(_ event: WebhookEventRecord) throws -> [String: Any] {
        let body = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
        return try #require(body["data"] as? [String: Any])
    }

    /// How many verification requests the database holds.
    static func requestCount(_ harness: InlineHarness) throws -> Int64 {
        let rows = try harness.sesame.store.database.query("SELECT COUNT(*) AS n FROM verification_requests", [])
        return try rows.first?.integer("n") ?? -1
    }

    /// The apps of `/.well-known/apple-app-site-association` and the statements of `/.well-known/assetlinks.json`
    /// served for the relying party's host.
    static func associationFiles(_ harness: InlineHarness) async throws -> (apps: [String], android: [[String: Any]]) {
        let aasa = try await harness.send("GET", "/.well-known/apple-app-site-association", body: nil, headers: ["Host": InlineHarness.rpID])
        #expect(aasa.status == 200 && aasa.header("Content-Type")?.hasPrefix("application/json") == true, "\(aasa)")
        let apps = try #require((aasa.object["webcredentials"] as? [String: Any])?["apps"] as? [String], "\(aasa)")
        let links = try await harness.send("GET", "/.well-known/assetlinks.json", body: nil, headers: ["Host": InlineHarness.rpID])
        #expect(links.status == 200 && links.header("Content-Type")?.hasPrefix("application/json") == true, "\(links)")
        let statements = try #require(try JSONSerialization.jsonObject(with: links.body) as? [[String: Any]], "\(links)")
        return (apps, statements)
    }

    /// POSTs every body at once, on connections of their own.
    /// - Returns: each reply's HTTP status and body, in completion order.
    static func burst(_ harness: InlineHarness, path: String, bodies: [Data]) async throws -> [(Int, Data)] {
        let url = try #require(URL(string: harness.base + path))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = bodies.count
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        return try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for body in bodies {
                group.addTask {
                    var request = URLRequest(url: url)
                    request.httpMethod = "POST"
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    request.httpBody = body
                    let (data, response) = try await session.data(for: request)
                    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
                }
            }
            var replies: [(Int, Data)] = []
            for try await reply in group { replies.append(reply) }
            return replies
        }
    }
}

/// A token signer that fails while `fails` is set and otherwise signs with `delegate`.
final class SwitchableSigner: VerificationTokenSigner {
    private let state = Mutex<(fails: Bool, calls: Int, delegate: (any VerificationTokenSigner)?)>((false, 0, nil))

    var fails: Bool {
        get { state.withLock { $0.fails } }
        set { state.withLock { $0.fails = newValue } }
    }
    var delegate: (any VerificationTokenSigner)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }
    /// Signatures attempted while failing.
    var calls: Int { state.withLock { $0.calls } }

    func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String {
        try sign(claims, with: delegate)
    }

    /// Signs with the delegate readied, as the switch stands when `sign` is called.
    func readied() throws(SesameError) -> any VerificationTokenSigner {
        Readied(signer: self, delegate: try delegate?.readied())
    }

    private struct Readied: VerificationTokenSigner {
        let signer: SwitchableSigner
        let delegate: (any VerificationTokenSigner)?

        func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String { try signer.sign(claims, with: delegate) }
        func readied() -> any VerificationTokenSigner { self }
    }

    private func sign(_ claims: VerificationTokenClaims, with delegate: (any VerificationTokenSigner)?) throws(SesameError) -> String {
        try state.withLock { state throws(SesameError) in
            if state.fails {
                state.calls += 1
                throw SesameError(.internalFailure, "the signing key is unavailable")
            }
        }
        guard let delegate else { throw SesameError(.internalFailure, "no signer") }
        return try delegate.sign(claims)
    }
}

/// A partner's server written as §1.2 and §2.4 tell partners to: the app's "verified" is only a hint; the action goes
/// ahead only when the request this server opened for the action reads `completed` and its token verifies offline
/// against the JWKS with this server's own request ID, scope, audience, environment and ref, once.
struct SamplePartnerServer {
    let harness: InlineHarness
    /// What this server opened: request ID → (action, ref).
    private var opened: [String: (action: String, ref: String?)] = [:]
    private var usedTokenIDs: Set<String> = []

    init(harness: InlineHarness) { self.harness = harness }

    /// Opens a request for an action of a person, with the API key (never given to the app).
    mutating func openRequest(action: String, ref: String?) async throws -> String {
        let requestID = try PartnerKit.requestID(try await harness.createRequest(scope: action, ref: ref))
        opened[requestID] = (action, ref)
        return requestID
    }

    /// The app reports that the person confirmed `action` with `requestID`. Returns whether the action runs.
    mutating func appSaysDone(requestID: String, action: String) async throws -> Bool {
        // Only requests this server opened; the action and everything else is judged on the token.
        guard let request = opened[requestID] else { return false }
        let status = try await harness.status(requestID)
        guard status.status == 200, let data = status.data, data["status"] as? String == "completed",
              let token = data["verification_token"] as? String
        else { return false }
        let jwks = try await harness.send("GET", "/.well-known/jwks.json", body: nil)
        guard jwks.status == 200, let keys = try? JWKSet(jsonEncoded: Array(jwks.body)).publicKeys() else { return false }
        guard let claims = try? ES256JWS.verify(token: token, keys: keys, issuer: InlineHarness.apiURL, audience: harness.partner.id,
                                                now: harness.clock.now())
        else { return false }
        guard claims["request_id"] == .string(requestID), claims["scope"] == .string(action), claims["env"] == .string("live"),
              claims["verified"] == .bool(true), claims["partner_user_ref"] == request.ref.map(JSONValue.string),
              case .string(let jti)? = claims["jti"], usedTokenIDs.insert(jti).inserted
        else { return false }
        return true
    }
}
