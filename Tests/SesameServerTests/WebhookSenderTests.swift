import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SesameCore
import SesameCrypto
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

    @Test("keeps the connection alive: sequential attempts to one endpoint reuse one connection")
    func keepAlive() throws {
        let server = try CountingHTTPServer(responseBody: 2)
        defer { server.close() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
        let results = (0..<20).map { _ in sender.send(url: url, body: Array("{}".utf8), headers: [:], timeout: 5) }
        #expect(results == Array(repeating: .status(200), count: 20))
        #expect(server.requests == 20)
        #expect(server.connections == 1)
        // A new sender (a new worker) opens its own connection.
        #expect(WebhookSender(allowPrivate: true, allowHTTP: true).send(url: url, body: [], headers: [:], timeout: 5) == .status(200))
        #expect(server.connections == 2)
    }

    @Test("at most maximumSessions origins keep a session: the least recently used one is closed, a recent one kept")
    func sessionLimit() throws {
        let servers = try (0...WebhookSender.maximumSessions).map { _ in try CountingHTTPServer(responseBody: 2) }
        defer { servers.forEach { $0.close() } }
        func send(_ index: Int) -> WebhookSendOutcome {
            sender.send(url: URL(string: "http://127.0.0.1:\(servers[index].port)/webhook")!, body: [], headers: [:], timeout: 5)
        }
        // One more origin than the limit: opening the last one closes the first one's session.
        for index in servers.indices { #expect(send(index) == .status(200)) }
        #expect(send(servers.count - 1) == .status(200))
        #expect(servers[servers.count - 1].connections == 1, "a recently used origin keeps its connection")
        #expect(send(0) == .status(200))
        #expect(servers[0].connections == 2, "the least recently used origin's session was closed")
        #expect(servers.map(\.requests) == [2] + Array(repeating: 1, count: servers.count - 2) + [2])
    }

    @Test("a response whose body never ends still reports its status when the attempt's time is up; its connection is closed")
    func endlessBody() throws {
        let server = try CountingHTTPServer(responseBody: 1 << 30, stallAfter: 1024)
        defer { server.close() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
        let started = ContinuousClock.now
        #expect(sender.send(url: url, body: Array("{}".utf8), headers: [:], timeout: 1) == .status(200))
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "\(elapsed)")
        #expect(sender.send(url: url, body: Array("{}".utf8), headers: [:], timeout: 1) == .status(200))
        #expect(server.requests == 2)
        #expect(server.connections == 2)
    }

    /// A TLS front (a certificate for 127.0.0.1 from a fresh test authority) before a receiver of `secret`, and the
    /// authority's root as a PEM file.
    func tlsReceiver(secret: String, addresses: [[UInt8]] = [[127, 0, 0, 1]], dnsNames: [String] = [])
        throws -> (receiver: WebhookReceiver, front: TLSFront, roots: String)
    {
        let authority = TestCertificateAuthority.root()
        let key = PrivateKey.generate(.p256)
        let leaf = authority.issue(
            subject: DER.name([("2.5.4.3", "webhook receiver")]), key: key.publicKey,
            extensions: [.subjectAlternativeName(dnsNames: dnsNames, ipAddresses: addresses), .keyUsage(ca: false)]
        )
        let receiver = try WebhookReceiver(secrets: [secret])
        let front = try TLSFront(backendPort: UInt16(receiver.url.port!), certificate: [leaf, authority.certificate], key: key)
        let roots = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-roots-\(UUID().uuidString).pem").path
        try TestMetadataService.pem(authority.certificate).write(toFile: roots, atomically: true, encoding: .utf8)
        return (receiver, front, roots)
    }

    @Test("https: the server's certificate is verified for the URL's address; the delivery arrives and the TLS connection is kept")
    func https() throws {
        let secret = StandardWebhooks.newSecret()
        let (receiver, front, roots) = try tlsReceiver(secret: secret)
        defer { receiver.stop(); front.stop(); try? FileManager.default.removeItem(atPath: roots) }
        let trusting = WebhookSender(allowPrivate: true, allowHTTP: false, trustedRootsFile: roots)
        let url = URL(string: "https://127.0.0.1:\(front.port)/webhook?source=tls")!
        let body = Array(#"{"type":"gate.human_verified"}"#.utf8)
        for _ in 0..<3 {
            #expect(trusting.send(url: url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .status(200))
        }
        #expect(receiver.deliveries.count == 3)
        #expect(receiver.deliveries.allSatisfy { $0.signatureVerified && $0.body == body && $0.path == "/webhook" })
        #expect(front.connections == 1, "one TLS connection carried the three deliveries")
    }

    @Test("https by name: the certificate must name the URL's host; one for another name, or only for the address, fails")
    func httpsByName() throws {
        let secret = StandardWebhooks.newSecret()
        let body = Array("{}".utf8)
        let (named, namedFront, namedRoots) = try tlsReceiver(secret: secret, addresses: [], dnsNames: ["localhost"])
        defer { named.stop(); namedFront.stop(); try? FileManager.default.removeItem(atPath: namedRoots) }
        let sender = WebhookSender(allowPrivate: true, allowHTTP: false, trustedRootsFile: namedRoots)
        let url = URL(string: "https://localhost:\(namedFront.port)/webhook")!
        #expect(sender.send(url: url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .status(200))
        #expect(named.deliveries.count == 1)
        // The same server by its address: the certificate names only localhost.
        let byAddress = URL(string: "https://127.0.0.1:\(namedFront.port)/webhook")!
        #expect(sender.send(url: byAddress, body: body, headers: try signedHeaders(body, secrets: [secret])) == .failed("TLS failure"))
        // A certificate for the address and another name.
        let (other, otherFront, otherRoots) = try tlsReceiver(secret: secret, addresses: [[127, 0, 0, 1]], dnsNames: ["example.com"])
        defer { other.stop(); otherFront.stop(); try? FileManager.default.removeItem(atPath: otherRoots) }
        let otherSender = WebhookSender(allowPrivate: true, allowHTTP: false, trustedRootsFile: otherRoots)
        let otherURL = URL(string: "https://localhost:\(otherFront.port)/webhook")!
        #expect(otherSender.send(url: otherURL, body: body, headers: try signedHeaders(body, secrets: [secret])) == .failed("TLS failure"))
        #expect(named.deliveries.count == 1 && other.deliveries.isEmpty)
    }

    @Test("https: an untrusted authority, or a certificate for another address or name, is a TLS failure; nothing arrives")
    func httpsRefused() throws {
        let secret = StandardWebhooks.newSecret()
        let body = Array("{}".utf8)
        // The system's trust store (the production configuration) does not know the test authority.
        let (receiver, front, roots) = try tlsReceiver(secret: secret)
        defer { receiver.stop(); front.stop(); try? FileManager.default.removeItem(atPath: roots) }
        let url = URL(string: "https://127.0.0.1:\(front.port)/webhook")!
        let system = WebhookSender(allowPrivate: true, allowHTTP: false)
        #expect(system.send(url: url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .failed("TLS failure"))
        // Trusted, but issued for 127.0.0.2 and a name: not valid for 127.0.0.1.
        let (other, otherFront, otherRoots) = try tlsReceiver(secret: secret, addresses: [[127, 0, 0, 2]], dnsNames: ["127.0.0.1", "hooks.example"])
        defer { other.stop(); otherFront.stop(); try? FileManager.default.removeItem(atPath: otherRoots) }
        let trusting = WebhookSender(allowPrivate: true, allowHTTP: false, trustedRootsFile: otherRoots)
        let otherURL = URL(string: "https://127.0.0.1:\(otherFront.port)/webhook")!
        #expect(trusting.send(url: otherURL, body: body, headers: try signedHeaders(body, secrets: [secret])) == .failed("TLS failure"))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(receiver.deliveries.isEmpty && other.deliveries.isEmpty)
        // The same receivers deliver once their certificate is trusted for the address.
        let trustingFirst = WebhookSender(allowPrivate: true, allowHTTP: false, trustedRootsFile: roots)
        #expect(trustingFirst.send(url: url, body: body, headers: try signedHeaders(body, secrets: [secret])) == .status(200))
    }

    @Test("https to a server that closes the connection during the handshake is a TLS failure")
    func httpsClosedDuringHandshake() throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let descriptor = listener.descriptor
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                Glibc.close(connection)
            }
        }
        let url = URL(string: "https://127.0.0.1:\(listener.port)/webhook")!
        #expect(sender.send(url: url, body: Array("{}".utf8), headers: [:], timeout: 5) == .failed("TLS failure"))
    }

    @Test("a header name or value that could break the request is refused before connecting")
    func badHeaders() throws {
        let server = try CountingHTTPServer(responseBody: 2)
        defer { server.close() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
        for headers in [["webhook-id": "msg\r\nX-Injected: 1"], ["webhook id": "x"], ["": "x"], ["webhook-id": "a\u{0}b"],
                        ["x:y": "z"], ["webhook-id": "caf\u{7F}"]] {
            #expect(sender.send(url: url, body: [], headers: headers, timeout: 5) == .failed("bad request"), "\(headers)")
        }
        #expect(server.connections == 0)
        // Values with spaces, tabs and UTF-8 are sent as they are.
        #expect(sender.send(url: url, body: [], headers: ["webhook-id": "a b\tc é"], timeout: 5) == .status(200))
    }

    @Test("reads each response's framing: chunked and interim responses keep the connection, close or HTTP/1.0 end it")
    func framing() throws {
        let keep = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
        ]
        for (raw, status) in zip(keep, [200, 202, 204, 200]) {
            let server = try CountingHTTPServer(rawResponse: Array(raw.utf8))
            defer { server.close() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .status(status))
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .status(status))
            #expect(server.connections == 1, "\(raw)")
        }
        let end = [
            "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        ]
        for raw in end {
            let server = try CountingHTTPServer(rawResponse: Array(raw.utf8))
            defer { server.close() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .status(200))
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .status(200))
            #expect(server.connections == 2, "\(raw)")
        }
    }

    @Test("a body of unknown length (no length, or a transfer coding other than chunked) is read until the server closes")
    func bodyUntilClose() throws {
        for raw in ["HTTP/1.1 200 OK\r\n\r\nbody", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc"] {
            let server = try CountingHTTPServer(rawResponse: Array(raw.utf8))
            defer { server.close() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
            // The server never closes: the status counts when the attempt's time is up, and the connection is not kept.
            let started = ContinuousClock.now
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 1) == .status(200))
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "\(raw): \(elapsed)")
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 1) == .status(200))
            #expect(server.connections == 2, "\(raw)")
        }
        // One that closes after it: the status at once.
        let closing = try CountingHTTPServer(rawResponse: Array("HTTP/1.1 201 Created\r\n\r\nbody".utf8), closeAfterEach: true)
        defer { closing.close() }
        let started = ContinuousClock.now
        #expect(sender.send(url: URL(string: "http://127.0.0.1:\(closing.port)/webhook")!, body: [], headers: [:], timeout: 5) == .status(201))
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("a response that is not HTTP/1.x, or whose status or length is malformed, is a bad response")
    func badResponses() throws {
        let raws = [
            "HTTP/2 200\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.2 200 OK\r\n\r\n",
            "SMTP 220 ready\r\n\r\n", "HTTP/1.1 101 Switching Protocols\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        ]
        for raw in raws {
            let server = try CountingHTTPServer(rawResponse: Array(raw.utf8))
            defer { server.close() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
            #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .failed("bad response"), "\(raw)")
        }
        // A head longer than the limit.
        let long = "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 70 * 1024) + "\r\n\r\n"
        let server = try CountingHTTPServer(rawResponse: Array(long.utf8))
        defer { server.close() }
        #expect(sender.send(url: URL(string: "http://127.0.0.1:\(server.port)/webhook")!, body: [], headers: [:], timeout: 5)
                == .failed("bad response"))
    }

    @Test("a kept-alive connection the server closed is replaced within the same attempt")
    func staleConnection() throws {
        let server = try CountingHTTPServer(rawResponse: Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), closeAfterEach: true)
        defer { server.close() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/webhook")!
        for _ in 0..<3 { #expect(sender.send(url: url, body: [], headers: [:], timeout: 5) == .status(200)) }
        #expect(server.requests == 3)
        #expect(server.connections == 3)
    }

    @Test("delivers to an IPv6 address literal, and reuses the connection")
    func ipv6Literal() throws {
        let server = try CountingHTTPServer(ipv6: true)
        defer { server.close() }
        let url = URL(string: "http://[::1]:\(server.port)/webhook")!
        for _ in 0..<2 { #expect(sender.send(url: url, body: Array("{}".utf8), headers: [:], timeout: 5) == .status(200)) }
        #expect(server.requests == 2)
        #expect(server.connections == 1)
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

/// A minimal keep-alive HTTP/1.1 server on 127.0.0.1 (or ::1) that answers every request 200 with a body of `responseBody`
/// bytes (or only its first `stallAfter` bytes, then nothing) and counts the connections it accepted and the requests
/// it answered.
private final class CountingHTTPServer: @unchecked Sendable {
    // `@unchecked Sendable`: the counters are behind `lock`; `descriptor` and `port` never change.
    struct Failure: Error {}
    let port: UInt16
    private let listener: SilentListener
    private let lock = NSLock()
    private var accepted = 0
    private var answered = 0
    private let responseBody: Int
    private let stallAfter: Int?
    /// The exact bytes of every response instead, when given.
    private let rawResponse: [UInt8]?
    /// Whether the server closes the connection after each response, without saying so.
    private let closeAfterEach: Bool

    init(
        responseBody: Int = 0, stallAfter: Int? = nil, rawResponse: [UInt8]? = nil, closeAfterEach: Bool = false,
        ipv6: Bool = false
    ) throws {
        listener = try SilentListener(ipv6: ipv6)
        port = listener.port
        self.responseBody = responseBody
        self.stallAfter = stallAfter
        self.rawResponse = rawResponse
        self.closeAfterEach = closeAfterEach
        let descriptor = listener.descriptor
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                lock.withLock { accepted += 1 }
                Thread.detachNewThread { [self] in serve(connection) }
            }
        }
    }

    var connections: Int { lock.withLock { accepted } }
    var requests: Int { lock.withLock { answered } }

    func close() { shutdown(listener.descriptor, Int32(SHUT_RDWR)); listener.close() }

    /// Writes all of `bytes`; `false` when the client closed the connection.
    private func write(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Answers requests on one connection until the client closes it.
    private func serve(_ connection: Int32) {
        defer { Glibc.close(connection) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let separator = Array("\r\n\r\n".utf8)
        while true {
            // One request: headers, then `Content-Length` bytes of body.
            while true {
                if let end = buffer.firstRange(of: separator)?.upperBound {
                    let head = String(decoding: buffer[..<end], as: UTF8.self).lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if buffer.count >= end + length {
                        buffer.removeFirst(end + length)
                        break
                    }
                }
                let count = read(connection, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer += chunk[..<count]
            }
            lock.withLock { answered += 1 }
            if let rawResponse {
                guard write(rawResponse, to: connection), !closeAfterEach else { return }
                continue
            }
            guard write(Array("HTTP/1.1 200 OK\r\nContent-Length: \(responseBody)\r\n\r\n".utf8), to: connection) else { return }
            let filler = [UInt8](repeating: 0x61, count: 64 * 1024)
            var left = min(responseBody, stallAfter ?? responseBody)
            while left > 0 {
                guard write(Array(filler.prefix(left)), to: connection) else { return }
                left -= min(left, filler.count)
            }
            // Stalled: the connection stays open, silent, until the client closes it.
            if stallAfter != nil {
                while read(connection, &chunk, chunk.count) > 0 {}
                return
            }
        }
    }
}

/// A TCP socket on 127.0.0.1 that listens but never accepts: the kernel completes the handshake, nobody answers.
private final class SilentListener {
    struct Failure: Error {}
    let descriptor: Int32
    let port: UInt16

    /// Listens on 127.0.0.1, or on ::1 when `ipv6`, at a port the system picks.
    init(ipv6: Bool = false) throws {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure() }
        var storage = sockaddr_storage()
        var length: socklen_t
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            withUnsafeBytes(of: address) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            withUnsafeBytes(of: address) { bytes in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let bound = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw Failure()
        }
        descriptor = fd
        // The port sits at the same offset in both families' socket addresses.
        port = withUnsafeBytes(of: storage) { UInt16($0[2]) << 8 | UInt16($0[3]) }
    }

    func close() {
        Glibc.close(descriptor)
    }
}
