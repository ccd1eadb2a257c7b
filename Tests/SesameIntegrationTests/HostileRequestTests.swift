import Foundation
import SesameTestSupport
import Testing

/// The requests a black-box probe found that took a release `sesame serve` down (D1, D2) or answered 500 (D3), sent
/// exactly as found to a real server over loopback: each must get a 400 in Appwrite's error shape, and the server
/// must still be alive and answering afterwards.
@Suite("Hostile requests over loopback: answered 4xx, the server stays up")
struct HostileRequestTests {
    /// `text` percent-encoded for a query string.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }

    @Test("D1-D3: huge numbers in queries and token lengths, a NUL in an email: 400, and the server lives")
    func exactRequests() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db")
        defer { server.kill() }
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port, key: "")
        let project = [("X-Appwrite-Project", "default")]
        let withKey = project + [("X-Appwrite-Key", key)]

        func expectAlive(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(server.waitForExit(timeout: 0) == nil, "\(label): the server died\n\(server.stderr.suffix(2000))",
                    sourceLocation: sourceLocation)
            #expect(try client.get("/health").status == 200, "\(label): /health", sourceLocation: sourceLocation)
        }
        func expect400(_ label: String, _ response: HTTPResult, type: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(response.status == 400, "\(label): \(response)", sourceLocation: sourceLocation)
            #expect(response.json["type"] as? String == type && response.json["code"] as? Int == 400, "\(label): \(response)",
                    sourceLocation: sourceLocation)
            #expect(response.header("Content-Type") == "application/json; charset=UTF-8", sourceLocation: sourceLocation)
            try expectAlive(label, sourceLocation: sourceLocation)
        }

        // A guest signs up and signs in: all D1 needs.
        let signUp = try client.post("/v1/account", #"{"userId":"unique()","email":"probe@example.org","password":"password123"}"#,
                                     headers: project)
        #expect(signUp.status == 201, "\(signUp)")
        let userID = try #require(signUp.json["$id"] as? String)
        let signIn = try client.post("/v1/account/sessions/email", #"{"email":"probe@example.org","password":"password123"}"#,
                                     headers: project)
        #expect(signIn.status == 201, "\(signIn)")
        let cookie = try #require(signIn.headers.first { $0.0.lowercased() == "set-cookie" && $0.1.hasPrefix("a_session_default=") })
        let session = project + [("Cookie", String(cookie.1.prefix { $0 != ";" }))]

        // D1: a filter on a number beyond Int, on every list route that reads queries: it matches nothing (200, an empty
        // list); a limit beyond the allowed range is 400 general_query_invalid.
        func expectEmpty(_ label: String, _ response: HTTPResult, list: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(response.status == 200 && response.json["total"] as? Int == 0 && (response.json[list] as? [Any])?.isEmpty == true,
                    "\(label): \(response)", sourceLocation: sourceLocation)
            try expectAlive(label, sourceLocation: sourceLocation)
        }
        let huge = Self.encoded(#"{"method":"equal","attribute":"name","values":[1e300]}"#)
        try expectEmpty("D1 account passkeys", try client.get("/v1/account/passkeys?queries[]=\(huge)", headers: session), list: "passkeys")
        try expectEmpty("D1 users", try client.get("/v1/users?queries[]=\(huge)", headers: withKey), list: "users")
        try expectEmpty("D1 user passkeys", try client.get("/v1/users/\(userID)/passkeys?queries[]=\(huge)", headers: withKey),
                        list: "passkeys")
        try expectEmpty("D1 platforms", try client.get("/v1/project/platforms?queries[]=\(huge)", headers: withKey), list: "platforms")
        let hostname = Self.encoded(#"{"method":"notEqual","attribute":"hostname","values":[1e19,-123456789012345678901234567890123456789]}"#)
        let platforms = try client.get("/v1/project/platforms?queries[]=\(hostname)", headers: withKey)
        #expect(platforms.status == 200, "\(platforms)")
        try expectAlive("D1 platforms notEqual")
        for value in ["1e300", "-1", "1.5", "5001"] {
            let limit = Self.encoded(#"{"method":"limit","values":[\#(value)]}"#)
            try expect400("D1 limit \(value)", try client.get("/v1/users?queries[]=\(limit)", headers: withKey), type: "general_query_invalid")
        }

        // D2: a token length of 1e300 or a 39-digit integer.
        for length in ["1e300", "123456789012345678901234567890123456789", "-1e300", "4.5"] {
            try expect400("D2 length \(length)", try client.post("/v1/users/\(userID)/tokens", #"{"length":\#(length)}"#, headers: withKey),
                          type: "general_argument_invalid")
        }
        try expect400("D2 expire 1e300", try client.post("/v1/users/\(userID)/tokens", #"{"expire":1e300}"#, headers: withKey),
                      type: "general_argument_invalid")
        try expect400("D2 JWT duration", try client.post("/v1/account/jwts", #"{"duration":1e300}"#, headers: session),
                      type: "general_argument_invalid")
        try expect400("D2 session duration", try client.post("/v1/account/sessions/email",
                                                             #"{"email":"probe@example.org","password":"password123","duration":1e300}"#,
                                                             headers: withKey), type: "general_argument_invalid")

        // D3: a NUL in the email, from a guest and from a key.
        for headers in [project, withKey] {
            try expect400("D3 NUL email", try client.post("/v1/account/sessions/email",
                                                          #"{"email":"probe@example.org\u0000","password":"password123"}"#, headers: headers),
                          type: "general_argument_invalid")
        }
        // The same NUL anywhere else text is stored is bad input too, not a server error.
        try expect400("NUL name", try client.post("/v1/users", #"{"userId":"unique()","name":"a\u0000b"}"#, headers: withKey),
                      type: "general_argument_invalid")
    }
}

@Suite("Crash reports")
struct CrashReportTests {
    @Test("a crash is reported in a file of its own, without registers or memory, and the request log stays JSON lines")
    func crashGoesToItsOwnFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = nil
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db", logOff: false, environment: environment)
        defer { server.kill() }
        #expect(try HTTPClient(port: server.port, key: "").get("/health").status == 200)
        let crashes = "\(folder.path)/crashes"
        #expect(server.crash(reportingTo: crashes) == .signaled(SIGILL))

        let attributes = try FileManager.default.attributesOfItem(atPath: crashes)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let reports = try FileManager.default.contentsOfDirectory(atPath: crashes)
        #expect(reports.count == 1 && reports.first?.hasPrefix("sesame-") == true, "\(reports)")
        let report = try String(contentsOfFile: "\(crashes)/\(try #require(reports.first))", encoding: .utf8)
        #expect(report.contains("Program crashed") && report.contains("crashed:"), "\(report)")
        #expect(!report.contains("Registers") && !report.contains("rip 0x") && !report.contains("Images"), "\(report)")

        // stderr: the request log's JSON lines, the server's own `sesame: ` notices and the runtime's one-line notices
        // (`*** Signal 4: Backtracing...`, and under load `swift-runtime: failed to suspend thread N while processing a
        // crash`), nothing of the report.
        let lines = server.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(lines.contains { $0.contains(#""route":"/health""#) }, "\(server.stderr)")
        #expect(lines.contains { $0.hasPrefix("*** Signal 4: Backtracing") }, "\(server.stderr)")
        for line in lines {
            let isJSON = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any]
            let notice = line.hasPrefix("*** Signal 4: Backtracing") || line.hasPrefix("swift-runtime: failed to suspend thread")
            #expect(isJSON || line.hasPrefix("sesame: ") || notice, "a stray line on stderr: \(line)")
        }
    }
}
