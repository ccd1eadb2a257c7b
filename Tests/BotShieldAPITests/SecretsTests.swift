import Foundation
import SesameCore
import SesameServer
import SesameStore
import SesameTestSupport
import Testing

/// Issued verification tokens at rest: sealed on the request until they expire, then erased; a webhook's token sealed
/// beside its body until nothing is left to deliver.
@Suite struct VerificationTokenAtRestTests {
    @Test("a completed request keeps its token sealed; status returns the same token until it expires, then it is erased",
          arguments: Backend.allCases)
    func requestToken(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let (requestID, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")

        let stored = try #require(try harness.sesame.store.verificationRequests.get(id: requestID)?.token)
        // Not the JWS, nor any of its three parts (a random three-letter "eyJ" may well occur in the sealed base64).
        #expect(stored.hasPrefix(SealedValue.prefix) && token.split(separator: ".").allSatisfy { !stored.contains($0) }, "sealed, not the JWS")
        #expect(try await harness.status(requestID).data?["verification_token"] as? String == token, "the same token every time")
        // Without the master key the stored value is no token at all.
        let keyless = Sesame(store: harness.sesame.store, clock: harness.clock, masterKeys: .none)
        #expect(throws: SesameError.code(.masterKeyRequired)) {
            try keyless.secrets.open(Array(stored.utf8), for: .verificationToken, row: requestID)
        }

        // Past its own exp (5 minutes) the token is worthless: status stops returning it and the sweep erases it.
        harness.clock.advance(by: 301)
        let later = try await harness.status(requestID)
        #expect(later.data?["status"] as? String == "completed" && later.data?["verification_token"] == nil, "\(later)")
        #expect(try harness.sesame.housekeeping.sweep().verificationTokens >= 1)
        #expect(try harness.sesame.store.verificationRequests.get(id: requestID)?.token == nil)
    }

    @Test("a webhook event keeps its token sealed beside the body and erases it once delivered", arguments: Backend.allCases)
    func webhookToken(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        _ = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: receiver.url.absoluteString)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let (_, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")

        let event = try #require(try PartnerKit.humanVerified(harness).first)
        #expect(!String(decoding: event.body, as: UTF8.self).contains(token), "the stored body holds no token")
        let sealed = try #require(event.sealedToken)
        #expect(sealed.hasPrefix(SealedValue.prefix) && !sealed.contains(token))
        #expect(try harness.sesame.webhooks.body(of: event) != event.body)

        #expect(try WebhookWorker(sesame: harness.sesame, node: "node-a").deliverDue() == 1)
        let delivered = try #require(receiver.deliveries.first)
        #expect(String(decoding: delivered.body, as: UTF8.self).contains(token), "the partner receives the token")
        let after = try #require(try PartnerKit.humanVerified(harness).first)
        #expect(after.sealedToken == nil, "erased once delivered")
        #expect(!String(decoding: after.body, as: UTF8.self).contains(token))
        #expect(throws: SesameError.code(.internalFailure)) { try harness.sesame.webhooks.body(of: after) }
    }

    @Test("a node without the right master key sends nothing and retries later", arguments: Backend.allCases)
    func wrongKeyNode(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        _ = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: receiver.url.absoluteString)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        _ = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        let other = Sesame(store: harness.sesame.store, clock: harness.clock, inline: harness.sesame.inline,
                           masterKeys: MasterKeyring(current: .generate()))
        #expect(try WebhookWorker(sesame: other, node: "node-b").deliverDue() == 1)
        #expect(receiver.deliveries.isEmpty, "nothing was sent")
        let event = try #require(try PartnerKit.humanVerified(harness).first)
        let delivery = try #require(try harness.sesame.store.webhooks.deliveries(eventID: event.id).first)
        #expect(delivery.state == WebhookDeliveryRecord.pending && event.sealedToken != nil, "kept for a node that has the key")
    }
}
