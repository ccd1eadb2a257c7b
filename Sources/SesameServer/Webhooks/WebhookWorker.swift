import Dispatch
import Foundation
import SesameCore
import Synchronization

/// Delivers the webhook outbox from this node: a few times a second it claims due deliveries (any node may; each
/// attempt is made by the one node that wins its lease), sends them and records the attempts.
///
/// `@unchecked Sendable`: every property is immutable or behind a `Mutex`, and the timer source is thread-safe.
public final class WebhookWorker: @unchecked Sendable {
    private let sesame: Sesame
    private let sender: WebhookSender
    /// This node's name in the attempt records.
    public let node: String
    private let timer: any DispatchSourceTimer
    private let queue = DispatchQueue(label: "sesame.webhooks")
    /// Whether `start()` resumed the timer: libdispatch traps when a source that was never resumed is released.
    private let started = Mutex(false)

    /// Creates a stopped worker.
    /// - Parameters:
    ///   - node: a name for this node; by default the host name and process ID.
    ///   - interval: seconds between polls of the outbox.
    public init(sesame: Sesame, node: String = "\(ProcessInfo.processInfo.hostName):\(getpid())", interval: TimeInterval = 0.25) {
        self.sesame = sesame
        self.node = node
        let local = sesame.inline.allowLocalWebhooks
        sender = WebhookSender(allowPrivate: local, allowHTTP: local)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
    }

    /// Starts polling.
    public func start() {
        guard started.withLock({ started in defer { started = true }; return !started }) else { return }
        timer.setEventHandler { [self] in
            // A database outage only delays deliveries; the next poll tries again.
            while (try? deliverDue()) ?? 0 > 0 {}
        }
        timer.resume()
    }

    deinit {
        timer.cancel()
        // A source created suspended must be resumed once before it is released (after cancel, no handler runs).
        if !started.withLock({ $0 }) { timer.resume() }
    }

    /// Stops polling, and returns once an attempt in flight has finished.
    public func stop() {
        timer.cancel()
        queue.sync {}
    }

    /// Sends what is due now.
    /// - Returns: how many attempts were made.
    @discardableResult
    public func deliverDue() throws(SesameError) -> Int {
        try sesame.webhooks.deliverDue(node: node) { [sender] request in
            guard let url = URL(string: request.url) else { return .failed("invalid URL") }
            return sender.send(url: url, body: request.body, headers: request.headers)
        }
    }
}
