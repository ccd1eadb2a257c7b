import Foundation
import SesameTestSupport
import Testing

/// The hosted setup page at `/app/account/passkey` in real headless Chromium with a CDP virtual authenticator, and its
/// passkeys on the hand-off page (`Tests/Browser/setup_test.py`), against a live `sesame serve` on a first start.
@Suite struct SetupPageBrowserTests {

    @Test("create an ID, sign out and in, add a passkey; hand-off unlinked, link: true, wrong identity, Create your ID there; upgradeToPasskey; Authsignal sign-up and sign-in",
          arguments: Backend.allCases)
    func setup(backend: Backend) throws {
        let world = try PartnerServer(sqlite: backend == .sqlite)
        defer { world.stop() }
        let server = world.server
        let tenantSecret = try #require(try SesameCLI.succeed(["authsignal", "secret", "create"] + world.db)["secret"] as? String)

        let screenshots = "setup-\(backend.rawValue)"
        var environment = world.environment(screenshots: screenshots)
        environment["SESAME_BACKEND"] = backend.rawValue
        environment["SESAME_AUTHSIGNAL_SECRET"] = tenantSecret
        let run = try BrowserTools.run("setup_test.py", environment: environment)
        let output = run.standardOutput + run.standardError
        #expect(run.status == 0, "setup page on \(backend.rawValue):\n\(output)\nserver:\n\(server.stderr.suffix(3000))")
        let summary = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary == "13 passed, 0 failed", "\(output)")
        print("setup page in Chromium on \(backend.rawValue): \(summary)")
        for line in run.standardOutput.split(separator: "\n") where line.contains("conditionalCreate=") { print(line) }

        for stage in ["1-signed-out", "2-created", "3-signed-in", "4-two-passkeys", "5-handoff-unlinked", "6-wrong-identity", "7-upgrade", "8-authsignal", "9-handoff-create"] {
            let path = BrowserTools.screenshots.appendingPathComponent(screenshots).appendingPathComponent("setup-\(backend.rawValue)-\(stage).png").path
            let bytes = FileManager.default.contents(atPath: path) ?? Data()
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && bytes.count > 5_000, "\(path): \(bytes.count) bytes")
        }
        // The request log saw the setup calls and kept the session secrets and request IDs out.
        let log = server.stderr
        #expect(log.contains(#""route":"/app/api/id""#) && log.contains(#""route":"/app/api/sign-in""#), "\(log.suffix(2000))")
        #expect(!log.contains("sesame_ss_") && !log.contains("req_") && !log.contains("sesame_app_session"), "\(log.suffix(2000))")
    }
}
