import Foundation
import SesameTestSupport
import Testing

@Suite("Bad input over loopback: clear 4xx in the error shape, nothing written")
struct BadInputTests {
    /// Sends `request`, expects `status` (and `code` when given) in the error shape, and an unchanged platform list.
    static func expectRejected(_ label: String, _ client: HTTPClient, baseline: String, status: Int, code: String? = nil,
                               _ request: () throws -> HTTPResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let response = try request()
        #expect(response.status == status, "\(label): \(response)", sourceLocation: sourceLocation)
        #expect(response.status < 500, "\(label): a server error for bad input", sourceLocation: sourceLocation)
        #expect(response.isErrorShape, "\(label): not the error shape: \(response) \(response.headers)", sourceLocation: sourceLocation)
        if let code { #expect(response.errorCode == code, "\(label): \(response)", sourceLocation: sourceLocation) }
        let after = try client.platforms().body
        #expect(after == baseline, "\(label): the platform list changed", sourceLocation: sourceLocation)
    }

    @Test("the management API refuses bad input on SQLite, and a stalled client is cut off")
    func sqlite() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let server = try ServerProcess.start(database: database, extra: ["--connection-timeout", "1"])
        defer { server.kill() }
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port, key: key)
        #expect(try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"keep.example"}"#).status == 201)
        let baseline = try client.platforms().body
        func rejected(_ label: String, _ status: Int, _ code: String? = nil, _ request: () throws -> HTTPResult,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
            try Self.expectRejected(label, client, baseline: baseline, status: status, code: code, request, sourceLocation: sourceLocation)
        }

