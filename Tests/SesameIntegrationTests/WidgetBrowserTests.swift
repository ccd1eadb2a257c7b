import Foundation
import SesameTestSupport
import Testing

/// The web widget `<botshield-verify>` on a partner page of another origin, in real headless Chromium
/// (`Tests/Browser/widget_test.py`): the inline-passkey frame, the QR path, the fallbacks, the events and return_url.
@Suite struct WidgetBrowserTests {
    @Test("inline frame, QR path, fallback, phone, refusals and return_url from a page on another origin",
          arguments: Backend.allCases)
    func widget(backend: Backend) throws {
        let world = try PartnerServer(sqlite: backend == .sqlite)
        defer { world.stop() }
        let server = world.server
        let run = try BrowserTools.run("widget_test.py", environment: world.environment(screenshots: "widget-\(backend.rawValue)"))
        #expect(run.status == 0, "widget on \(backend.rawValue):\n\(run.standardOutput)\(run.standardError)\nserver:\n\(server.stderr.suffix(3000))")
        #expect(run.standardOutput.split(separator: "\n").last == "8 passed, 0 failed", "\(run.standardOutput)")
        // Request IDs travelled in URLs, fragments and bodies; the request log shows routes and keyed tags only.
        #expect(server.stderr.contains(#""route":"/operations/widget/status""#) && server.stderr.contains(#""route":"/verify/return""#),
                "\(server.stderr.suffix(2000))")
        #expect(!server.stderr.contains("req_"), "\(server.stderr.suffix(2000))")
    }
}
