import Dispatch
import Foundation
import SesameStore
import Synchronization

/// One signed webhook POST, ready to send.
public struct WebhookRequest: Sendable, Hashable {
    public let url: String
    /// The event's exact bytes.
    public let body: [UInt8]
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature` and `content-type`.
    public let headers: [String: String]
}

/// What one send gave: an HTTP status, or a short generic reason there was none (never the URL, headers or body).
public enum WebhookSendOutcome: Sendable, Hashable {
    case status(Int)
    case failed(String)
}

/// Delivers the outbox: claims due deliveries with a lease (so each attempt is made by exactly one node), signs them
/// with Standard Webhooks, sends them through `send`, records the attempt and schedules the next one.
public struct WebhookOutbox: Sendable {
    let store: Store
    let clock: any SesameClock
    let configuration: InlineConfiguration
    let secrets: SecretsAtRest

    /// How long a claimed delivery stays with its node; longer than any send may take.
    public static let lease: TimeInterval = 60
    /// Sends in flight at once on one node.
    public static let parallelSends = 8

    /// Sends every delivery that is due and that this node wins, at most `limit`.
    /// - Parameters:
    ///   - node: this node's name, recorded with each attempt.
    ///   - send: performs the POST (network code lives outside the domain).
    /// - Returns: how many attempts this call made.
    @discardableResult
    public func deliverDue(node: String, limit: Int = 64, send: @Sendable (WebhookRequest) -> WebhookSendOutcome) throws(SesameError) -> Int {
        let now = clock.now()
        let due = try StoreErrors.map { () throws(StoreError) in try store.webhooks.due(now: now, limit: limit) }
        guard !due.isEmpty else { return 0 }
        let work = try StoreErrors.map { () throws(StoreError) in
            try store.webhooks.claim(ids: due, owner: node, now: now, leaseUntil: now.addingTimeInterval(Self.lease))
        }
        // The attempts of the round are recorded together once every send of it ended (one commit). A node that
        // dies before that sends them again when their lease ends: delivery is at least once, never lost.
        let finishes = Mutex<[(WebhookRepository.Finish, sent: Bool)]>([])
        DispatchQueue.concurrentPerform(iterations: min(work.count, Self.parallelSends)) { lane in
            for item in stride(from: lane, to: work.count, by: Self.parallelSends) {
                let finish = attempt(work[item], node: node, send: send)
                finishes.withLock { $0.append(finish) }
            }
        }
        let round = finishes.withLock { $0 }
        // A lost lease (this node stalled past it and another node took over) leaves the row to the new owner.
        _ = try? store.webhooks.finish(round.map(\.0), owner: node, at: clock.now())
        return round.filter(\.sent).count
    }

    /// Makes one attempt of a claimed delivery: how it ends, and whether a request was sent.
    private func attempt(_ work: WebhookWork, node: String, send: (WebhookRequest) -> WebhookSendOutcome)
        -> (WebhookRepository.Finish, sent: Bool)
    {
        let started = clock.now()
        let number = work.attempts + 1
        guard work.endpoint.state == WebhookEndpointRecord.enabled, let key = try? StandardWebhooks.key(fromSecret: work.endpoint.secret) else {
            return (finish(work, node: node, number: number, started: started, outcome: .failed("endpoint disabled"),
                           state: WebhookDeliveryRecord.abandoned, next: started, disable: false), false)
        }
        let timestamp = Int(started.timeIntervalSince1970)  // trap-safe: server clock
        let outcome: WebhookSendOutcome
        if let body = try? body(of: work.event) {
            let request = WebhookRequest(url: work.endpoint.url, body: body, headers: [
                StandardWebhooks.idHeader: work.event.id,
                StandardWebhooks.timestampHeader: String(timestamp),
                StandardWebhooks.signatureHeaderName: StandardWebhooks.signatureHeader(keys: [key], id: work.event.id, timestamp: timestamp,
                                                                                       body: body),
                "content-type": "application/json",
            ])
            outcome = send(request)
        } else {
            // This node cannot open the sealed token (its master key differs): nothing is sent, the delivery retries.
            outcome = .failed("sealed token does not open")
        }
        let status: Int? = if case .status(let code) = outcome { code } else { nil }
        let (state, next, disable): (String, Date, Bool)
        switch WebhookSchedule.classify(status: status) {
        case .delivered: (state, next, disable) = (WebhookDeliveryRecord.delivered, started, false)
        case .disableEndpoint: (state, next, disable) = (WebhookDeliveryRecord.abandoned, started, true)
        case .retry:
            if let delay = WebhookSchedule.nextAttemptDelay(afterAttempt: number, jitter: WebhookSchedule.randomJitter()) {
                (state, next, disable) = (WebhookDeliveryRecord.pending, clock.now().addingTimeInterval(delay), false)
            } else {
                (state, next, disable) = (WebhookDeliveryRecord.failed, started, false)
            }
        }
        return (finish(work, node: node, number: number, started: started, outcome: outcome, state: state, next: next, disable: disable), true)
    }

    /// The exact bytes an event is sent as: its stored body with the sealed verification token opened and put back.
    /// - Throws: `master_key_required` or `master_key_mismatch` when the token does not open; `internal_failure` when
    ///   the token was erased (nothing is left to deliver) or the offset is out of range.
    public func body(of event: WebhookEventRecord) throws(SesameError) -> [UInt8] {
        guard let offset = event.tokenOffset else { return event.body }
        guard let sealed = event.sealedToken else { throw SesameError(.internalFailure, "the event's token was erased after delivery") }
        let token = try secrets.open(Array(sealed.utf8), for: .webhookToken, row: event.id)
        guard let body = WebhookBodies.fill(event.body, token: token, at: offset) else {
            throw SesameError(.internalFailure, "token offset out of range")
        }
        return body
    }

    /// The record of an attempt that started at `started` and ended now with `outcome`.
    private func finish(_ work: WebhookWork, node: String, number: Int, started: Date, outcome: WebhookSendOutcome, state: String, next: Date,
                        disable: Bool) -> WebhookRepository.Finish {
        var status: Int?
        var error: String?
        switch outcome {
        case .status(let code): status = code
        case .failed(let reason): error = String(reason.prefix(200))
        }
        let record = WebhookAttemptRecord(
            id: Identifiers.unique(), deliveryID: work.deliveryID, attempt: number, node: String(node.prefix(100)), startedAt: started,
            durationMilliseconds: max(0, Int64(clock.now().timeIntervalSince(started) * 1000)), httpStatus: status, error: error  // trap-safe: server clock
        )
        return WebhookRepository.Finish(attempt: record, state: state, nextAttemptAt: next, disableEndpoint: disable, endpointID: work.endpoint.id)
    }
}
