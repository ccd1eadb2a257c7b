import Foundation
import SesameTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The hosted hand-off page at `/verify` in real headless Chromium (`Tests/Browser/handoff_test.py`).
@Suite struct HandOffPageBrowserTests {

    /// A TCP port free on 127.0.0.1 a moment ago: the hosted pages' origin (`--app-url`, by default
    /// `http://localhost:PORT`) must name the port the page is served on, so the server cannot take port 0.
    static func freePort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw IntegrationFailure("socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw IntegrationFailure("bind: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    @Test("linked and unlinked requests confirmed with a passkey, a decline, a finished and an unknown request", arguments: Backend.allCases)
    func handOff(backend: Backend) throws {
        let world = try PartnerServer(sqlite: backend == .sqlite)
        defer { world.stop() }
        let server = world.server
        let run = try BrowserTools.run("handoff_test.py", environment: world.environment(screenshots: "handoff-\(backend.rawValue)"))
        #expect(run.status == 0, "hand-off page on \(backend.rawValue):\n\(run.standardOutput)\(run.standardError)\nserver:\n\(server.stderr.suffix(3000))")
        #expect(run.standardOutput.split(separator: "\n").last == "10 passed, 0 failed", "\(run.standardOutput)")
        // The request IDs travelled in the page's URL; the request log shows the route only, never an ID.
        #expect(server.stderr.contains(#""route":"/verify""#) && !server.stderr.contains("req_"), "\(server.stderr.suffix(2000))")
    }
}
