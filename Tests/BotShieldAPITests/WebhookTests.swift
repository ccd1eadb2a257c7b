import Dispatch
import Foundation
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// `gate.human_verified` webhooks (spec §2.5, P7–P9): the outbox written with the completion, delivered by
/// `WebhookWorker.deliverDue()` (driven by hand, never by its timer) to a real loopback `WebhookReceiver` that checks
/// the Standard Webhooks signature with its own implementation, against the same `ManualClock` as the server's (so
/// that neither moving it by days nor a slow run ages a delivery). Retries are reached by moving that clock.
@Suite struct WebhookTests {
    /// A linked person (`acct_123`, one passkey) on a fresh harness.
    static func linkedHarness(_ backend: Backend, tokenSigner: (any VerificationTokenSigner)? = nil) throws
        -> (harness: InlineHarness, person: (id: String, credentials: [[UInt8]]))
    {
        let harness = try InlineHarness(backend, tokenSigner: tokenSigner)
        let person = try harness.person(passkeys: 1)
        try harness.link("acct_123", to: person.id)
        return (harness, person)
    }

    /// Creates a request for `acct_123` and runs it inline; expects `verified`.
    /// - Returns: the request ID.
    @discardableResult
    static func verifiedRequest(_ harness: InlineHarness, metadata: [String: Any]? = nil) async throws -> String {
        let created = try await harness.createRequest(ref: "acct_123", extra: metadata.map { ["metadata": $0] } ?? [:])
        let requestID = try #require(created["request_id"] as? String)
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.outcome.outcome == "verified", "\(reply)")
        return requestID
    }

    /// The outbox event whose body names `requestID`, and its deliveries.
    static func event(_ harness: InlineHarness, requestID: String) throws -> (event: WebhookEventRecord, deliveries: [WebhookDeliveryRecord]) {
        let events = try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).filter {
            ((try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])?["data"] as? [String: Any])?["request_id"] as? String
                == requestID
        }
        try #require(events.count == 1, "events for the request: \(events.count)")
        return (events[0], try harness.sesame.store.webhooks.deliveries(eventID: events[0].id))
    }

    /// The one delivery of the event of `requestID`.
    static func delivery(_ harness: InlineHarness, requestID: String) throws -> WebhookDeliveryRecord {
        let deliveries = try event(harness, requestID: requestID).deliveries
        try #require(deliveries.count == 1, "deliveries: \(deliveries)")
        return deliveries[0]
    }

    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func canonical(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The same Sesame (store and clock) with `allowLocalWebhooks` off, as in production.
    static func strict(_ harness: InlineHarness) -> Sesame {
        Sesame(store: harness.sesame.store, clock: harness.clock,
               inline: InlineConfiguration(appURL: InlineHarness.appURL, apiURL: InlineHarness.apiURL, allowLocalWebhooks: false),
               masterKeys: harness.sesame.masterKeys)
    }

    // MARK: Delivery

    @Test("a verified inline completion is delivered once: Standard Webhooks headers, the §2.5 body, the status token", arguments: Backend.allCases)
    func deliveredAfterInlineCompletion(backend: Backend) async throws {
        let (harness, person) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let (endpoint, secret) = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                                url: receiver.url.absoluteString)
        receiver.setSecrets([secret])
        #expect(secret.hasPrefix("whsec_"))
        #expect(endpoint.isEnabled)
        // An endpoint of the other environment must get nothing from a live request.
        let testReceiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { testReceiver.stop() }
        _ = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .test,
                                                           url: testReceiver.url.absoluteString)

        let completedAt = harness.clock.now()
        let requestID = try await Self.verifiedRequest(harness, metadata: ["order": "A-17", "n": 2])
        let (event, deliveries) = try Self.event(harness, requestID: requestID)
        #expect(deliveries.count == 1, "one delivery, to the live endpoint only: \(deliveries)")
        #expect(deliveries.first?.endpointID == endpoint.id)
        #expect(deliveries.first?.state == WebhookDeliveryRecord.pending)
        #expect(event.type == "gate.human_verified")
        #expect(event.environment == "live")
        #expect(receiver.deliveries.isEmpty, "nothing is sent before the worker runs")

        // The attempt happens later than the completion: the body keeps the completion time.
        harness.clock.advance(by: 2)
        let sentAt = harness.clock.now()
        let worker = WebhookWorker(sesame: harness.sesame, node: "node-a")
        #expect(try worker.deliverDue() == 1)
        let received = receiver.deliveries
        try #require(received.count == 1)
        let delivery = received[0]
        #expect(testReceiver.deliveries.isEmpty)

        // Headers.
        let id = try #require(delivery.id)
        #expect(id == event.id)
        #expect(id.wholeMatch(of: /msg_[0-9a-f]{32}/) != nil, "\(id)")
        #expect(delivery.timestamp == String(Int(sentAt.timeIntervalSince1970)))
        #expect(delivery.method == "POST")
        #expect(delivery.headers["Content-Type"]?.hasPrefix("application/json") == true)
        let signature = try #require(delivery.signature)
        #expect(signature.hasPrefix("v1,"))
        #expect(delivery.signatureVerified, "the receiver's own check")
        #expect(WebhookReceiver.verify(body: delivery.body, id: id, timestamp: delivery.timestamp, signature: signature, secrets: [secret],
                                       now: sentAt))
        #expect(!WebhookReceiver.verify(body: delivery.body, id: id, timestamp: delivery.timestamp, signature: signature,
                                        secrets: [StandardWebhooks.newSecret()], now: sentAt), "another endpoint's secret")
        // P7: a body tampered with after signing, another id or another timestamp fails at the receiver.
        let tampered = Array(String(decoding: delivery.body, as: UTF8.self).replacingOccurrences(of: "\"linked\":true", with: "\"linked\":false").utf8)
        #expect(tampered != delivery.body)
        #expect(!WebhookReceiver.verify(body: tampered, id: id, timestamp: delivery.timestamp, signature: signature, secrets: [secret],
                                        now: sentAt))
        #expect(!WebhookReceiver.verify(body: delivery.body + [0x20], id: id, timestamp: delivery.timestamp, signature: signature,
                                        secrets: [secret], now: sentAt))
        #expect(!WebhookReceiver.verify(body: delivery.body, id: StandardWebhooks.newMessageID(), timestamp: delivery.timestamp,
                                        signature: signature, secrets: [secret], now: sentAt))
        #expect(!WebhookReceiver.verify(body: delivery.body, id: id, timestamp: String(Int(sentAt.timeIntervalSince1970) + 1),
                                        signature: signature, secrets: [secret], now: sentAt))

        // The body: the stored bytes with the token put back, exactly the §2.5 payload; once delivered, the stored
        // event keeps no token (the sealed copy is erased, the body never held it).
        let sentToken = try #require(try Self.json(delivery.body)["data"] as? [String: Any])["verification_token"] as? String
        let offset = try #require(event.tokenOffset)
        #expect(delivery.body == Array(event.body[..<offset] + Array((sentToken ?? "").utf8) + event.body[offset...]),
                "the bytes signed and sent are the bytes serialized at completion, with the token")
        #expect(event.sealedToken != nil, "the token waits sealed until delivered")
        #expect(try Self.event(harness, requestID: requestID).event.sealedToken == nil, "erased once delivered")
        #expect(!String(decoding: event.body, as: UTF8.self).contains(sentToken ?? "-"))
        let body = try Self.json(delivery.body)
        #expect(Set(body.keys) == ["type", "timestamp", "data"])
        #expect(body["type"] as? String == "gate.human_verified")
        let timestamp = try #require(body["timestamp"] as? String)
        #expect(timestamp == Timestamps.rfc3339(completedAt))
        #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(timestamp)")
        let data = try #require(body["data"] as? [String: Any])
        #expect(Set(data.keys) == ["request_id", "scope", "env", "partner_user_ref", "linked", "verification_token", "metadata"])
        #expect(data["request_id"] as? String == requestID)
        #expect(data["scope"] as? String == "checkout")
        #expect(data["env"] as? String == "live")
        #expect(data["partner_user_ref"] as? String == "acct_123")
        #expect(data["linked"] as? Bool == true)
        #expect(try Self.canonical(try #require(data["metadata"])) == #"{"n":2,"order":"A-17"}"#)
        let status = try await harness.status(requestID)
        let statusToken = try #require(status.data?["verification_token"] as? String, "\(status)")
        #expect(data["verification_token"] as? String == statusToken)
        // No person data: no person ID, credential ID, user handle, name or email.
        let text = String(decoding: delivery.body, as: UTF8.self)
        for secretValue in [person.id, Base64URL.encode(person.credentials[0]), secret, harness.liveKey] {
            #expect(!text.contains(secretValue), "the body contains \(secretValue)")
        }
        for word in ["user_id", "person", "email", "\"sub\"", "credential", "@"] {
            #expect(!text.contains(word), "the body contains \(word)")
        }

        // The attempt as recorded; the delivery is finished, and 2xx stops: nothing more goes out.
        let record = try Self.delivery(harness, requestID: requestID)
        #expect(record.state == WebhookDeliveryRecord.delivered)
        #expect(record.attempts == 1)
        let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: record.id)
        #expect(attempts.map(\.httpStatus) == [200])
        #expect(attempts.map(\.node) == ["node-a"])
        #expect(attempts.map(\.attempt) == [1])
        #expect(attempts.first?.error == nil)
        #expect(try worker.deliverDue() == 0)
        harness.clock.advance(by: 2 * 86_400)
        #expect(try worker.deliverDue() == 0)
        #expect(receiver.deliveries.count == 1)
    }

    @Test("P7: the test receiver's independent verifier reproduces the published Standard Webhooks vector")
    func receiverKnownVector() {
        // The vector of standard-webhooks/standard-webhooks (libraries/*); SesameCore's implementation is checked against
        // it in SesameCoreTests. Here the other implementation, the receiver every webhook test relies on.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
        let timestamp = "1614265330"
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        let now = Date(timeIntervalSince1970: 1_614_265_330)
        #expect(WebhookReceiver.verify(body: body, id: id, timestamp: timestamp, signature: signature, secrets: [secret], now: now))
        #expect(!WebhookReceiver.verify(body: Array(#"{"test": 2432232315}"#.utf8), id: id, timestamp: timestamp, signature: signature,
                                        secrets: [secret], now: now))
        #expect(!WebhookReceiver.verify(body: body, id: id, timestamp: timestamp, signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=",
                                        secrets: [secret], now: now))
        #expect(!WebhookReceiver.verify(body: body, id: id, timestamp: timestamp, signature: signature, secrets: [secret],
                                        now: now.addingTimeInterval(301)))
    }

    // MARK: Retries (P8)

    @Test("P8: 500, 500, 200 — retried by any node at 5 s and 5 min with the same webhook-id and body bytes, then delivered", arguments: Backend.allCases)
    func retriedUntilDelivered(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], statuses: [500, 500, 200], now: harness.clock.now)
        defer { receiver.stop() }
        let secret = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                    url: receiver.url.absoluteString).secret
        receiver.setSecrets([secret])
        let nodeA = WebhookWorker(sesame: harness.sesame, node: "node-a")
        let nodeB = WebhookWorker(sesame: harness.sesame, node: "node-b")

        let t0 = harness.clock.now()
        let requestID = try await Self.verifiedRequest(harness)
        #expect(try nodeA.deliverDue() == 1, "the first attempt is immediate")
        var record = try Self.delivery(harness, requestID: requestID)
        #expect(record.state == WebhookDeliveryRecord.pending)
        #expect(record.attempts == 1)
        // 5 s ± 10% jitter.
        #expect(record.nextAttemptAt.timeIntervalSince(t0) >= 4.5 - 0.001 && record.nextAttemptAt.timeIntervalSince(t0) <= 5.5 + 0.001,
                "next attempt \(record.nextAttemptAt.timeIntervalSince(t0)) s after the first")
        harness.clock.advance(by: 4.4)
        #expect(try nodeA.deliverDue() == 0, "not due before 4.5 s")
        #expect(try nodeB.deliverDue() == 0)
        harness.clock.set(t0.addingTimeInterval(5.5))
        let t1 = harness.clock.now()
        #expect(try nodeB.deliverDue() == 1, "due by 5.5 s, on another node")
        #expect(try nodeA.deliverDue() == 0, "one attempt per due time")

        record = try Self.delivery(harness, requestID: requestID)
        #expect(record.attempts == 2)
        #expect(record.state == WebhookDeliveryRecord.pending)
        // 5 min ± 10%.
        let gap = record.nextAttemptAt.timeIntervalSince(t1)
        #expect(gap >= 270 - 0.001 && gap <= 330 + 0.001, "next attempt \(gap) s after the second")
        harness.clock.advance(by: 269)
        #expect(try nodeA.deliverDue() == 0, "not due before 270 s")
        harness.clock.set(t1.addingTimeInterval(330))
        let t2 = harness.clock.now()
        #expect(try nodeA.deliverDue() == 1)

        record = try Self.delivery(harness, requestID: requestID)
        #expect(record.state == WebhookDeliveryRecord.delivered)
        #expect(record.attempts == 3)
        let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: record.id)
        #expect(attempts.map(\.httpStatus) == [500, 500, 200])
        #expect(attempts.map(\.attempt) == [1, 2, 3])
        #expect(attempts.map(\.node) == ["node-a", "node-b", "node-a"])
        #expect(attempts.allSatisfy { $0.error == nil })
        let started = attempts.map(\.startedAt.timeIntervalSince1970)
        for (recorded, expected) in zip(started, [t0, t1, t2].map(\.timeIntervalSince1970)) {
            #expect(abs(recorded - expected) < 0.002, "attempt started at \(recorded), expected \(expected)")
        }

        let received = receiver.deliveries
        try #require(received.count == 3)
        #expect(received.map(\.answeredStatus) == [500, 500, 200])
        let event = try Self.event(harness, requestID: requestID).event
        #expect(received.allSatisfy { $0.id == event.id }, "the same webhook-id on every attempt")
        #expect(received.allSatisfy { $0.body == received[0].body }, "the same body bytes on every attempt")
        #expect(event.sealedToken == nil, "the token is erased once delivered")
        #expect(received.map(\.timestamp) == [t0, t1, t2].map { String(Int($0.timeIntervalSince1970)) }, "each attempt is stamped when made")
        #expect(received.allSatisfy { $0.signatureVerified })
        for (delivery, time) in zip(received, [t0, t1, t2]) {
            #expect(WebhookReceiver.verify(body: delivery.body, id: delivery.id, timestamp: delivery.timestamp, signature: delivery.signature,
                                           secrets: [secret], now: time))
        }

        // Delivered: no further attempts, however long we wait.
        harness.clock.advance(by: 4 * 86_400)
        #expect(try nodeA.deliverDue() == 0)
        #expect(try nodeB.deliverDue() == 0)
        #expect(receiver.deliveries.count == 3)
    }

    @Test("P8: 410 disables the endpoint, abandons its pending deliveries, and nothing more is sent or queued", arguments: Backend.allCases)
    func goneDisablesEndpoint(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], statuses: [500, 410], now: harness.clock.now)
        defer { receiver.stop() }
        let (endpoint, secret) = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                                url: receiver.url.absoluteString)
        receiver.setSecrets([secret])
        let worker = WebhookWorker(sesame: harness.sesame, node: "node-a")

        let first = try await Self.verifiedRequest(harness)
        #expect(try worker.deliverDue() == 1)  // 500: the first waits for its retry
        #expect(try Self.delivery(harness, requestID: first).state == WebhookDeliveryRecord.pending)
        let second = try await Self.verifiedRequest(harness)
        #expect(try worker.deliverDue() == 1)  // only the second is due: 410
        #expect(receiver.deliveries.map(\.answeredStatus) == [500, 410])

        let endpoints = try harness.sesame.partners.listWebhookEndpoints(partnerID: harness.partner.id)
        #expect(endpoints.map(\.id) == [endpoint.id])
        #expect(endpoints.first?.isEnabled == false, "410 disables the endpoint")
        let gone = try Self.delivery(harness, requestID: second)
        #expect(gone.state == WebhookDeliveryRecord.abandoned)
        #expect(try harness.sesame.store.webhooks.attempts(deliveryID: gone.id).map(\.httpStatus) == [410])
        let waiting = try Self.delivery(harness, requestID: first)
        #expect(waiting.state == WebhookDeliveryRecord.abandoned, "the endpoint's other pending delivery is abandoned")
        #expect(try harness.sesame.store.webhooks.attempts(deliveryID: waiting.id).map(\.httpStatus) == [500])
        // Nothing is left to deliver for either event, so neither keeps its token: the second's delivery was the round's,
        // the first's was abandoned with the endpoint.
        #expect(try Self.event(harness, requestID: second).event.sealedToken == nil)
        #expect(try Self.event(harness, requestID: first).event.sealedToken == nil, "erased with the endpoint's abandoned delivery")

        // No further attempts for the old deliveries, and a new event queues nothing for the disabled endpoint.
        harness.clock.advance(by: 86_400)
        #expect(try worker.deliverDue() == 0)
        let third = try await Self.verifiedRequest(harness)
        #expect(try Self.event(harness, requestID: third).deliveries.isEmpty)
        harness.clock.advance(by: 86_400)
        #expect(try worker.deliverDue() == 0)
        #expect(receiver.deliveries.count == 2)
    }

    @Test("P8: after ten failed attempts on the schedule (5 s … 24 h, ±10%) the delivery is failed", arguments: Backend.allCases)
    func failsAfterAllAttempts(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], statuses: [503], now: harness.clock.now)
        defer { receiver.stop() }
        let secret = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                    url: receiver.url.absoluteString).secret
        receiver.setSecrets([secret])
        let worker = WebhookWorker(sesame: harness.sesame, node: "node-a")
        let requestID = try await Self.verifiedRequest(harness)

        for number in 1...10 {
            #expect(try worker.deliverDue() == 1, "attempt \(number)")
            let record = try Self.delivery(harness, requestID: requestID)
            #expect(record.attempts == number)
            if number < 10 {
                #expect(record.state == WebhookDeliveryRecord.pending, "after attempt \(number)")
                // Just before the next attempt is due, nothing goes out.
                harness.clock.set(record.nextAttemptAt.addingTimeInterval(-0.5))
                #expect(try worker.deliverDue() == 0, "early after attempt \(number)")
                harness.clock.set(record.nextAttemptAt)
            } else {
                #expect(record.state == WebhookDeliveryRecord.failed)
            }
        }
        let record = try Self.delivery(harness, requestID: requestID)
        let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: record.id)
        #expect(attempts.map(\.attempt) == Array(1...10))
        #expect(attempts.allSatisfy { $0.httpStatus == 503 })
        let gaps = zip(attempts.dropFirst(), attempts).map { $0.startedAt.timeIntervalSince($1.startedAt) }
        let schedule: [TimeInterval] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400]
        #expect(gaps.count == schedule.count)
        for (gap, delay) in zip(gaps, schedule) {
            #expect(gap >= delay * 0.9 - 0.002 && gap <= delay * 1.1 + 0.002, "gap \(gap) s for the \(delay) s step")
        }
        #expect(receiver.deliveries.count == 10)
        #expect(Set(receiver.deliveries.compactMap(\.id)).count == 1)
        #expect(receiver.deliveries.allSatisfy { $0.signatureVerified })

        harness.clock.advance(by: 30 * 86_400)
        #expect(try worker.deliverDue() == 0, "a failed delivery is never tried again")
        #expect(receiver.deliveries.count == 10)
    }

    // MARK: Several workers

    @Test("two workers polling at once deliver each event exactly once", arguments: Backend.allCases)
    func concurrentWorkers(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let secret = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                    url: receiver.url.absoluteString).secret
        receiver.setSecrets([secret])
        var requests: [String] = []
        for _ in 0..<12 { requests.append(try await Self.verifiedRequest(harness)) }

        let workers = (0..<4).map { WebhookWorker(sesame: harness.sesame, node: "node-\($0)") }
        let counts = ResultBox()
        DispatchQueue.concurrentPerform(iterations: workers.count) { index in
            for _ in 0..<3 { counts.add((try? workers[index].deliverDue()) ?? -100) }
        }
        #expect(counts.total == 12, "attempts made in all: \(counts.total)")
        let received = receiver.deliveries
        #expect(received.count == 12)
        #expect(Set(received.compactMap(\.id)).count == 12, "no event delivered twice")
        #expect(received.allSatisfy { $0.signatureVerified })
        for requestID in requests {
            let record = try Self.delivery(harness, requestID: requestID)
            #expect(record.state == WebhookDeliveryRecord.delivered)
            let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: record.id)
            #expect(attempts.count == 1)
            #expect(attempts.allSatisfy { $0.node.hasPrefix("node-") && $0.httpStatus == 200 })
        }
    }

    @Test("a delivery leased by a node that died is retried by another node once the lease runs out", arguments: Backend.allCases)
    func expiredLeaseIsTakenOver(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let secret = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                    url: receiver.url.absoluteString).secret
        receiver.setSecrets([secret])
        let requestID = try await Self.verifiedRequest(harness)
        let record = try Self.delivery(harness, requestID: requestID)
        let now = harness.clock.now()
        // The "crashed" node claims the delivery and never finishes it.
        let claimed = try harness.sesame.store.webhooks.claim(ids: [record.id], owner: "crashed", now: now,
                                                              leaseUntil: now.addingTimeInterval(WebhookOutbox.lease))
        #expect(claimed.map(\.deliveryID) == [record.id])
        #expect(try harness.sesame.store.webhooks.claim(ids: [record.id], owner: "node-c", now: now,
                                                        leaseUntil: now.addingTimeInterval(WebhookOutbox.lease)).isEmpty, "held by the first")
        let worker = WebhookWorker(sesame: harness.sesame, node: "node-b")
        #expect(try worker.deliverDue() == 0, "leased to another node")
        harness.clock.advance(by: WebhookOutbox.lease - 1)
        #expect(try worker.deliverDue() == 0, "still leased")
        harness.clock.advance(by: 2)
        #expect(try worker.deliverDue() == 1)
        #expect(receiver.deliveries.count == 1)
        // The crashed node coming back cannot record over the new owner.
        let late = WebhookAttemptRecord(id: UUID().uuidString, deliveryID: record.id, attempt: 1, node: "crashed", startedAt: now,
                                        durationMilliseconds: 1, httpStatus: 200, error: nil)
        let lateFinish = WebhookRepository.Finish(attempt: late, state: WebhookDeliveryRecord.delivered, nextAttemptAt: now, disableEndpoint: false,
                                                  endpointID: record.endpointID)
        #expect(try harness.sesame.store.webhooks.finish([lateFinish], owner: "crashed", at: harness.clock.now()) == 0)
        let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: record.id)
        #expect(attempts.map(\.node) == ["node-b"])
        #expect(try Self.delivery(harness, requestID: requestID).state == WebhookDeliveryRecord.delivered)
    }

    // MARK: SSRF guard (P9)

    static func refusedURLs(receiver: WebhookReceiver) -> [String] {
        [
            "https://127.0.0.1/hook", "https://127.0.0.1:\(receiver.url.port!)/webhook", "https://10.0.0.1/hook",
            "https://169.254.169.254/latest/meta-data/", "https://[::1]/hook", "https://localhost/hook",
            "http://93.184.215.14/hook",  // public, but plain http
            receiver.url.absoluteString,  // http and loopback
        ]
    }

    @Test("P9: loopback, private and link-local endpoints and http:// are refused at save without allowLocalWebhooks", arguments: Backend.allCases)
    func refusedAtSave(backend: Backend) throws {
        let harness = try InlineHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let strict = Self.strict(harness)
        for url in Self.refusedURLs(receiver: receiver) {
            #expect(throws: SesameError.code(.invalidArgument), "\(url)") {
                try strict.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: url)
            }
        }
        #expect(try harness.sesame.partners.listWebhookEndpoints(partnerID: harness.partner.id).isEmpty, "nothing was saved")
        // Controls: a public https address literal is accepted by the strict policy (no DNS needed), and the local
        // receiver by the permissive one; so the refusals above are the address policy's.
        let public_ = try strict.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: "https://93.184.215.14/hook")
        try strict.partners.removeWebhookEndpoint(partnerID: harness.partner.id, id: public_.endpoint.id)
        let local = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: receiver.url.absoluteString)
        #expect(local.endpoint.isEnabled)
    }

    @Test("P9: endpoints saved while local addresses were allowed are refused at send: 'address not allowed', no hit", arguments: Backend.allCases)
    func refusedAtSend(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        let saved = try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                   url: receiver.url.absoluteString)
        receiver.setSecrets([saved.secret])
        var others: [String] = []
        for url in ["https://10.0.0.1/hook", "https://169.254.169.254/latest/meta-data/", "https://127.0.0.1:\(receiver.url.port!)/webhook"] {
            others.append(try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live, url: url).endpoint.id)
        }
        let requestID = try await Self.verifiedRequest(harness)
        let deliveries = try Self.event(harness, requestID: requestID).deliveries
        #expect(deliveries.count == 4)

        let strictWorker = WebhookWorker(sesame: Self.strict(harness), node: "strict")
        #expect(try strictWorker.deliverDue() == 4)
        try await Task.sleep(for: .milliseconds(200))
        #expect(receiver.deliveries.isEmpty, "the strict worker must not reach the loopback receiver")
        for delivery in try Self.event(harness, requestID: requestID).deliveries {
            #expect(delivery.state == WebhookDeliveryRecord.pending, "a refused send is retried later")
            let attempts = try harness.sesame.store.webhooks.attempts(deliveryID: delivery.id)
            #expect(attempts.count == 1)
            #expect(attempts.first?.httpStatus == nil)
            #expect(attempts.first?.error == "address not allowed", "\(attempts)")
            #expect(attempts.first?.node == "strict")
        }

        // Control: with the non-routable endpoints removed, the permissive worker reaches the receiver at the retry.
        for id in others { try harness.sesame.partners.removeWebhookEndpoint(partnerID: harness.partner.id, id: id) }
        harness.clock.advance(by: 6)
        #expect(try WebhookWorker(sesame: harness.sesame, node: "local").deliverDue() == 1)
        #expect(receiver.deliveries.count == 1)
        #expect(receiver.deliveries.first?.signatureVerified == true)
    }

    // MARK: Same transaction as the completion

    struct FailingSigner: VerificationTokenSigner {
        func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String {
            throw SesameError(.unavailable, "the signer is down")
        }

        func readied() -> any VerificationTokenSigner { self }
    }

    @Test("a completion whose token cannot be signed writes no event", arguments: Backend.allCases)
    func failingSignerLeavesNoEvent(backend: Backend) async throws {
        let (harness, _) = try Self.linkedHarness(backend, tokenSigner: FailingSigner())
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        receiver.setSecrets([try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                            url: receiver.url.absoluteString).secret])
        let created = try await harness.createRequest(ref: "acct_123")
        let requestID = try #require(created["request_id"] as? String)
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "completion_failed", "\(reply)")
        let status = try await harness.status(requestID)
        #expect(status.data?["status"] as? String == "pending", "\(status)")
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).isEmpty)
        #expect(try WebhookWorker(sesame: harness.sesame, node: "node-a").deliverDue() == 0)
        try await Task.sleep(for: .milliseconds(100))
        #expect(receiver.deliveries.isEmpty)
    }

    @Test("the event is written in the completion's transaction, with the passkey's use: when it cannot be written the request stays pending",
          arguments: Backend.allCases)
    func eventAndCompletionAreAtomic(backend: Backend) async throws {
        let (harness, person) = try Self.linkedHarness(backend)
        let lastUsed = { () throws -> Date? in try #require(try harness.sesame.store.credentials.list(userID: person.id).first).lastUsedAt }
        #expect(try lastUsed() == nil)
        let receiver = try WebhookReceiver(secrets: [], now: harness.clock.now)
        defer { receiver.stop() }
        receiver.setSecrets([try harness.sesame.partners.addWebhookEndpoint(partnerID: harness.partner.id, environment: .live,
                                                                            url: receiver.url.absoluteString).secret])
        let created = try await harness.createRequest(ref: "acct_123")
        let requestID = try #require(created["request_id"] as? String)

        // Make the outbox insert fail inside the completion's transaction.
        let database = harness.sesame.store.database
        try database.execute("ALTER TABLE webhook_events RENAME TO webhook_events_parked", [])
        let reply: HTTPReply
        do {
            reply = try await harness.verifyInline(requestID)
        } catch {
            try database.execute("ALTER TABLE webhook_events_parked RENAME TO webhook_events", [])
            throw error
        }
        try database.execute("ALTER TABLE webhook_events_parked RENAME TO webhook_events", [])
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "completion_failed", "\(reply)")
        let pending = try await harness.status(requestID)
        #expect(pending.data?["status"] as? String == "pending", "the completion was rolled back with the event: \(pending)")
        #expect(pending.data?["verification_token"] == nil)
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).isEmpty)
        #expect(try lastUsed() == nil, "the passkey's use was rolled back with the completion")

        // The same request completes afterwards, with exactly one event carrying the status token.
        let retry = try await harness.verifyInline(requestID)
        #expect(retry.outcome.outcome == "verified", "\(retry)")
        #expect(try lastUsed() != nil, "the use is recorded with the completion")
        #expect(try harness.sesame.store.webhooks.events(partnerID: harness.partner.id).count == 1)
        #expect(try WebhookWorker(sesame: harness.sesame, node: "node-a").deliverDue() == 1)
        let status = try await harness.status(requestID)
        let delivered = try #require(receiver.deliveries.first)
        let data = try #require(try Self.json(delivered.body)["data"] as? [String: Any])
        #expect(data["verification_token"] as? String == status.data?["verification_token"] as? String)
    }
}

/// A thread-safe sum.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var sum = 0
    func add(_ value: Int) { lock.withLock { sum += value } }
    var total: Int { lock.withLock { sum } }
}
