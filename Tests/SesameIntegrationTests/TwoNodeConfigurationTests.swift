import Foundation
import SesameTestSupport
import Testing

/// The configuration cache on two nodes of one PostgreSQL database: what node A changes, node B serves within a second.
@Suite("Configuration changes reach every node")
struct TwoNodeConfigurationTests {
    /// Polls `check` on node B until it holds, for at most a second after the change on node A returned.
    static func withinASecond(_ what: String, _ check: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(1)
        while true {
            if try check() { return }
            guard Date() < deadline else { throw IntegrationFailure("\(what): not seen on node B within a second") }
            usleep(20_000)
        }
    }

    @Test("a platform added and a relying party changed on node A, and a key revoked by the CLI, take effect on node B within a second")
    func changesReachNodeB() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let nodeA = try ServerProcess.start(database: database)
        defer { nodeA.kill() }
        let nodeB = try ServerProcess.start(database: database)
        defer { nodeB.kill() }
        let key = try #require(nodeA.adminKey)
        let a = HTTPClient(port: nodeA.port, key: key), b = HTTPClient(port: nodeB.port, key: key)

        // Node B reads the project (and so caches it) before each change.
        let before = try b.get("/api/v1/project")
        #expect(before.status == 200, "\(before)")
        let originsBefore = before.json["origins"] as? [String] ?? []
        #expect(!originsBefore.contains("https://shop.example.com"))

        // A relying party and a platform changed on A.
        #expect(try a.request("PUT", "/api/v1/project/relying-party", body: Array(#"{"id":"example.com","name":"Shop"}"#.utf8)).status == 200)
        try Self.withinASecond("the relying party") { try b.get("/api/v1/project").json["relyingPartyId"] as? String == "example.com" }
        #expect(try a.post("/api/v1/project/platforms", #"{"type":"web","hostname":"shop.example.com"}"#).status == 201)
        try Self.withinASecond("the web platform") {
            (try b.get("/api/v1/project").json["origins"] as? [String] ?? []).contains("https://shop.example.com")
        }
        // A ceremony on B runs under the new relying party at once.
        let start = try b.request("POST", "/v1/account/tokens/passkey", headers: [
            ("X-Appwrite-Project", "default"), ("X-Appwrite-Key", key), ("Origin", "https://shop.example.com"), ("Authorization", ""),
        ], body: Array("{}".utf8))
        #expect(start.status == 201, "\(start)")
        #expect((start.json["publicKey"] as? [String: Any])?["rpId"] as? String == "example.com", "\(start)")

        // A second key, used on B (cached there), then revoked from the CLI: B refuses it within a second.
        let created = try SesameCLI.succeed(["apikey", "create", "--db", database, "--name", "temporary"])
        let secret = try #require(created["secret"] as? String), keyID = try #require(created["id"] as? String)
        let temporary = HTTPClient(port: nodeB.port, key: secret)
        #expect(try temporary.get("/api/v1/project").status == 200)
        // Revoked by the CLI: another process than either node.
        try SesameCLI.succeed(["apikey", "revoke", "--db", database, keyID])
        try Self.withinASecond("the revocation") { try temporary.get("/api/v1/project").status == 401 }
        #expect(try b.get("/api/v1/project").status == 200, "the admin key still works")
    }

    @Test("a partner app approved, a signing key rotated and a partner's API key revoked by the CLI take effect on node B within a second")
    func inlineConfigurationReachesNodeB() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let nodeA = try ServerProcess.start(database: database)
        defer { nodeA.kill() }
        let nodeB = try ServerProcess.start(database: database)
        defer { nodeB.kill() }
        let b = HTTPClient(port: nodeB.port, key: nil)
        func packages() throws -> [String] {
            let links = try b.get("/.well-known/assetlinks.json", headers: [("Host", "localhost")])
            return (links.jsonArray as? [[String: Any]] ?? []).compactMap { ($0["target"] as? [String: Any])?["package_name"] as? String }
        }
        func kids() throws -> [String] {
            (try b.get("/.well-known/jwks.json").json["keys"] as? [[String: Any]] ?? []).compactMap { $0["kid"] as? String }
        }
        let db = ["--db", database]
        let partner = try #require(try SesameCLI.succeed(["partner", "create", "--name", "Ticketz"] + db)["id"] as? String)
        let app = try #require(try SesameCLI.succeed(["partner", "add-app", "--partner", partner, "--android", "com.partner.app",
                                                       "--fingerprint", String(repeating: "AB:", count: 31) + "AB"] + db)["id"] as? String)

        // Node B serves (and so caches) the association file and the JWKS before each change.
        #expect(try !packages().contains("com.partner.app"), "a pending app is not listed")
        let before = try kids()
        #expect(before.count == 1, "the first key, made on first use")
        try SesameCLI.succeed(["partner", "approve-app", "--partner", partner, app] + db)
        try Self.withinASecond("the approved app") { try packages().contains("com.partner.app") }
        let rotated = try #require(try SesameCLI.succeed(["signing-key", "rotate", "--activate-in", "0"] + db)["kid"] as? String)
        #expect(!before.contains(rotated))
        try Self.withinASecond("the new signing key") { try kids().contains(rotated) }

        // A partner's API key, used on B (cached there), then revoked from the CLI: B refuses it within a second.
        let created = try SesameCLI.succeed(["partner", "add-key", "--partner", partner, "--env", "live"] + db)
        let secret = try #require(created["secret"] as? String), keyID = try #require(created["id"] as? String)
        let partnerServer = HTTPClient(port: nodeB.port, key: secret)
        func createSession() throws -> Int { try partnerServer.post("/operations/sdk/create-session", "{}").status }
        #expect(try createSession() == 200)
        try SesameCLI.succeed(["partner", "revoke-key", "--partner", partner, keyID] + db)
        try Self.withinASecond("the revoked partner key") { try createSession() == 401 }
    }
}
