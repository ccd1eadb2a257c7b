import Foundation
import SesameTestSupport
import Testing

/// The web widget `<botshield-verify>` on a partner page of another origin, in real headless Chromium
/// (`Tests/Browser/widget_test.py`): the inline-passkey frame, the QR path, the fallbacks, the events and return_url.
@Suite struct WidgetBrowserTests {
    @Test("inline frame, QR path, fallback, phone, refusals and return_url from a page on another origin",
          arguments: HandOffPageBrowserTests.Backend.allCases)
    func widget(backend: HandOffPageBrowserTests.Backend) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = backend == .sqlite ? "sqlite:\(folder.path)/sesame.db" : try PostgresCluster.shared.createDatabase()
        let server = try ServerProcess.start(database: database, listen: "127.0.0.1:\(try HandOffPageBrowserTests.freePort())", logOff: false)
        defer { server.kill() }
        let db = ["--db", database] + TestMasterKey.arguments(for: database)
        let partner = try #require(try SesameCLI.succeed(["partner", "create", "--name", "Ticketz"] + db)["id"] as? String)
        let key = try #require(try SesameCLI.succeed(["partner", "add-key", "--partner", partner, "--env", "test"] + db)["secret"] as? String)

        var environment = ["SESAME_URL": "http://localhost:\(server.port)/", "SESAME_CLI": sesameExecutable.path, "SESAME_DB": database,
                           "SESAME_PARTNER": partner, "SESAME_PARTNER_KEY": key,
                           "SESAME_SCREENSHOTS": BrowserTools.screenshots.appendingPathComponent("widget-\(backend.rawValue)").path]
        if backend == .postgres { environment["SESAME_MASTER_KEY_FILE"] = TestMasterKey.sharedFile }
        let run = try BrowserTools.run("widget_test.py", environment: environment)
        #expect(run.status == 0, "widget on \(backend.rawValue):\n\(run.standardOutput)\(run.standardError)\nserver:\n\(server.stderr.suffix(3000))")
        #expect(run.standardOutput.split(separator: "\n").last == "8 passed, 0 failed", "\(run.standardOutput)")
        // Request IDs travelled in URLs, fragments and bodies; the request log shows routes and keyed tags only.
        #expect(server.stderr.contains(#""route":"/operations/widget/status""#) && server.stderr.contains(#""route":"/verify/return""#),
                "\(server.stderr.suffix(2000))")
        #expect(!server.stderr.contains("req_"), "\(server.stderr.suffix(2000))")
    }
}