        // Body limits, JSON and media type.
        let padding = String(repeating: "a", count: 70_000)
        try rejected("oversized body", 413, "payload_too_large") {
            try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"big.example","name":"\#(padding)"}"#)
        }
        try rejected("oversized challenge body", 413, "payload_too_large") {
            try client.post("/api/v1/challenges", #"{"purpose":"\#(padding)"}"#)
        }
        try rejected("oversized chunked body", 413, "payload_too_large") {
            let body = Array(#"{"type":"web","hostname":"big.example","name":"\#(padding)"}"#.utf8)
            var chunked: [UInt8] = []
            for start in stride(from: 0, to: body.count, by: 8192) {
                let chunk = body[start..<min(start + 8192, body.count)]
                chunked += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
            }
            chunked += Array("0\r\n\r\n".utf8)
            return try client.request("POST", "/api/v1/project/platforms", headers: [("Transfer-Encoding", "chunked")], body: chunked)
        }
        // Past the request-line limit (8 KiB) the server answers 414 itself, in the mount's shape.
        try rejected("long URL", 414, "uri_too_long") {
            try client.delete("/api/v1/project/platforms/\(String(repeating: "u", count: 20_000))")
        }
        try rejected("malformed JSON", 400, "invalid_json") { try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"#) }
        try rejected("empty body", 400, "invalid_json") { try client.post("/api/v1/project/platforms", "") }
        try rejected("JSON array instead of object", 400, "invalid_json") { try client.post("/api/v1/project/platforms", "[1,2]") }
        try rejected("missing type", 400, "invalid_json") { try client.post("/api/v1/project/platforms", #"{"hostname":"a.example"}"#) }
        try rejected("text/plain", 415, "unsupported_media_type") {
            try client.request("POST", "/api/v1/project/platforms", body: Array(#"{"type":"web","hostname":"a.example"}"#.utf8),
                               contentType: "text/plain")
        }
        try rejected("no Content-Type", 415, "unsupported_media_type") {
            try client.request("POST", "/api/v1/project/platforms", body: Array(#"{"type":"web","hostname":"a.example"}"#.utf8),
                               contentType: nil)
        }

        // Routing.
        try rejected("unknown route", 404, "route_not_found") { try client.get("/api/v1/nope") }
        try rejected("unknown route, POST", 404, "route_not_found") { try client.post("/api/v1/project/platforms/x/y", "{}") }
        let wrongMethod = try client.request("PATCH", "/api/v1/project/platforms", body: Array("{}".utf8))
        try rejected("wrong method", 405, "method_not_allowed") { wrongMethod }
        let allow = Set((wrongMethod.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(allow.isSuperset(of: ["GET", "POST"]) && !allow.contains("PATCH"), "Allow: \(wrongMethod.header("Allow") ?? "none")")
        let getChallenges = try client.get("/api/v1/challenges")
        try rejected("GET on a POST-only route", 405, "method_not_allowed") { getChallenges }
        #expect(getChallenges.header("Allow")?.contains("POST") == true)

        // Authentication and scopes.
        let anonymous = HTTPClient(port: server.port, key: nil)
        try rejected("no API key", 401, "unauthorized") { try anonymous.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example"}"#) }
        try rejected("no API key, GET", 401, "unauthorized") { try anonymous.get("/api/v1/project/platforms") }
        for bad in ["garbage", "sesame_sk_notarealkey", key + "x", String(key.dropLast()), String(repeating: "sesame_sk_", count: 30)] {
            try rejected("bad key \(bad.prefix(20))", 401, "unauthorized") {
                try HTTPClient(port: server.port, key: bad).post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example"}"#)
            }
        }
        try rejected("Basic instead of Bearer", 401, "unauthorized") {
            try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example"}"#, headers: [("Authorization", "Basic \(key)")])
        }
        let revocable = try SesameCLI.succeed(["apikey", "create", "--db", database, "--name", "soon revoked"])
        let revocableSecret = try #require(revocable["secret"] as? String), revocableID = try #require(revocable["id"] as? String)
        let revocableClient = HTTPClient(port: server.port, key: revocableSecret)
        #expect(try revocableClient.get("/api/v1/project/platforms").status == 200)
        try SesameCLI.succeed(["apikey", "revoke", revocableID, "--db", database])
        waitForConfigurationRefresh()
        try rejected("revoked key", 401, "unauthorized") {
            try revocableClient.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example"}"#)
        }
        let limited = try SesameCLI.succeed(["apikey", "create", "--db", database, "--name", "challenges only", "--scope", "challenges.write"])
        let limitedSecret = try #require(limited["secret"] as? String)
        let limitedClient = HTTPClient(port: server.port, key: limitedSecret)
        try rejected("key without project.write", 403, "forbidden") {
            try limitedClient.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example"}"#)
        }
        try rejected("key without project.read", 403, "forbidden") { try limitedClient.get("/api/v1/project/platforms") }
        try rejected("key without project.write, DELETE", 403, "forbidden") {
            try limitedClient.delete("/api/v1/project/platforms/\(try client.platforms().ids[0])")
        }
        #expect(try limitedClient.post("/api/v1/challenges", #"{"purpose":"x"}"#).status == 201, "the scope it has works")

        // IDs that name nothing.
        let longID = String(repeating: "a", count: 300)
        for id in ["x", longID, "%E2%9C%93%F0%9F%94%91", "../../etc", "..%2F..%2Fetc", "%2e%2e", "%00", "a%20b", "' OR 1=1 --"
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!] {
            try rejected("DELETE platform \(id.prefix(30))", 404) { try client.delete("/api/v1/project/platforms/\(id)") }
        }
        try rejected("consume an unknown challenge", 410, "expired") { try client.post("/api/v1/challenges/\(longID)/consume", #"{"purpose":"x"}"#) }

        // Platform fields.
        let badPlatforms = [
            #"{"type":"web"}"#,
            #"{"type":"web","hostname":""}"#,
            #"{"type":"web","hostname":"not a host!"}"#,
            #"{"type":"web","hostname":"https://a.example"}"#,
            #"{"type":"web","hostname":"\#(String(repeating: "a", count: 64)).example"}"#,
            #"{"type":"web","hostname":"*.com"}"#,
            #"{"type":"android","packageName":"com.example.app"}"#,
            #"{"type":"android","packageName":"com.example.app","sha256Fingerprints":[]}"#,
            #"{"type":"android","packageName":"com.example.app","sha256Fingerprints":["zz"]}"#,
            #"{"type":"android","packageName":"noDots","sha256Fingerprints":["\#(Fixtures.fingerprint)"]}"#,
            #"{"type":"apple","teamId":"short","bundleId":"com.example.app"}"#,
            #"{"type":"apple","teamId":"ABCDE12345"}"#,
            #"{"type":"apple","teamId":"ABCDE12345","bundleId":"bad bundle"}"#,
            #"{"type":"windows","hostname":"a.example"}"#,
        ]
        for body in badPlatforms {
            try rejected("bad platform \(body)", 400, "invalid_argument") { try client.post("/api/v1/project/platforms", body) }
        }
        for name in ["", "   ", String(repeating: "n", count: 129), "nul\\u0000byte", "tab\\tinside", "bell\\u0007"] {
            try rejected("bad platform name \(name.prefix(20))", 400, "invalid_argument") {
                try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"named.example","name":"\#(name)"}"#)
            }
        }
        let relyingPartyBefore = try client.get("/api/v1/project").text
        try rejected("relying party name with NUL", 400, "invalid_argument") {
            try client.request("PUT", "/api/v1/project/relying-party", body: Array(#"{"id":"example.com","name":"a\u0000b"}"#.utf8))
        }
        #expect(try client.get("/api/v1/project").text == relyingPartyBefore, "the relying party changed")
        try rejected("wrong field type", 400, "invalid_json") { try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":5}"#) }
        try rejected("bad relying party", 400, "invalid_argument") { try client.request("PUT", "/api/v1/project/relying-party", body: Array(#"{"id":"not a host"}"#.utf8)) }
        try rejected("bad challenge purpose", 400, "invalid_argument") { try client.post("/api/v1/challenges", #"{"purpose":"no spaces"}"#) }
        try rejected("bad challenge lifetime", 400, "invalid_argument") { try client.post("/api/v1/challenges", #"{"purpose":"x","ttlSeconds":0}"#) }
        // A lifetime that is not a whole number of seconds, or beyond any integer, is refused before the domain sees it.
        for ttl in ["1e300", "-1e300", "123456789012345678901234567890123456789", "1.5"] {
            try rejected("challenge lifetime \(ttl)", 400, "invalid_argument") {
                try client.post("/api/v1/challenges", #"{"purpose":"x","ttlSeconds":\#(ttl)}"#)
            }
        }

        // A client that sends half a request and stalls is disconnected after --connection-timeout 1.
        for partial in [
            "POST /api/v1/challenges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"purp",
            "GET /health HTTP/1.1\r\nHost: x\r\nX-Half: ",
        ] {
            let connection = try TCPConnection(port: server.port, receiveTimeout: 6)
            let start = Date()
            try connection.send(partial)
            let closed = connection.waitForClose()
            let elapsed = Date().timeIntervalSince(start)
            print("[integration] stalled client (\(partial.count) bytes sent) closed by the server after \(String(format: "%.2f", elapsed)) s")
            #expect(closed, "the server kept a stalled connection open past 6 s")
            #expect(elapsed < 5, "closed only after \(elapsed) s")
            #expect(!String(decoding: connection.received, as: UTF8.self).contains(" 5"), "\(String(decoding: connection.received, as: UTF8.self))")
        }
        // The server still answers afterwards, and nothing was written.
        #expect(try client.get("/health").status == 200)
        #expect(try client.platforms().body == baseline)
    }

    @Test("the management API refuses bad input on PostgreSQL too")
    func postgres() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let server = try ServerProcess.start(database: database)
        defer { server.kill() }
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port, key: key)
        let baseline = try client.platforms().body
        func rejected(_ label: String, _ status: Int, _ code: String? = nil, _ request: () throws -> HTTPResult,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
            try Self.expectRejected(label, client, baseline: baseline, status: status, code: code, request, sourceLocation: sourceLocation)
        }
        try rejected("oversized body", 413, "payload_too_large") {
            try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a.example","name":"\#(String(repeating: "b", count: 70_000))"}"#)
        }
        try rejected("malformed JSON", 400, "invalid_json") { try client.post("/api/v1/project/platforms", "{nope") }
        try rejected("text/plain", 415, "unsupported_media_type") {
            try client.request("POST", "/api/v1/project/platforms", body: Array("{}".utf8), contentType: "text/plain")
        }
        try rejected("bad key", 401, "unauthorized") { try HTTPClient(port: server.port, key: "sesame_sk_nope").get("/api/v1/project/platforms") }
        try rejected("wrong method", 405, "method_not_allowed") { try client.request("PUT", "/api/v1/challenges", body: Array("{}".utf8)) }
        for id in ["x", String(repeating: "z", count: 300), "%E2%9C%93", "../../etc"] {
            try rejected("DELETE platform \(id.prefix(20))", 404) { try client.delete("/api/v1/project/platforms/\(id)") }
        }
        try rejected("bad hostname", 400, "invalid_argument") { try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"a..b"}"#) }
        try rejected("bad fingerprint", 400, "invalid_argument") {
            try client.post("/api/v1/project/platforms", #"{"type":"android","packageName":"com.a.b","sha256Fingerprints":["AB:CD"]}"#)
        }
    }
}

enum Fixtures {
    /// A well-formed SHA-256 fingerprint, as Android tools print it.
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
}
