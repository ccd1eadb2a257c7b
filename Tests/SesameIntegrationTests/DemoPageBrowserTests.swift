import Foundation
import SesameTestSupport
import Testing

/// The demo page at `/` in real headless Chromium with a CDP virtual authenticator, against a live `sesame serve`
/// started as `make run` starts it (first start, bootstrap project): `Tests/Browser/demo_test.py`.
@Suite struct DemoPageBrowserTests {

    @Test("127.0.0.1 hint, sign up, sign out, sign in, reload, autofill, rename, delete, then the deleted passkey is refused and forgotten", arguments: Backend.allCases)
    func demo(backend: Backend) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try backend.makeDatabase(in: folder)
        // The request log stays on: the run also shows that no secret reaches it.
        let server = try ServerProcess.start(database: database, logOff: false)
        defer { server.kill() }
        let url = "http://localhost:\(server.port)/"
        #expect(server.stdout.contains("sesame: demo page: \(url)"))

        let run = try BrowserTools.run("demo_test.py", environment: ["SESAME_URL": url, "SESAME_BACKEND": backend.rawValue])
        let output = run.standardOutput + run.standardError
        #expect(run.status == 0, "demo page on \(backend.rawValue):\n\(output)\nserver stderr:\n\(server.stderr.suffix(3000))")
        let summary = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary == "12 passed, 0 failed", "\(output)")
        print("demo page in Chromium on \(backend.rawValue): \(summary)")

        // Each stage left a PNG screenshot (the script checks it is not blank).
        for stage in ["1-signed-out", "2-signed-up", "3-signed-in", "4-deleted-passkey-refused"] {
            let path = BrowserTools.screenshots.appendingPathComponent("demo-\(backend.rawValue)-\(stage).png").path
            let bytes = FileManager.default.contents(atPath: path) ?? Data()
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) && bytes.count > 5_000, "\(path): \(bytes.count) bytes")
        }
        // The request log saw the whole loop and kept its secrets: no session secret, token or email.
        let log = server.stderr
        #expect(log.contains("/v1/account/tokens/passkey") && log.contains("/v1/account/passkeys/:passkeyId"), "\(log.suffix(2000))")
        #expect(!log.contains("sesame_ss_") && !log.contains("sesame_tk_") && !log.contains("@example.org"))
    }

    @Test("the SDK's fallback WebAuthn JSON helpers agree with Chromium's parseCreationOptionsFromJSON, parseRequestOptionsFromJSON, toJSON")
    func sdkHelpers() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db")
        defer { server.kill() }
        let run = try BrowserTools.run("sdk_test.py", environment: ["SESAME_URL": "http://localhost:\(server.port)/"])
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.split(separator: "\n").last == "3 passed, 0 failed", "\(run.standardOutput)")
    }
}
