import Foundation
import Testing
import SesameTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("`make run`'s command in a fresh working directory")
struct MakeRunTests {
    @Test("creates ./.sesame/sesame.db, answers /health and /metrics, and SIGTERM finishes a request in flight then exits 0")
    func makeRun() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Exactly the Makefile's flags (JSON request log on, to stderr), with port 0 for a free port.
        let server = try ServerProcess.start(database: "sqlite:./.sesame/sesame.db", workingDirectory: folder.path,
                                             listen: "127.0.0.1:0", logOff: false)
        defer { server.kill() }
        let key = try #require(server.adminKey, "\(server.stdout)")
        #expect(key.hasPrefix("sesame_sk_"))
        #expect(server.stdout.contains("sesame: created project "))
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(".sesame/sesame.db").path))

        let client = HTTPClient(port: server.port, key: key)
        let health = try client.get("/health")
        #expect(health.status == 200, "\(health)")
        #expect(health.json["status"] as? String == "pass", "\(health)")
        // Requests are counted when libmicrohttpd reports them complete, just after the response went out, so the
        // count may lag the response by a moment: poll (bounded).
        var metrics = try client.get("/metrics")
        var line: Substring?
        for _ in 0..<50 {
            #expect(metrics.status == 200)
            line = metrics.text.split(separator: "\n").first {
                $0.hasPrefix("sesame_http_requests_total{") && $0.contains(#"route="/health""#) && $0.contains(#"status="200""#)
            }
            if line != nil { break }
            usleep(20_000)
            metrics = try client.get("/metrics")
        }
        #expect(line?.hasSuffix(" 1") == true, "no /health counter in:\n\(metrics.text.prefix(2000))")

        // A request in flight at SIGTERM: its headers are in (the server said 100 Continue), its body comes after the signal.
        let body = Array(#"{"purpose":"drain","ttlSeconds":60}"#.utf8)
        let connection = try TCPConnection(port: server.port, receiveTimeout: 10)
        try connection.send("POST /api/v1/challenges HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(key)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nExpect: 100-continue\r\n\r\n")
        let interim = try connection.readResponse()
        #expect(interim.status == 100, "\(interim)")
        server.send(SIGTERM)
        // Shutdown has begun once new connections are refused (bounded wait).
        var refused = false
        for _ in 0..<100 where !refused {
            do { _ = try HTTPClient(port: server.port).get("/health"); usleep(30_000) } catch { refused = true }
        }
        #expect(refused, "new connections are still accepted 3 s after SIGTERM")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(server.waitForExit(timeout: 0) == nil, "the server must wait for the request in flight")
        try connection.send(body)
        let response = try connection.readResponse()
        #expect(response.status == 201, "\(response)")
        #expect(response.json["purpose"] as? String == "drain")
        #expect(response.header("Connection")?.lowercased() == "close")

        let termination = server.waitForExit(timeout: 15)
        #expect(termination == .exited(0), "\(String(describing: termination)); stderr:\n\(server.stderr.suffix(2000))")
        #expect(server.stdout.contains("sesame: shutting down"))
        // The request log (JSON lines on stderr) recorded the traffic.
        #expect(server.stderr.contains("/health"), "\(server.stderr.suffix(2000))")
    }
}

@Suite("`make run`'s address")
struct MakeRunAddressTests {
    /// The command `make -n run` would run, with `environment` added to this process's.
    static func runCommand(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> String {
        var merged = ProcessInfo.processInfo.environment
        merged["SESAME_LISTEN"] = nil
        merged.merge(environment) { $1 }
        let output = try ChildProcess.run("/usr/bin/make", ["-s", "-n", "-C", AppwriteSDK.repository.path, "run"] + arguments,
                                          environment: merged)
        return output.standardOutput.split(separator: "\n").last { $0.contains("sesame serve") }.map(String.init) ?? output.standardOutput
    }

    @Test("listens on 127.0.0.1:8080 unless PORT, LISTEN or SESAME_LISTEN says otherwise")
    func address() throws {
        #expect(try Self.runCommand().hasSuffix("--listen 127.0.0.1:8080"))
        #expect(try Self.runCommand(["PORT=9000"]).hasSuffix("--listen 127.0.0.1:9000"))
        #expect(try Self.runCommand(["LISTEN=127.0.0.1:9090"]).hasSuffix("--listen 127.0.0.1:9090"))
        #expect(try Self.runCommand(["LISTEN=127.0.0.1:9090", "PORT=9000"]).hasSuffix("--listen 127.0.0.1:9090"))
        #expect(try Self.runCommand(environment: ["SESAME_LISTEN": "0.0.0.0:7070"]).hasSuffix("--listen 0.0.0.0:7070"))
        #expect(try Self.runCommand(["LISTEN=127.0.0.1:9191"], environment: ["SESAME_LISTEN": "0.0.0.0:7070"]).hasSuffix("--listen 127.0.0.1:9191"))
    }
}

@Suite("serve and its signals")
struct ServeSignalTests {
    @Test("a SIGTERM sent the moment 'listening' is printed stops the server cleanly (exit 0), every time")
    func earlySigterm() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for round in 0..<15 {
            let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db", extra: ["--webhooks", round.isMultiple(of: 2) ? "on" : "off"])
            server.send(SIGTERM)
            let exit = server.waitForExit(timeout: 20)
            #expect(exit == .exited(0), "round \(round): \(String(describing: exit))")
            if exit == nil { server.kill() }
        }
    }
}

@Suite("the bootstrap project on a first start")
struct BootstrapTests {
    @Test("is ready for a page on http://localhost:PORT: a localhost web platform, passkeys on, the demo URL printed")
    func readyForLocalDevelopment() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let server = try ServerProcess.start(database: database)
        defer { server.kill() }
        #expect(server.stdout.contains("sesame: demo page: http://localhost:\(server.port)/\n"), "\(server.stdout)")
        let platforms = try SesameCLI.run(["platform", "list", "--db", database]).stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(platforms.count == 1 && platforms.first?["type"] as? String == "web" && platforms.first?["value"] as? String == "localhost",
                "\(platforms)")

        // What a browser on the demo page sends: an Origin of http://localhost:PORT, no key.
        let client = HTTPClient(port: server.port, key: nil)
        let origin = "http://localhost:\(server.port)"
        let start = try client.post("/v1/account/tokens/passkey", "{}", headers: [("X-Appwrite-Project", "default"), ("Origin", origin)])
        #expect(start.status == 201, "\(start)")
        let options = start.json["publicKey"] as? [String: Any]
        #expect(options?["rpId"] as? String == "localhost", "\(start)")
        #expect(start.header("Access-Control-Allow-Origin") == origin)
        // Another origin stays refused, and 127.0.0.1 is not localhost.
        for other in ["http://127.0.0.1:\(server.port)", "https://evil.example"] {
            let refused = try client.post("/v1/account/tokens/passkey", "{}", headers: [("X-Appwrite-Project", "default"), ("Origin", other)])
            #expect(refused.status == 403 && refused.json["type"] as? String == "general_unknown_origin", "\(other): \(refused)")
        }

        // A restart neither bootstraps again nor adds a second platform, and still prints the demo page.
        server.terminate()
        let again = try ServerProcess.start(database: database)
        defer { again.kill() }
        #expect(again.adminKey == nil && again.stdout.contains("sesame: demo page: http://localhost:\(again.port)/"), "\(again.stdout)")
        let after = try SesameCLI.run(["platform", "list", "--db", database]).stdout.split(separator: "\n").count
        #expect(after == 1)
    }
}
