import Foundation
import SesameHTTP
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `/v1` mount's error shape in these tests.
private struct FlatRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        .json(["type": error.code], status: error.status)
    }
}

private struct Echo: Codable, Equatable {
    var name: String
    var numbers: [Int]
}

/// Everything a test saw through the observer.
private final class Observed: Sendable {
    let entries = Mutex<[(method: String, path: String, status: Int, route: String?)]>([])
}

private func makeRouter() -> Router {
    var router = Router()
    router.mount("/v1", errorRenderer: FlatRenderer())
    router.add(.GET, "/health") { _ in .json(["status": "pass"]) }
    router.add(.GET, "/inspect/:name") { request in
        .json([
            "name": request.pathParameters["name"] ?? "", "path": request.path, "q": request.query["q"] ?? "<none>",
            "flag": request.query["flag"] ?? "<none>", "remote": request.remoteAddress,
            "header": request.headers["X-Custom"] ?? "",
        ])
    }
    router.add(.POST, "/v1/echo") { request in
        .json(try decodeJSONBody(Echo.self, from: request), status: 201)
    }
    router.add(.POST, "/v1/size", requiresJSONBody: false) { request in .text(String(request.body.count)) }
    router.add(.GET, "/slow") { _ in
        Thread.sleep(forTimeInterval: 0.5)
        return .text("done")
    }
    return router
}

private func startServer(
    _ adjust: (inout HTTPServer.Configuration) -> Void = { _ in }, observed: Observed? = nil
) throws -> HTTPServer {
    var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
    configuration.threadCount = 2
    adjust(&configuration)
    var observer: HTTPServer.Observer?
    if let observed {
        observer = { @Sendable request, response, _ in
            observed.entries.withLock {
                $0.append((method: request.method.rawValue, path: request.path, status: response.status, route: response.route))
            }
        }
    }
    let server = HTTPServer(configuration: configuration, responder: makeRouter(), observer: observer)
    try server.start()
    return server
}

@Suite("HTTPServer over loopback")
struct HTTPServerTests {
    @Test("port 0 binds a kernel-chosen port; a second server on it fails with addressInUse")
    func portZeroAndInUse() throws {
        let server = try startServer()
        defer { server.shutdown() }
        #expect(server.boundPort != 0)

        let clash = HTTPServer(configuration: .init(host: "127.0.0.1", port: server.boundPort), responder: Router())
        let error = try #require(throws: HTTPServerError.self) { try clash.start() }
        #expect(error.code == .addressInUse)
        #expect(error.message.contains("already in use"))

        let bad = HTTPServer(configuration: .init(host: "not-an-ip", port: 0), responder: Router())
        #expect(throws: HTTPServerError(code: .invalidAddress, message: "")) { try bad.start() }
        #expect(throws: HTTPServerError(code: .alreadyStarted, message: "")) { try server.start() }
    }

    @Test("GET and POST JSON round trip through URLSession")
    func urlSessionRoundTrip() async throws {
        let server = try startServer()
        defer { server.shutdown() }
        let base = "http://127.0.0.1:\(server.boundPort)"

        let (data, response) = try await URLSession.shared.data(from: URL(string: base + "/health")!)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        #expect(http.value(forHTTPHeaderField: "X-Request-Id")?.count == 32)
        #expect(String(decoding: data, as: UTF8.self) == #"{"status":"pass"}"#)

        var request = URLRequest(url: URL(string: base + "/v1/echo")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let sent = Echo(name: "ünï/côdé", numbers: [1, 2, 3])
        request.httpBody = try JSONEncoder().encode(sent)
        let (echoed, echoResponse) = try await URLSession.shared.data(for: request)
        #expect((echoResponse as? HTTPURLResponse)?.statusCode == 201)
        #expect(try JSONDecoder().decode(Echo.self, from: echoed) == sent)

        request.httpBody = Data("{broken".utf8)
        let (bad, badResponse) = try await URLSession.shared.data(for: request)
        #expect((badResponse as? HTTPURLResponse)?.statusCode == 400)
        #expect(String(decoding: bad, as: UTF8.self) == #"{"type":"invalid_json"}"#)
    }

    @Test("decodes path and query, and reports headers and the client address")
    func requestFields() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send(
            "GET /inspect/a%20b?q=x%26y&q=second&flag HTTP/1.1\r\nHost: t\r\nX-Custom: hello\r\n\r\n"
        )
        let response = try client.readResponse()
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(object["name"] == "a b")
        #expect(object["path"] == "/inspect/a b")
        #expect(object["q"] == "x&y")
        #expect(object["flag"] == "")
        #expect(object["remote"] == "127.0.0.1")
        #expect(object["header"] == "hello")
    }

