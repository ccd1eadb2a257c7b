import Foundation
import SesameTestSupport
import Testing

/// What one connection to a real `sesame serve` received for `request`, up to the server's close.
private func exchange(_ port: UInt16, _ request: String) throws -> (response: HTTPResult, closed: Bool) {
    let connection = try TCPConnection(port: port, receiveTimeout: 5)
    try? connection.send(request)  // The server may answer and close before it has read everything.
    let response = try connection.readResponse()
    return (response, connection.waitForClose())
}

@Suite("sesame serve: connection limits and transport errors in each face's shape")
struct ConnectionLayerTests {
    @Test("too many query arguments, a long request line and large headers get 414/431 in the Appwrite and BotShield shapes")
    func facesRenderTransportErrors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db")
        defer { server.kill() }
        let arguments = (0..<300).map { "a\($0)=1" }.joined(separator: "&")
        let longLine = String(repeating: "l", count: 16_200)
        let bigHeader = "X-Big: \(String(repeating: "h", count: 17_000))\r\n"
        let cases: [(path: String, headers: String, status: Int)] = [
            ("/v1/account?\(arguments)", "", 414),
            ("/v1/account?q=\(longLine)", "", 414),
            ("/v1/account", bigHeader, 431),
            ("/operations/request/status?\(arguments)", "", 414),
            ("/operations/status?q=\(longLine)", "", 414),
            ("/operations/status", bigHeader, 431),
        ]
        for item in cases {
            let (response, closed) = try exchange(
                server.port, "GET \(item.path) HTTP/1.1\r\nHost: localhost\r\nX-Appwrite-Project: default\r\n\(item.headers)\r\n"
            )
            let label = "\(item.path.prefix(40)) \(item.headers.prefix(10))"
            #expect(response.status == (item.path.hasPrefix("/operations/request") ? 200 : item.status), "\(label): \(response)")
            #expect(response.header("Connection")?.lowercased() == "close", "\(label)")
            #expect(closed, "\(label): the connection stayed open")
            let json = response.json
            if item.path.hasPrefix("/v1/") {
                // Appwrite: {"message","code","type","version"}, labelled as Appwrite labels it.
                #expect(response.header("Content-Type") == "application/json; charset=UTF-8", "\(label)")
                #expect(Set(json.keys) == ["message", "code", "type", "version"], "\(label): \(response)")
                #expect(json["code"] as? Int == item.status, "\(label): \(response)")
                #expect(json["type"] as? String == "general_argument_invalid", "\(label): \(response)")
            } else if item.path.hasPrefix("/operations/request") {
                // BotShield's public endpoints: HTTP 200 with {"data":{"error":{"statusCode","message"}}}.
                let error = (json["data"] as? [String: Any])?["error"] as? [String: Any]
                #expect(error?["statusCode"] as? Int == item.status, "\(label): \(response)")
                #expect(error?["message"] as? String == "uri_too_long", "\(label): \(response)")
            } else {
                // BotShield's partner endpoints: {"error":{"statusCode","code","message"}} with the real status.
                let error = json["error"] as? [String: Any]
                #expect(error?["statusCode"] as? Int == item.status, "\(label): \(response)")
                #expect(error?["code"] as? String == (item.status == 414 ? "uri_too_long" : "header_fields_too_large"), "\(label)")
                #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, "\(label)")
            }
        }
        #expect(try HTTPClient(port: server.port, key: "").get("/health").status == 200)
    }

    @Test("--max-connections-per-ip closes connections over the limit; --header-timeout closes a trickling one")
    func serveFlags() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(
            database: "sqlite:\(folder.path)/sesame.db", extra: ["--max-connections-per-ip", "2", "--header-timeout", "2"]
        )
        defer { server.kill() }
        let first = try TCPConnection(port: server.port, receiveTimeout: 8)
        try first.send("G")
        let second = try TCPConnection(port: server.port, receiveTimeout: 8)
        try second.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try second.readResponse().status == 200)
        // A third from the same address is closed at once, without an answer.
        let third = try TCPConnection(port: server.port, receiveTimeout: 8)
        try? third.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(third.waitForClose())
        #expect(third.received.isEmpty)
        // The first never completes its headers: closed at the 2 s header deadline (the idle timeout is 30 s),
        // though it keeps sending a byte every 300 ms.
        let started = Date()
        var closed = false
        while !closed && Date().timeIntervalSince(started) < 10 {
            do { try first.send("E") } catch { closed = true }
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(closed, "a trickling connection outlived the header deadline")
        print("[integration] trickling connection closed after \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
        // Its slot is free again.
        let fresh = try TCPConnection(port: server.port, receiveTimeout: 8)
        try fresh.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try fresh.readResponse().status == 200)
    }

    @Test("clients that connect together are served by as many worker threads, not queued behind each other on one")
    func connectionsSpreadOverWorkers() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Four workers (the default on a machine with up to two cores), whatever this machine's count.
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db", extra: ["--threads", "4"])
        defer { server.kill() }
        let connections = try (0..<4).map { _ in try TCPConnection(port: server.port, receiveTimeout: 5) }
        let before = workerCPUTime(server.pid)
        for _ in 0..<600 {
            for connection in connections {
                try connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
            }
        }
        let used = workerCPUTime(server.pid).map { thread, time in time - (before[thread] ?? 0) }
        let total = used.reduce(0, +)
        // Accepted by the workers themselves (before a thread of Sesame's own accepted for them), the four went to one
        // or two workers, so that each request waited for the others' on its worker.
        #expect(used.filter { $0 * 10 >= total }.count == 4, "CPU time of each worker thread, in ns: \(used.sorted())")
    }

    @Test("out of file descriptors, the server leaves connections waiting and serves them once others close")
    func outOfDescriptors() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db")
        defer { server.kill() }
        #expect(try HTTPClient(port: server.port, key: "").get("/health").status == 200)
        // Room for four more descriptors than the server holds now: further connections cannot be accepted.
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/fd").count
        let limited = try ChildProcess.run("/usr/bin/prlimit", ["--pid", "\(server.pid)", "--nofile=\(held + 4):\(held + 4)"])
        try #require(limited.status == 0, "prlimit: \(limited.standardError)")
        // Served until one is not (the server's own descriptors come and go, so how many fit varies a little).
        var served: [TCPConnection] = []
        var waiting: TCPConnection?
        for _ in 0..<64 where waiting == nil {
            let connection = try TCPConnection(port: server.port, receiveTimeout: 3)
            try connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            if (try? connection.readResponse())?.status == 200 { served.append(connection) } else { waiting = connection }
        }
        let unanswered = try #require(waiting, "64 connections served with room for 4 more descriptors")
        #expect(!served.isEmpty)
        // The ones served close: the waiting connection is accepted and answered, and the server runs on.
        served.removeAll()
        var answered = false
        for _ in 0..<10 where !answered {
            answered = (try? unanswered.readResponse())?.status == 200
        }
        #expect(answered, "the waiting connection was never answered after descriptors came free")
        #expect(server.waitForExit(timeout: 0.1) == nil, "the server ended")
    }

    /// CPU time in nanoseconds (`/proc/PID/task/TID/schedstat`) of each of `pid`'s libmicrohttpd worker threads, by
    /// thread ID.
    private func workerCPUTime(_ pid: pid_t) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var times: [String: Int] = [:]
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix("MHD-worker"),
                  let schedstat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let time = schedstat.split(separator: " ").first.flatMap({ Int($0) })
            else { continue }
            times[task] = time
        }
        return times
    }

    @Test("sesame serve refuses bad connection-limit flags")
    func badFlags() throws {
        for flags in [["--max-connections", "0"], ["--max-connections-per-ip", "-1"], ["--header-timeout", "x"]] {
            let result = try SesameCLI.run(["serve", "--db", "sqlite::memory:"] + flags)
            #expect(result.status == 2, "\(flags): \(result)")
            #expect(result.stderr.contains(flags[0]), "\(flags): \(result.stderr)")
        }
    }
}
