import Foundation
import SesameHTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `/v1` mount's error shape in these tests.
private struct TypeRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        .json(["type": error.code], status: error.status)
    }
}

private func makeRouter() -> Router {
    var router = Router()
    router.mount("/v1", errorRenderer: TypeRenderer())
    router.add(.GET, "/health") { _ in .json(["status": "pass"]) }
    router.add(.GET, "/v1/count") { request in .text(String(request.query.count)) }
    router.add(.GET, "/v1/query") { request in .json(request.query) }
    router.add(.GET, "/v1/header/:name") { request in
        .json(request.headers.values(request.pathParameters["name"] ?? ""))
    }
    router.add(.POST, "/v1/size", requiresJSONBody: false) { request in .text(String(request.body.count)) }
    return router
}

private func startServer(_ adjust: (inout HTTPServer.Configuration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
    configuration.threadCount = 2
    adjust(&configuration)
    let server = HTTPServer(configuration: configuration, responder: makeRouter())
    try server.start()
    return server
}

/// Everything one connection received, from the request until the server closed it.
private struct Exchange: CustomStringConvertible {
    var raw: [UInt8]
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// Bytes after the first response (its head and `Content-Length` bytes of body).
    var trailing: Int
    /// Lines in all that was received that start like a status line.
    var statusLines: Int

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
    var text: String { String(decoding: body, as: UTF8.self) }
    var description: String { String(decoding: raw.prefix(600), as: UTF8.self) }
}

/// Sends `request` on a fresh connection and reads until the server closes it.
private func exchange(_ port: UInt16, _ request: String, source: String? = nil) throws -> Exchange {
    let client = try RawClient(port: port, receiveTimeout: 5, source: source)
    try? client.send(request)  // The server may answer and close before it has read everything.
    let raw = try client.readUntilClose()
    let separator = Array("\r\n\r\n".utf8)
    guard let end = raw.indices.dropLast(3).first(where: { Array(raw[$0..<$0 + 4]) == separator }) else {
        throw RawClient.Failure(description: "no complete response head in \(raw.count) bytes")
    }
    let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ", maxSplits: 2)
    guard lines[0].hasPrefix("HTTP/1.1 "), statusParts.count == 3, let status = Int(statusParts[1]) else {
        throw RawClient.Failure(description: "bad status line: \(lines[0])")
    }
    let headers = lines.dropFirst().compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
    let bodyStart = end + 4
    let bodyEnd = min(raw.count, bodyStart + length)
    let allLines = String(decoding: raw, as: UTF8.self).components(separatedBy: "\r\n")
    return Exchange(
        raw: raw, status: status, headers: headers, body: Array(raw[bodyStart..<bodyEnd]),
        trailing: raw.count - bodyEnd, statusLines: allLines.filter { $0.hasPrefix("HTTP/1.") }.count
    )
}

/// `GET target` with a Host header.
private func get(_ target: String, headers: String = "") -> String {
    "GET \(target) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n"
}

/// A `/v1/count` target whose request line (`GET target HTTP/1.1`) is exactly `length` bytes.
private func target(lineLength length: Int) -> String {
    let prefix = "/v1/count?x="
    return prefix + String(repeating: "a", count: length - prefix.utf8.count - "GET  HTTP/1.1".utf8.count)
}

/// Whether `client`'s connection was closed by the server (EOF or reset), without waiting.
private func isClosed(_ client: RawClient) -> Bool {
    var byte: UInt8 = 0
    let count = recv(client.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
}

/// Whether a fresh connection from `source` is served (rather than closed at once).
private func isServed(_ port: UInt16, source: String) -> Bool {
    guard let client = try? RawClient(port: port, receiveTimeout: 2, source: source) else { return false }
    guard (try? client.send(get("/health"))) != nil, let response = try? client.readResponse() else { return false }
    return response.status == 200
}

/// The server answered this itself, in the responder's error shape, exactly once, and closed the connection.
private func expectOwnAnswer(
    _ exchange: Exchange, status: Int, type: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(exchange.status == status, "\(exchange)", sourceLocation: sourceLocation)
    #expect(exchange.header("Content-Type") == "application/json; charset=utf-8", "\(exchange)", sourceLocation: sourceLocation)
    #expect(exchange.text == #"{"type":"\#(type)"}"#, "\(exchange)", sourceLocation: sourceLocation)
    #expect(exchange.header("Connection")?.lowercased() == "close", "\(exchange)", sourceLocation: sourceLocation)
    #expect(exchange.statusLines == 1 && exchange.trailing == 0, "\(exchange)", sourceLocation: sourceLocation)
}

@Suite("HTTPServer request limits over loopback")
struct RequestLimitTests {
    @Test("many query arguments: up to the limit served, more get our own 414", arguments: [250, 256, 257, 300, 1000])
    func queryArguments(count: Int) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let query = (0..<count).map { "a\($0)=1" }.joined(separator: "&")
        let result = try exchange(server.boundPort, get("/v1/count?\(query)", headers: "Connection: close\r\n"))
        if count <= HTTPServer.Configuration().maximumQueryArguments {
            #expect(result.status == 200, "\(result)")
            #expect(result.text == String(count))
            #expect(result.statusLines == 1 && result.trailing == 0)
        } else {
            expectOwnAnswer(result, status: 414, type: "uri_too_long")
        }
    }

    @Test("the query is parsed as libmicrohttpd parses it")
    func querySemantics() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.boundPort)
        try client.send(get("/v1/query?a=1&a=2&b&&c=%41+%2B%zz&d=x=y&e=%00z&%66=%E2%82%AC&"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])
        #expect(object == ["a": "1", "b": "", "": "", "c": "A +%zz", "d": "x=y", "e": "", "f": "€"])
    }

    @Test("request lines of 16.0, 16.2 and 16.4 KB get our own 414", arguments: [16_000, 16_200, 16_400])
    func longRequestLines(length: Int) throws {
        let server = try startServer()
        defer { server.shutdown() }
        expectOwnAnswer(try exchange(server.boundPort, get(target(lineLength: length))), status: 414, type: "uri_too_long")
        #expect(isServed(server.boundPort, source: "127.0.0.1"))
    }

    @Test("a request line at the limit is served; one byte more gets our own 414")
    func requestLineBoundary() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let limit = HTTPServer.Configuration().maximumRequestLineBytes
        let atLimit = try exchange(server.boundPort, get(target(lineLength: limit), headers: "Connection: close\r\n"))
        #expect(atLimit.status == 200, "\(atLimit)")
        #expect(atLimit.text == "1")
        expectOwnAnswer(try exchange(server.boundPort, get(target(lineLength: limit + 1))), status: 414, type: "uri_too_long")
    }

    @Test("a header section at the limit is served; larger ones, or too many fields, get our own 431")
    func headerLimits() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let limit = HTTPServer.Configuration().maximumHeaderBytes
        // "Host: t\r\n" (9) + "X-Pad: …\r\n" (9 + n) + the blank line (2).
        func padded(_ section: Int) -> String {
            "GET /v1/count HTTP/1.1\r\nHost: t\r\nX-Pad: \(String(repeating: "p", count: section - 20))\r\n\r\n"
        }
        let client = try RawClient(port: server.boundPort)
        try client.send(padded(limit))
        #expect(try client.readResponse().status == 200)
        try client.send(padded(limit))  // Kept alive: a second one on the same connection.
        #expect(try client.readResponse().status == 200)
        expectOwnAnswer(try exchange(server.boundPort, padded(limit + 1)), status: 431, type: "header_fields_too_large")
        expectOwnAnswer(try exchange(server.boundPort, padded(17_000)), status: 431, type: "header_fields_too_large")
        expectOwnAnswer(try exchange(server.boundPort, padded(30_000)), status: 431, type: "header_fields_too_large")

        let fields = HTTPServer.Configuration().maximumHeaderCount
        // Host, Connection and these make exactly the limit.
        let many = (2..<fields).map { "X-F\($0): v\r\n" }.joined()
        let fine = try exchange(server.boundPort, get("/v1/count", headers: many + "Connection: close\r\n"))
        #expect(fine.status == 200, "\(fine)")
        expectOwnAnswer(
            try exchange(server.boundPort, get("/v1/count", headers: many + "X-One: more\r\nConnection: close\r\n")),
            status: 431, type: "header_fields_too_large"
        )
    }

    @Test("a Cookie header of thousands of cookies within the header limit is served and reaches the handler whole")
    func manyCookies() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let cookies = (0..<2000).map { "c\($0)=" }.joined(separator: ";")  // About 12 KB, 2,000 cookies.
        let result = try exchange(server.boundPort, get("/v1/header/cookie", headers: "Cookie: \(cookies)\r\nConnection: close\r\n"))
        #expect(result.status == 200, "\(result)")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(result.body)) as? [String])
        #expect(values == [cookies])
        // Without a Cookie header the handler sees none (the server's placeholder never shows).
        let none = try exchange(server.boundPort, get("/v1/header/cookie", headers: "Connection: close\r\n"))
        #expect(none.text == "[]")
    }

    @Test("more than fits libmicrohttpd's memory gets its own 414 or 431 once, then the connection closes")
    func pastThePool() throws {
        let server = try startServer()
        defer { server.shutdown() }
        // Past the pool (rounded up to whole pages) by more than a page.
        let beyond = HTTPServer.Configuration().memoryPoolBytes + 8192
        let line = try exchange(server.boundPort, get(target(lineLength: beyond)))
        #expect(line.status == 414, "\(line)")
        #expect(line.header("Content-Type") == nil, "libmicrohttpd's own page: \(line)")
        #expect(line.header("Connection")?.lowercased() == "close")
        #expect(line.statusLines == 1 && line.trailing == 0, "\(line)")
        let headers = try exchange(server.boundPort, get("/health", headers: "X-Big: \(String(repeating: "h", count: beyond))\r\n"))
        #expect(headers.status == 431, "\(headers)")
        #expect(headers.header("Content-Type") == nil, "libmicrohttpd's own page: \(headers)")
        #expect(headers.header("Connection")?.lowercased() == "close")
        #expect(headers.statusLines == 1 && headers.trailing == 0, "\(headers)")
        #expect(isServed(server.boundPort, source: "127.0.0.1"))
    }

    @Test("heads of up to about 40 KB, far past the limits, still get our own 414 or 431")
    func wellPastTheLimits() throws {
        let server = try startServer()
        defer { server.shutdown() }
        expectOwnAnswer(try exchange(server.boundPort, get(target(lineLength: 40_000))), status: 414, type: "uri_too_long")
        expectOwnAnswer(
            try exchange(server.boundPort, get("/v1/count", headers: "X-Big: \(String(repeating: "h", count: 40_000))\r\n")),
            status: 431, type: "header_fields_too_large"
        )
    }
}

