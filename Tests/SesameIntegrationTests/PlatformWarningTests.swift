import Foundation
import Testing

@Suite("sesame platform add --web outside the relying party")
struct PlatformWarningTests {
    @Test("is accepted for CORS with a warning that explains the rule; hosts on the relying party and localhost are not warned about")
    func warning() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let shop = try #require(try SesameCLI.succeed(["project", "create", "--db", database, "--name", "Shop", "--rp-id", "shop.example"])["id"] as? String)
        for host in ["shop.example", "app.shop.example", "*.shop.example", "localhost"] {
            let added = try SesameCLI.run(["platform", "add", "--db", database, "--project", shop, "--web", host])
            #expect(added.status == 0 && added.stderr.isEmpty, "\(host): \(added.stderr)")
        }
        for host in ["partner.example", "shop.example.evil", "myshop.example"] {
            let added = try SesameCLI.run(["platform", "add", "--db", database, "--project", shop, "--web", host])
            #expect(added.status == 0 && added.json["value"] as? String == host, "\(host): \(added.stderr)")
            #expect(added.stderr.contains("warning: web platform \(host) added for CORS only: the relying party ID is shop.example"),
                    "\(host): \(added.stderr)")
            #expect(added.stderr.contains("SecurityError") && added.stderr.contains("sesame project set-rp"))
        }
        // The warning says what the accepted origins say: nothing from those hosts.
        let origins = try SesameCLI.run(["platform", "list", "--db", database, "--project", shop]).stdout
        #expect(origins.contains("partner.example"))
    }
}
