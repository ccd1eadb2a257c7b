import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing
@testable import SesameServer

@Suite struct WebhookSenderTests {
    /// A sender that may reach the loopback receiver over plain HTTP.
    let sender = WebhookSender(allowPrivate: true, allowHTTP: true)

    /// Signed headers for `body` under `secrets`, stamped now.
    func signedHeaders(_ body: [UInt8], secrets: [String], id: String = StandardWebhooks.newMessageID()) throws -> [String: String] {
        let timestamp = Int(Date().timeIntervalSince1970)
        let keys = try secrets.map { try StandardWebhooks.key(fromSecret: $0) }
        return [
            "webhook-id": id, "webhook-timestamp": String(timestamp),
            "webhook-signature": StandardWebhooks.signatureHeader(keys: keys, id: id, timestamp: timestamp, body: body),
        ]
    }

    @Test("delivers the exact signed body with the Standard Webhooks headers; the receiver verifies it")
    func delivered() throws {
        let secret = StandardWebhooks.newSecret()
        let receiver = try WebhookReceiver(secrets: [secret])
        defer { receiver.stop() }
        let body = Array(#"{"type":"gate.human_verified","data":{"request_id":"req_x","linked":true}}"#.utf8)
        let headers = try signedHeaders(body, secrets: [secret])
        #expect(sender.send(url: receiver.url, body: body, headers: headers) == .status(200))

        let deliveries = receiver.deliveries
        try #require(deliveries.count == 1)
        let delivery = deliveries[0]
        #expect(delivery.method == "POST")
        #expect(delivery.path == "/webhook")
        #expect(delivery.body == body)
        #expect(delivery.signatureVerified)
        #expect(delivery.answeredStatus == 200)
        #expect(delivery.id == headers["webhook-id"])
        #expect(delivery.timestamp == headers["webhook-timestamp"])
        #expect(delivery.signature == headers["webhook-signature"])
        #expect(delivery.headers["Content-Type"] == "application/json")
        #expect(delivery.headers["User-Agent"] == "Sesame-Webhooks/1")
        #expect(delivery.headers["Cookie"] == nil)
        #expect(abs(delivery.receivedAt.timeIntervalSinceNow) < 10)
        // SesameCore's receiver-side check agrees with the test receiver's independent one.
        #expect(StandardWebhooks.verify(body: delivery.body, id: delivery.id, timestamp: delivery.timestamp,
                                        signature: delivery.signature, secrets: [secret], now: Date()))
    }

    @Test("rotation: either secret verifies a doubly signed delivery; a foreign secret does not")
    func rotation() throws {
        let old = StandardWebhooks.newSecret()
        let new = StandardWebhooks.newSecret()
        let receiver = try WebhookReceiver(secrets: [old])
        defer { receiver.stop() }
        let body = Array(#"{"n":1}"#.utf8)
        #expect(sender.send(url: receiver.url, body: body, headers: try signedHeaders(body, secrets: [new, old])) == .status(200))
        receiver.setSecrets([new])
        #expect(sender.send(url: receiver.url, body: body, headers: try signedHeaders(body, secrets: [new, old])) == .status(200))
        receiver.setSecrets([StandardWebhooks.newSecret()])
        #expect(sender.send(url: receiver.url, body: body, headers: try signedHeaders(body, secrets: [new, old])) == .status(200))
        // A body changed after signing fails the check.
        receiver.setSecrets([old])
        var headers = try signedHeaders(body, secrets: [old])
        headers["webhook-timestamp"] = String(Int(headers["webhook-timestamp"]!)! + 1)
        #expect(sender.send(url: receiver.url, body: body, headers: headers) == .status(200))
        #expect(sender.send(url: receiver.url, body: body + [0x20], headers: try signedHeaders(body, secrets: [old]))
                == .status(200))
        #expect(receiver.deliveries.map(\.signatureVerified) == [true, true, false, false, false])
        #expect(receiver.deliveries[0].signature?.split(separator: " ").count == 2)
    }

    @Test("reports non-2xx statuses as they are, following the receiver's status sequence")
    func statuses() throws {
        let secret = StandardWebhooks.newSecret()
        let body = Array("{}".utf8)
        let failing = try WebhookReceiver(secrets: [secret], statuses: [500])
        defer { failing.stop() }
        #expect(sender.send(url: failing.url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .status(500))

        let flaky = try WebhookReceiver(secrets: [secret], statuses: [500, 503, 200])
        defer { flaky.stop() }
        let id = StandardWebhooks.newMessageID()
        let results = try (0..<4).map { _ in
            sender.send(url: flaky.url, body: body, headers: try signedHeaders(body, secrets: [secret], id: id))
        }
        #expect(results == [.status(500), .status(503), .status(200), .status(200)])
        #expect(flaky.deliveries.allSatisfy { $0.id == id && $0.signatureVerified })
        #expect(flaky.deliveries.map(\.answeredStatus) == [500, 503, 200, 200])

        let gone = try WebhookReceiver(secrets: [secret], statuses: [410])
        defer { gone.stop() }
        for _ in 0..<2 {
            #expect(sender.send(url: gone.url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .status(410))
        }
    }

    @Test("does not follow redirects: the 3xx is the result and the Location is never hit")
    func redirects() throws {
        let secret = StandardWebhooks.newSecret()
        let receiver = try WebhookReceiver(secrets: [secret], statuses: [301, 302, 303, 307, 308])
        defer { receiver.stop() }
        let target = try WebhookReceiver(secrets: [secret])
        defer { target.stop() }
        receiver.setLocation(target.url(path: "/moved").absoluteString)
        let body = Array("{}".utf8)
        var results: [WebhookSendOutcome] = []
        for _ in 0..<5 {
            results.append(sender.send(url: receiver.url, body: body, headers: try signedHeaders(body, secrets: [secret])))
        }
        #expect(results == [.status(301), .status(302), .status(303), .status(307), .status(308)])
        Thread.sleep(forTimeInterval: 0.2)
        #expect(target.deliveries.isEmpty)
        #expect(receiver.deliveries.count == 5)
        #expect(receiver.deliveries.allSatisfy { $0.path == "/webhook" && $0.method == "POST" })
    }

    @Test("refuses loopback (and plain http) before connecting when not allowed")
    func refused() throws {
        let secret = StandardWebhooks.newSecret()
        let receiver = try WebhookReceiver(secrets: [secret])
        defer { receiver.stop() }
        let body = Array("{}".utf8)
        let headers = try signedHeaders(body, secrets: [secret])
        let strict = WebhookSender()
        #expect(strict.send(url: receiver.url, body: body, headers: headers) == .failed("address not allowed"))
        let noPrivate = WebhookSender(allowPrivate: false, allowHTTP: true)
        #expect(noPrivate.send(url: receiver.url, body: body, headers: headers) == .failed("address not allowed"))
        let localhost = URL(string: "http://localhost:\(receiver.url.port!)/webhook")!
        #expect(noPrivate.send(url: localhost, body: body, headers: headers) == .failed("address not allowed"))
        let noHTTP = WebhookSender(allowPrivate: true, allowHTTP: false)
        #expect(noHTTP.send(url: receiver.url, body: body, headers: headers) == .failed("address not allowed"))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(receiver.deliveries.isEmpty)
        // The same receiver is reachable once allowed, so the refusals above were the policy's.
        #expect(sender.send(url: receiver.url, body: body, headers: headers) == .status(200))
    }

    @Test("times out against a socket that accepts and never answers")
    func timeout() throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let started = ContinuousClock.now
        let result = sender.send(url: URL(string: "http://127.0.0.1:\(listener.port)/webhook")!, body: Array("{}".utf8),
                                 headers: [:], timeout: 1)
        let elapsed = ContinuousClock.now - started
        #expect(result == .failed("timeout"))
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "\(elapsed)")
    }

    @Test("reports a refused connection")
    func connectionRefused() throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        let result = sender.send(url: URL(string: "http://127.0.0.1:\(port)/webhook")!, body: Array("{}".utf8),
                                 headers: [:], timeout: 5)
        #expect(result == .failed("connection refused"))
    }
}

/// A TCP socket on 127.0.0.1 that listens but never accepts: the kernel completes the handshake, nobody answers.
private final class SilentListener {
    struct Failure: Error {}
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw Failure()
        }
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() {
        Glibc.close(descriptor)
    }
}