@Suite("HTTPServer body framing over loopback")
struct FramingTests {
    @Test(
        "conflicting or doubtful body framing gets our own 400 and the connection closes",
        arguments: [
            "Content-Length: 1\r\nContent-Length: 2\r\n",
            "Content-Length: 2\r\nContent-Length: 1\r\n",
            "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
            "Transfer-Encoding: gzip, chunked\r\n",
            "Transfer-Encoding: identity\r\n",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        ]
    )
    func conflictingFraming(headers: String) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let result = try exchange(server.boundPort, "POST /v1/size HTTP/1.1\r\nHost: t\r\n\(headers)\r\nab")
        expectOwnAnswer(result, status: 400, type: "invalid_framing")
        #expect(isServed(server.boundPort, source: "127.0.0.1"))
    }

    @Test("two equal Content-Length headers are one length")
    func repeatedLength() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let result = try exchange(
            server.boundPort, "POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab"
        )
        #expect(result.status == 200, "\(result)")
        #expect(result.text == "2")
    }

    @Test(
        "a Content-Length over the body limit gets our own 413 before the body: one byte over, 19 digits, 20 digits",
        arguments: ["1025", "9999999999999999999", "18446744073709551614"]
    )
    func declaredLengthOverLimit(value: String) throws {
        let server = try startServer { $0.maximumBodySize = 1024 }
        defer { server.shutdown() }
        let result = try exchange(server.boundPort, "POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\n")
        expectOwnAnswer(result, status: 413, type: "payload_too_large")
        #expect(isServed(server.boundPort, source: "127.0.0.1"))
    }

    @Test(
        "a Content-Length libmicrohttpd cannot read gets its own answer, then the connection closes",
        arguments: [
            ("abc", 400), ("-1", 400), ("", 400), ("1x", 400), ("99999999999999999999999", 413),
        ]
    )
    func unreadableLength(value: String, status: Int) throws {
        let server = try startServer()
        defer { server.shutdown() }
        // A client that would reuse the connection: a second request right behind the first.
        let result = try exchange(
            server.boundPort, "POST /v1/size HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\n\r\n"
        )
        #expect(result.status == status, "\(result)")
        #expect(result.header("Connection")?.lowercased() == "close", "\(result)")
        #expect(!result.text.contains("pass"), "the request behind it must not be answered: \(result)")
        withKnownIssue("libmicrohttpd 0.9.75 sends the status line and headers of these answers twice") {
            #expect(result.statusLines == 1 && result.trailing == 0, "\(result)")
        }
        #expect(isServed(server.boundPort, source: "127.0.0.1"))
    }
}