    @Test("writes each IPv4 client address in dotted decimal without leading zeros", arguments: [
        "127.0.0.2", "127.10.200.5", "127.99.100.255", "127.1.9.10",
    ])
    func clientAddresses(_ source: String) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort, source: source)
        try client.send("GET /inspect/x HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(object["remote"] == source)
    }

    @Test("keep-alive: two requests on one connection, each with its own request id")
    func keepAlive() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        let first = try client.readResponse()
        try client.send("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n")
        let second = try client.readResponse()
        #expect(first.status == 200)
        #expect(second.status == 404)
        #expect(first.header("Connection")?.lowercased() != "close")
        #expect(first.header("X-Request-Id") != second.header("X-Request-Id"))
    }

    @Test("HEAD gets GET's headers and length but no body, and the connection stays usable")
    func head() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send("HEAD /health HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == String(#"{"status":"pass"}"#.utf8.count))
        #expect(head.header("Content-Type") == "application/json; charset=utf-8")
        try client.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        let get = try client.readResponse()
        #expect(get.text == #"{"status":"pass"}"#)
    }

    @Test("a declared body over the limit gets 413 in the mount's shape and the connection closes")
    func bodyTooLargeDeclared() throws {
        let server = try startServer({ $0.maximumBodySize = 1024 })
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send("POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.text == #"{"type":"payload_too_large"}"#)
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(client.waitForClose())

        // A client that sends the whole body without waiting still reads the 413.
        let eager = try RawClient(port: server.boundPort)
        try? eager.send(
            "POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n" + String(repeating: "z", count: 200_000)
        )
        #expect(try eager.readResponse().status == 413)
    }

    @Test("a chunked body over the limit gets 413; one at the limit is accepted")
    func bodyTooLargeChunked() throws {
        let server = try startServer({ $0.maximumBodySize = 1024 })
        defer { server.shutdown() }

        let atLimit = try RawClient(port: server.boundPort)
        try atLimit.send("POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: 1024\r\n\r\n" + String(repeating: "a", count: 1024))
        let accepted = try atLimit.readResponse()
        #expect(accepted.status == 200)
        #expect(accepted.text == "1024")

        let client = try RawClient(port: server.boundPort)
        let chunk = String(repeating: "b", count: 800)
        try client.send(
            "POST /v1/size HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "320\r\n\(chunk)\r\n320\r\n\(chunk)\r\n0\r\n\r\n"
        )
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.text == #"{"type":"payload_too_large"}"#)

        // An endless chunked body is dropped only up to a point, then the connection is closed.
        let endless = try RawClient(port: server.boundPort)
        try endless.send("POST /v1/size HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        let big = "10000\r\n" + String(repeating: "c", count: 0x10000) + "\r\n"
        var sendFailed = false
        for _ in 0..<64 where !sendFailed {  // 4 MiB, far past the 1 MiB drain limit.
            do { try endless.send(big) } catch { sendFailed = true }
        }
        #expect(sendFailed || endless.waitForClose())
    }

    @Test("a client that stalls mid-request is disconnected after connectionTimeout")
    func slowClient() throws {
        let server = try startServer({ $0.connectionTimeout = 1 })
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort, receiveTimeout: 4)
        try client.send("GET /health HTTP/1.1\r\nHost: t\r\nX-Partial: ")
        let started = ContinuousClock.now
        #expect(client.waitForClose())
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(900))
        #expect(waited < .seconds(3))
    }

    @Test("headers larger than maximumHeaderBytes get 431 in the mount's shape and the connection closes")
    func headersTooLarge() throws {
        let server = try startServer({ $0.maximumHeaderBytes = 4096 }, observed: nil)
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send("GET /v1/echo HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "x", count: 8000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(response.text == #"{"type":"header_fields_too_large"}"#)
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(client.waitForClose())

        let fine = try RawClient(port: server.boundPort)
        try fine.send("GET /health HTTP/1.1\r\nHost: t\r\nX-Small: \(String(repeating: "x", count: 1000))\r\n\r\n")
        #expect(try fine.readResponse().status == 200)
    }

    @Test("binds IPv6 loopback")
    func ipv6() throws {
        let server = try startServer({ $0.host = "::1" })
        defer { server.shutdown() }
        let client = try RawClient(host: "::1", port: server.boundPort)
        try client.send("GET /inspect/x HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text.contains(#""remote":"::1""#))
    }

    @Test("the observer sees each answered request with its route")
    func observer() throws {
        let observed = Observed()
        let server = try startServer(observed: observed)
        let client = try RawClient(port: server.boundPort)
        try client.send("GET /inspect/a HTTP/1.1\r\nHost: t\r\n\r\nGET /missing HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        _ = try client.readResponse()
        server.shutdown()
        let entries = observed.entries.withLock { $0 }
        #expect(entries.count == 2)
        #expect(entries.first?.route == "/inspect/:name")
        #expect(entries.first?.status == 200)
        #expect(entries.last?.route == nil)
        #expect(entries.last?.status == 404)
    }

    @Test("graceful shutdown finishes the request in flight, then refuses connections")
    func gracefulShutdown() throws {
        let server = try startServer()
        let port = server.boundPort
        let client = try RawClient(port: port)
        let idle = try RawClient(port: port)
        try client.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.1)  // The handler is now sleeping on a worker thread.

        let started = ContinuousClock.now
        let finished = Mutex(false)
        let stopper = Thread {
            server.shutdown(timeout: .seconds(5))
            finished.withLock { $0 = true }
        }
        stopper.start()
        Thread.sleep(forTimeInterval: 0.1)
        #expect(throws: (any Error).self) { _ = try RawClient(port: port) }  // Refused while draining.

        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "done")
        #expect(response.header("Connection")?.lowercased() == "close")
        while !finished.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(idle.waitForClose())
        #expect(throws: (any Error).self) { _ = try RawClient(port: port) }
        server.shutdown()  // Idempotent.
    }
}
