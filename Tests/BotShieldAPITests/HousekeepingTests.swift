import Foundation
import SesameCore
import SesameServer
import SesameStore
import SesameTestSupport
import Testing

/// What the once-a-minute sweep removes of inline verification, and what it keeps.
@Suite struct InlineHousekeepingTests {
    @Test("a sweep drops expired grants (and on SQLite the call counts of expired requests), requests a day after expiry (completed ones lose only their metadata) and delivered webhook events after a week",
          arguments: Backend.allCases)
    func sweep(backend: Backend) async throws {
        let (harness, _) = try WebhookTests.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let secret = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                    url: receiver.url.absoluteString).secret
        receiver.setSecrets([secret])
        let completed = try await WebhookTests.verifiedRequest(harness, metadata: ["order": 7])
        let abandoned = try #require(try await harness.createRequest(ref: "acct_123")["request_id"] as? String)
        let worker = WebhookWorker(sesame: harness.sesame, node: "node-a")
        #expect(try worker.deliverDue() == 1)
        #expect(receiver.deliveries.count == 1)
        #expect(try harness.sesame.housekeeping.sweep().grants == 0)

        // The verified request's calls are counted in memory on SQLite, in its row on PostgreSQL.
        let counts = harness.sesame.store.requestCallCounters
        #expect(backend == .sqlite ? counts?.count == 1 : counts == nil)

        harness.clock.advance(by: 301)
        var result = try harness.sesame.housekeeping.sweep()
        #expect(result.grants == 2 && result.verificationRequests == 0 && result.webhookEvents == 0, "\(result)")
        #expect(counts?.count ?? 0 == 0)

        harness.clock.advance(by: 86_400)
        result = try harness.sesame.housekeeping.sweep()
        #expect(result.verificationRequests == 2 && result.webhookEvents == 0, "\(result)")
        #expect(try harness.sesame.store.verificationRequests.get(id: abandoned) == nil)
        let kept = try #require(try harness.sesame.store.verificationRequests.get(id: completed))
        #expect(kept.status == "completed" && kept.token == nil && kept.metadata == nil)
        #expect(try await harness.status(completed).data?["status"] as? String == "completed")

        harness.clock.advance(by: 6 * 86_400)
        result = try harness.sesame.housekeeping.sweep()
        #expect(result.webhookEvents == 1, "\(result)")
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).isEmpty)
    }

    @Test("an event with a delivery still pending is kept past the week", arguments: Backend.allCases)
    func pendingEventsStay(backend: Backend) async throws {
        let (harness, _) = try WebhookTests.linkedHarness(backend)
        _ = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: "http://127.0.0.1:9/hook")
        try await WebhookTests.verifiedRequest(harness)
        harness.clock.advance(by: 8 * 86_400)
        #expect(try harness.sesame.housekeeping.sweep().webhookEvents == 0)
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).count == 1)
    }
}