/// Raises this process's soft limit on open files to at least `wanted`, as far as the hard limit allows.
private func raiseOpenFileLimit(to wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < rlim_t(wanted) {
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
    return Int(clamping: limit.rlim_cur)
}

@Suite("HTTPServer connection limits and header deadline over loopback")
struct ConnectionLimitTests {
    @Test("connections over the per-IP limit are closed at once; other addresses and freed slots are served")
    func perIPLimit() throws {
        let server = try startServer {
            $0.perIPConnectionLimit = 3
            $0.headerTimeout = 60
        }
        defer { server.shutdown() }
        let port = server.boundPort
        var held: [RawClient] = []
        for _ in 0..<3 {
            // Answered before the next connects: the server's worker threads accept concurrently, so three connections
            // merely opened could be counted after the fourth, which would then take one of their slots.
            let client = try RawClient(port: port, receiveTimeout: 5, source: "127.0.0.2")
            try client.send(get("/health"))
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        // The fourth from that address: closed by the server well before any timeout (idle 30 s, headers 60 s).
        let over = try RawClient(port: port, receiveTimeout: 5, source: "127.0.0.2")
        try? over.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(over.waitForClose())
        #expect(isServed(port, source: "127.0.0.1"))
        // The held ones still work.
        try held[0].send(get("/health"))
        #expect(try held[0].readResponse().status == 200)
        // Once one closes, its address gets a slot back.
        held.removeLast()
        var served = false
        for _ in 0..<50 where !served {
            served = isServed(port, source: "127.0.0.2")
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(served)
    }

    @Test("past the global limit a connection is not served until another closes")
    func globalLimit() throws {
        let server = try startServer {
            $0.connectionLimit = 4  // Two per worker thread.
            $0.perIPConnectionLimit = 0
        }
        defer { server.shutdown() }
        let port = server.boundPort
        var held: [RawClient] = []
        for _ in 0..<4 {
            let client = try RawClient(port: port, receiveTimeout: 5)
            try client.send(get("/health"))
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        // The fifth waits in the listen queue (or is closed): either way it gets no answer while four are open.
        let waiting = try RawClient(port: port, receiveTimeout: 1)
        try? waiting.send(get("/health"))
        #expect(throws: (any Error).self) { _ = try waiting.readResponse() }
        held.removeAll()
        var served = false
        for _ in 0..<50 where !served {
            served = isServed(port, source: "127.0.0.1")
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(served)
    }

    @Test("a client trickling its headers is closed at the header deadline, long before the idle timeout")
    func headerDeadline() throws {
        let server = try startServer {
            $0.headerTimeout = 1
            $0.connectionTimeout = 30
            $0.perIPConnectionLimit = 1
        }
        defer { server.shutdown() }
        let port = server.boundPort

        // A request trickled in well within the deadline is served.
        let slow = try RawClient(port: port, receiveTimeout: 5, source: "127.0.0.3")
        for byte in Array(get("/health").utf8) {
            try slow.send([byte])
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(try slow.readResponse().status == 200)
        // On the kept-alive connection the next request's headers are due within the deadline too: a byte every
        // 200 ms keeps the idle timeout (30 s) away, yet the server closes it.
        let started = ContinuousClock.now
        var closed = false
        var sent = 0
        while !closed && ContinuousClock.now - started < .seconds(10) {
            do { try slow.send("X") } catch { closed = true }
            sent += 1
            Thread.sleep(forTimeInterval: 0.2)
            closed = closed || isClosed(slow)
        }
        #expect(closed)
        #expect(sent > 3, "closed after \(sent) bytes: before the deadline")

        // A fresh connection that only trickles is closed the same way, and its per-IP slot comes back.
        let trickler = try RawClient(port: port, receiveTimeout: 5, source: "127.0.0.2")
        try trickler.send("G")
        #expect(!isServed(port, source: "127.0.0.2"))  // The address's one slot is taken.
        var gone = false
        let began = ContinuousClock.now
        while !gone && ContinuousClock.now - began < .seconds(10) {
            do { try trickler.send("E") } catch { gone = true }
            Thread.sleep(forTimeInterval: 0.2)
            gone = gone || isClosed(trickler)
        }
        #expect(gone)
        var served = false
        for _ in 0..<50 where !served {
            served = isServed(port, source: "127.0.0.2")
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(served)
    }

    /// `count` connections from 127.0.0.2 that each send one byte.
    private func openFlood(_ count: Int, port: UInt16) throws -> [RawClient] {
        var flood: [RawClient] = []
        flood.reserveCapacity(count)
        for _ in 0..<count {
            let client = try RawClient(port: port, receiveTimeout: 1, source: "127.0.0.2")
            try? client.send("G")
            flood.append(client)
        }
        return flood
    }

    @Test("control: without the per-IP limit and the header deadline, the same flood takes every slot")
    func floodWithoutLimits() throws {
        #expect(raiseOpenFileLimit(to: 1100 + 1024) >= 1100 + 512)
        let server = try startServer {
            $0.perIPConnectionLimit = 0
            $0.headerTimeout = 0
        }
        defer { server.shutdown() }
        let port = server.boundPort
        #expect(isServed(port, source: "127.0.0.1"))
        let flood = try openFlood(1100, port: port)
        let fresh = try RawClient(port: port, receiveTimeout: 1)
        try? fresh.send(get("/health"))
        #expect(throws: (any Error).self, "a fresh client was served with every slot taken") { _ = try fresh.readResponse() }
        withExtendedLifetime(flood) {}
    }

    @Test("1,100 connections from one address, each sending a byte, do not keep /health from a fresh client (100 ms)")
    func flood() throws {
        let floodSize = 1100
        #expect(raiseOpenFileLimit(to: floodSize + 1024) >= floodSize + 512)
        let server = try startServer()  // Default limits.
        defer { server.shutdown() }
        let port = server.boundPort
        #expect(isServed(port, source: "127.0.0.1"))  // Warm-up before the flood.

        let flood = try openFlood(floodSize, port: port)
        // The flood is in place once the server has closed every connection over the per-IP limit.
        let cap = HTTPServer.Configuration().perIPConnectionLimit
        var closed = 0
        let waitStarted = ContinuousClock.now
        repeat {
            closed = flood.filter(isClosed).count
            if closed < floodSize - cap { Thread.sleep(forTimeInterval: 0.02) }
        } while closed < floodSize - cap && ContinuousClock.now - waitStarted < .seconds(5)
        #expect(closed == floodSize - cap, "closed \(closed) of \(floodSize), per-IP limit \(cap)")

        // The first request of a fresh client, measured from connect to the end of the response.
        let started = ContinuousClock.now
        let fresh = try RawClient(port: port, receiveTimeout: 5)
        try fresh.send(get("/health"))
        let response = try fresh.readResponse()
        let elapsed = ContinuousClock.now - started
        #expect(response.status == 200)
        #expect(response.text == #"{"status":"pass"}"#)
        #expect(elapsed < .milliseconds(100), "the fresh client waited \(elapsed)")
        print("[flood] \(closed) of \(floodSize) closed at once; a fresh client was answered in \(elapsed)")
        // The flood connections within the limit are still held (their header deadline is 10 s away).
        #expect(flood.filter(isClosed).count == floodSize - cap)
    }
}
