import Foundation
import Testing

@Suite("--dev-no-ip-limits")
struct DevLimitsTests {
    /// Eleven passkey sign-in starts from one address, as the demo page sends them; the statuses.
    static func elevenStarts(_ server: ServerProcess) throws -> [Int] {
        let client = HTTPClient(port: server.port, key: nil)
        let headers = [("X-Appwrite-Project", "default"), ("Origin", "http://localhost:\(server.port)")]
        return try (0..<11).map { _ in try client.post("/v1/account/tokens/passkey", "{}", headers: headers).status }
    }

    @Test("off by default: the 11th sign-in start of the hour from one IP is 429, and nothing warns")
    func defaultOn() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db")
        defer { server.kill() }
        #expect(try Self.elevenStarts(server) == Array(repeating: 201, count: 10) + [429])
        #expect(!server.stdout.contains("WARNING") && !server.stderr.contains("WARNING"))
    }

    @Test("on: no per-IP limit, and a warning on stdout and stderr; SESAME_DEV_NO_IP_LIMITS=1 does the same", arguments: [true, false])
    func switchedOff(byFlag: Bool) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var environment = ProcessInfo.processInfo.environment
        if !byFlag { environment["SESAME_DEV_NO_IP_LIMITS"] = "1" }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db", extra: byFlag ? ["--dev-no-ip-limits"] : [],
                                             environment: environment)
        defer { server.kill() }
        #expect(try Self.elevenStarts(server) == Array(repeating: 201, count: 11))
        for stream in [server.stdout, server.stderr] {
            #expect(stream.contains("WARNING: --dev-no-ip-limits: the per-IP rate limits are OFF"), "\(stream)")
        }
    }
}
