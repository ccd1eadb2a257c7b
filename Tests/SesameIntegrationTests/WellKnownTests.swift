import Foundation
import Testing

@Suite("Well-known files follow the admin CLI on a running server")
struct WellKnownTests {
    @Test("platforms added with `sesame platform add` appear in the three files; an unknown host of several projects is 404")
    func wellKnownFiles() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let server = try ServerProcess.start(database: database)
        defer { server.kill() }
        let client = HTTPClient(port: server.port, key: nil)
        func get(_ path: String, host: String) throws -> HTTPResult { try client.get(path, headers: [("Host", host)]) }

        // Before any platform: empty but valid files.
        let emptyAASA = try get("/.well-known/apple-app-site-association", host: "localhost")
        #expect(emptyAASA.status == 200, "\(emptyAASA)")
        #expect(((emptyAASA.json["webcredentials"] as? [String: Any])?["apps"] as? [String]) == [])

        // The admin CLI writes to the same SQLite database while the server runs.
        let web = try SesameCLI.succeed(["platform", "add", "--db", database, "--web", "login.example.com"])
        #expect(web["type"] as? String == "web")
        try SesameCLI.succeed(["platform", "add", "--db", database, "--android", "com.example.app", "--fingerprint", Fixtures.fingerprint])
        try SesameCLI.succeed(["platform", "add", "--db", database, "--apple", "ABCDE12345", "--bundle-id", "com.example.ios"])
        let usage = try SesameCLI.run(["platform", "add", "--db", database, "--apple", "ABCDE12345"])
        #expect(usage.status == 2, "--apple without --bundle-id is a usage error: \(usage.stderr)")
        waitForConfigurationRefresh()

        // With one project, any host (with or without a port) is served that project's files.
        for host in ["localhost", "localhost:\(server.port)", "127.0.0.1:\(server.port)", "anything.example"] {
            let aasa = try get("/.well-known/apple-app-site-association", host: host)
            #expect(aasa.status == 200, "\(host): \(aasa)")
            #expect(aasa.header("Content-Type")?.hasPrefix("application/json") == true)
            let apps = (aasa.json["webcredentials"] as? [String: Any])?["apps"] as? [String]
            #expect(apps == ["ABCDE12345.com.example.ios"], "\(host): \(aasa)")

            let links = try get("/.well-known/assetlinks.json", host: host)
            #expect(links.status == 200, "\(host): \(links)")
            let statements = links.jsonArray as? [[String: Any]] ?? []
            #expect(statements.count == 1, "\(links)")
            if let statement = statements.first {
                let relations = Set(statement["relation"] as? [String] ?? [])
                #expect(relations == ["delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls"])
                let target = statement["target"] as? [String: Any] ?? [:]
                #expect(target["namespace"] as? String == "android_app")
                #expect(target["package_name"] as? String == "com.example.app")
                #expect(target["sha256_cert_fingerprints"] as? [String] == [Fixtures.fingerprint])
            }

            // No Related Origin Requests: a ceremony accepts no origin outside the relying party's domain, so none is listed.
            let webauthn = try get("/.well-known/webauthn", host: host)
            #expect(webauthn.status == 404, "\(host): \(webauthn)")
        }

        // A second project: hosts now pick the project whose relying party ID they name, and others get 404.
        try SesameCLI.succeed(["project", "create", "--db", database, "--name", "Other", "--rp-id", "other.example"])
        waitForConfigurationRefresh()
        for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json"] {
            let unknown = try get(path, host: "unknown.example")
            #expect(unknown.status == 404, "\(path): \(unknown)")
            #expect(unknown.isErrorShape && unknown.errorCode == "not_found", "\(unknown)")
            let other = try get(path, host: "OTHER.example:443")
            #expect(other.status == 200, "\(path): \(other)")
            #expect(!other.text.contains("example.app") && !other.text.contains("login.example.com"), "\(other)")
        }
        let defaultProject = try get("/.well-known/apple-app-site-association", host: "localhost:\(server.port)")
        #expect(defaultProject.status == 200 && defaultProject.text.contains("ABCDE12345.com.example.ios"), "\(defaultProject)")

        // Removing a platform with the CLI takes it out of the files (once the server's refresh interval has passed).
        let listed = try SesameCLI.run(["platform", "list", "--db", database, "--project", try #require(server.createdProjectID)])
        let apple = listed.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["type"] as? String == "apple" }
        try SesameCLI.succeed(["platform", "remove", try #require(apple?["id"] as? String), "--db", database,
                               "--project", try #require(server.createdProjectID)])
        waitForConfigurationRefresh()
        let after = try get("/.well-known/apple-app-site-association", host: "localhost")
        #expect(((after.json["webcredentials"] as? [String: Any])?["apps"] as? [String]) == [], "\(after)")
    }
}
