import Foundation
import SesameCore
import SesameStore
import Testing

/// `sesame partner …` and `sesame signing-key …`: each verb, its output, and its refusals (exit 1 for a refused
/// operation with the error code on stderr, exit 2 for bad usage).
@Suite struct PartnerCommandTests {
    @Test("partners, keys, apps, webhooks and links through the admin CLI")
    func partnerCommands() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        try SesameCLI.succeed(["project", "create", "--db", database, "--name", "ID", "--rp-id", "id.example"])
        let db = ["--db", database]
        func refused(_ arguments: [String], _ status: Int32, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let outcome = try SesameCLI.run(arguments + db)
            #expect(outcome.status == status && outcome.stderr.contains(text) && outcome.stdout.isEmpty, "\(arguments): \(outcome.stderr)",
                    sourceLocation: sourceLocation)
        }

        let partner = try #require(try SesameCLI.succeed(["partner", "create", "--name", "Ticketz"] + db)["id"] as? String)
        #expect(partner.hasPrefix("org_"))
        #expect(try SesameCLI.run(["partner", "list"] + db).stdout.contains(partner))

        // Keys: the secret once, at creation.
        let key = try SesameCLI.succeed(["partner", "add-key", "--partner", partner, "--env", "test"] + db)
        #expect((key["secret"] as? String)?.hasPrefix("sesame_test_sk_") == true && key["env"] as? String == "test")
        let keyID = try #require(key["id"] as? String)
        let listed = try SesameCLI.run(["partner", "list-keys", "--partner", partner] + db).stdout
        #expect(listed.contains(keyID) && !listed.contains("secret"))
        #expect(try SesameCLI.succeed(["partner", "revoke-key", "--partner", partner, keyID] + db)["revoked"] as? String == keyID)
        try refused(["partner", "revoke-key", "--partner", partner, keyID], 1, "not_found")

        // Apps: pending -> approved -> revoked; other moves refused.
        let ios = try SesameCLI.succeed(["partner", "add-app", "--partner", partner, "--ios", "ABCDE12345", "--bundle-id", "com.partner.app"] + db)
        #expect(ios["state"] as? String == "pending" && ios["app"] as? String == "ABCDE12345.com.partner.app")
        let appID = try #require(ios["id"] as? String)
        #expect(try SesameCLI.succeed(["partner", "approve-app", "--partner", partner, appID] + db)["state"] as? String == "approved")
        try refused(["partner", "approve-app", "--partner", partner, appID], 1, "conflict")
        #expect(try SesameCLI.succeed(["partner", "revoke-app", "--partner", partner, appID] + db)["state"] as? String == "revoked")
        try refused(["partner", "reject-app", "--partner", partner, appID], 1, "conflict")
        try refused(["partner", "approve-app", "--partner", partner, "nope"], 1, "not_found")
        let android = try SesameCLI.succeed(["partner", "add-app", "--partner", partner, "--android", "com.partner.app",
                                             "--fingerprint", String(repeating: "AB:", count: 31) + "AB"] + db)
        #expect(android["platform"] as? String == "android" && android["state"] as? String == "pending")
        try refused(["partner", "add-app", "--partner", partner, "--android", "com.partner.app"], 2, "--fingerprint")
        try refused(["partner", "add-app", "--partner", partner, "--ios", "lowercase!", "--bundle-id", "b"], 1, "invalid_argument")
        #expect(try SesameCLI.run(["partner", "list-apps", "--partner", partner] + db).stdout.split(separator: "\n").count == 2)

        // Webhooks: local addresses only with --allow-local; the secret once.
        try refused(["partner", "add-webhook", "--partner", partner, "--env", "live", "--url", "http://127.0.0.1:9/hook"], 1, "invalid_argument")
        let hook = try SesameCLI.succeed(["partner", "add-webhook", "--partner", partner, "--env", "live", "--url", "http://127.0.0.1:9/hook",
                                          "--allow-local"] + db)
        #expect((hook["secret"] as? String)?.hasPrefix("whsec_") == true && hook["enabled"] as? Bool == true)
        let hookID = try #require(hook["id"] as? String)
        #expect(!(try SesameCLI.run(["partner", "list-webhooks", "--partner", partner] + db).stdout.contains("whsec_")))
        #expect(try SesameCLI.succeed(["partner", "remove-webhook", "--partner", partner, hookID] + db)["removed"] as? String == hookID)
        try refused(["partner", "remove-webhook", "--partner", partner, hookID], 1, "not_found")

        // Links: a person of the project; refs are checked; unlink says whether there was a link.
        let sesame = Sesame(store: try Store.open(database), masterKeys: try TestMasterKey.keyring(for: database))
        let project = try #require(try sesame.projects.list().first)
        let user = try sesame.users.create(projectID: project.id, id: "alice", email: nil, password: nil, name: nil)
        let link = ["partner", "link", "--partner", partner, "--env", "live", "--ref", "acct_1", "--user"]
        #expect(try SesameCLI.succeed(link + [user.id] + db)["ref"] as? String == "acct_1")
        try refused(link + [user.id], 1, "conflict")
        try refused(["partner", "link", "--partner", partner, "--env", "live", "--ref", "acct_2", "--user", "nobody"], 1, "not_found")
        try refused(["partner", "link", "--partner", partner, "--env", "live", "--ref", "a@b.example", "--user", user.id], 1, "invalid_argument")
        let unlink = ["partner", "unlink", "--partner", partner, "--env", "live", "--ref", "acct_1"]
        #expect(try SesameCLI.succeed(unlink + db)["unlinked"] as? Bool == true)
        #expect(try SesameCLI.succeed(unlink + db)["unlinked"] as? Bool == false)

        // Usage.
        try refused(["partner"], 2, "missing command")
        try refused(["partner", "frobnicate"], 2, "unknown command")
        try refused(["partner", "add-key", "--partner", partner, "--env", "prod"], 2, "--env is live or test")
        try refused(["partner", "add-key", "--env", "live"], 2, "--partner")
        try refused(["partner", "create", "--name", "X", "--bogus", "1"], 2, "--bogus")
        try refused(["partner", "add-key", "--partner", "org_nobody", "--env", "live"], 1, "not_found")
    }

    @Test("return origins and the widget's site keys through the admin CLI, with their refusals")
    func webCommands() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let db = ["--db", "sqlite:\(folder.path)/sesame.db"]
        try SesameCLI.succeed(["project", "create", "--name", "ID", "--rp-id", "id.example"] + db)
        func refused(_ arguments: [String], _ status: Int32, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let outcome = try SesameCLI.run(arguments + db)
            #expect(outcome.status == status && outcome.stderr.contains(text) && outcome.stdout.isEmpty, "\(arguments): \(outcome.stderr)",
                    sourceLocation: sourceLocation)
        }
        let partner = try #require(try SesameCLI.succeed(["partner", "create", "--name", "Ticketz"] + db)["id"] as? String)

        // Return origins: canonical form; https, or http on localhost / 127.0.0.1 only.
        #expect(try SesameCLI.succeed(["partner", "add-return-origin", "--partner", partner, "HTTPS://Shop.Example/"] + db)["returnOrigin"] as? String
                == "https://shop.example")
        try SesameCLI.succeed(["partner", "add-return-origin", "--partner", partner, "http://localhost:3000"] + db)
        #expect(try SesameCLI.run(["partner", "list-return-origins", "--partner", partner] + db).stdout.split(separator: "\n").count == 2)
        for origin in ["http://shop.example", "https://shop.example/path", "shop.example"] {
            try refused(["partner", "add-return-origin", "--partner", partner, origin], 1, "invalid_argument")
        }
        try refused(["partner", "add-return-origin", "--partner", "org_nope", "https://shop.example"], 1, "not_found")
        try refused(["partner", "add-return-origin", "--partner", partner], 2, "missing ORIGIN")
        #expect(try SesameCLI.succeed(["partner", "remove-return-origin", "--partner", partner, "https://shop.example"] + db)["removed"] != nil)
        try refused(["partner", "remove-return-origin", "--partner", partner, "https://shop.example"], 1, "not_found")

        // Site keys: public, so listed in full; origins replaced; revoked for good.
        let key = try SesameCLI.succeed(["partner", "add-site-key", "--partner", partner, "--env", "live", "--origin", "https://shop.example",
                                         "--origin", "http://127.0.0.1:5000"] + db)
        let siteKey = try #require(key["siteKey"] as? String)
        #expect(siteKey.hasPrefix("pk_live_") && key["origins"] as? [String] == ["https://shop.example", "http://127.0.0.1:5000"])
        let testKey = try SesameCLI.succeed(["partner", "add-site-key", "--partner", partner, "--env", "test", "--origin", "https://shop.example"] + db)
        #expect((testKey["siteKey"] as? String)?.hasPrefix("pk_test_") == true)
        #expect(try SesameCLI.run(["partner", "list-site-keys", "--partner", partner] + db).stdout.contains(siteKey))
        let updated = try SesameCLI.succeed(["partner", "set-site-key-origins", "--partner", partner, siteKey, "--origin", "https://m.shop.example"] + db)
        #expect(updated["origins"] as? [String] == ["https://m.shop.example"])
        try refused(["partner", "add-site-key", "--partner", partner, "--env", "live"], 1, "invalid_argument")
        try refused(["partner", "add-site-key", "--partner", partner, "--env", "live", "--origin", "http://shop.example"], 1, "invalid_argument")
        try refused(["partner", "add-site-key", "--partner", partner, "--env", "prod", "--origin", "https://shop.example"], 2, "--env")
        try refused(["partner", "set-site-key-origins", "--partner", partner, siteKey, "--origin", "ftp://x"], 1, "invalid_argument")
        #expect(try SesameCLI.succeed(["partner", "revoke-site-key", "--partner", partner, siteKey] + db)["revoked"] as? String == siteKey)
        try refused(["partner", "revoke-site-key", "--partner", partner, siteKey], 1, "not_found")
        try refused(["partner", "set-site-key-origins", "--partner", partner, siteKey, "--origin", "https://shop.example"], 1, "not_found")
        #expect(try SesameCLI.run(["partner", "list-site-keys", "--partner", partner] + db).stdout.contains(#""revoked":true"#))
    }

    @Test("signing keys: the first on first use, rotation published before it signs, or at once with --activate-in 0")
    func signingKeys() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let db = ["--db", "sqlite:\(folder.path)/sesame.db"]
        func keys() throws -> [[String: Any]] {
            try SesameCLI.run(["signing-key", "list"] + db).stdout.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
        }
        let first = try keys()
        #expect(first.count == 1 && first[0]["generation"] as? Int == 1 && first[0]["signing"] as? Bool == true)
        let next = try SesameCLI.succeed(["signing-key", "rotate"] + db)
        #expect(next["generation"] as? Int == 2 && next["signing"] as? Bool == false)
        #expect(try keys().map { $0["signing"] as? Bool } == [true, false])
        let now = try SesameCLI.succeed(["signing-key", "rotate", "--activate-in", "0"] + db)
        #expect(now["generation"] as? Int == 3 && now["signing"] as? Bool == true)
        #expect(try keys().map { $0["signing"] as? Bool } == [false, false, true])
        let kids = try keys().compactMap { $0["kid"] as? String }
        #expect(Set(kids).count == 3 && kids.allSatisfy { $0.count == 43 })
        let bad = try SesameCLI.run(["signing-key", "rotate", "--activate-in", "-5"] + db)
        #expect(bad.status == 2 && bad.stderr.contains("--activate-in"))
    }

    @Test("serve refuses bad inline-verification, durability and configuration-refresh settings with exit 2 before it starts")
    func serveSettings() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let base = ["serve", "--db", "sqlite:\(folder.path)/sesame.db", "--listen", "127.0.0.1:0"]
        for (flags, text) in [(["--webhooks", "maybe"], "--webhooks"), (["--public-url", "ftp://api.example"], "URL"),
                              (["--app-url", "https://app.example/?q=1"], "URL"), (["--inline-ip-limit", "0"], "--inline-ip-limit"),
                              (["--durability", "sometimes"], "--durability must be full or process"),
                              (["--config-refresh", "1001"], "--config-refresh must be at most 1000"),
                              (["--config-refresh", "-1"], "--config-refresh must be 0 or a positive integer"),
                              (["--config-refresh", "0.5"], "--config-refresh must be 0 or a positive integer")] {
            let outcome = try SesameCLI.run(base + flags)
            #expect(outcome.status == 2 && outcome.stderr.contains(text) && !outcome.stdout.contains("listening"), "\(flags): \(outcome.stderr)")
        }
    }
}
