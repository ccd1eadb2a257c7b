import Foundation
import SesameClient
import SesameCore
import SesameStore
import SesameTestSupport
import Testing

/// `sesame project policy show|set|reset`: the policy's JSON on stdout, refusals with their exit codes, and a change
/// made by the CLI seen by a running server's next registration.
@Suite struct PolicyCommandTests {
    static let defaultJSON = #"{"acceptNoneAttestation":true,"acceptSelfAttestation":true,"allowedAAGUIDs":[],"deniedAAGUIDs":[],"#
        + #""minimumCertificationLevel":null,"userVerificationMethods":[]}"#

    @Test("show, set with flags or a file, and reset; the output reads back with --file")
    func setShowReset() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let db = ["--db", "sqlite:\(folder.path)/sesame.db"]
        try SesameCLI.succeed(["project", "create", "--name", "Shop", "--rp-id", "shop.example"] + db)
        let shown = try SesameCLI.run(["project", "policy", "show"] + db)
        #expect(shown.status == 0 && shown.stdout == Self.defaultJSON + "\n", "\(shown.stdout)\(shown.stderr)")

        let set = try SesameCLI.succeed(["project", "policy", "set", "--none", "refuse", "--self", "refuse",
                                         "--allow-aaguid", "CB69481E-8FF7-4039-93EC-0A2729A154A8", "--allow-aaguid", "5e5a4e30-0000-4000-8000-000000000001",
                                         "--minimum-certification", "FIDO_CERTIFIED_L2",
                                         "--user-verification-method", "fingerprint_internal"] + db)
        #expect(set["acceptNoneAttestation"] as? Bool == false && set["acceptSelfAttestation"] as? Bool == false)
        #expect(set["allowedAAGUIDs"] as? [String] == ["5e5a4e30-0000-4000-8000-000000000001", "cb69481e-8ff7-4039-93ec-0a2729a154a8"])
        #expect(set["minimumCertificationLevel"] as? String == "FIDO_CERTIFIED_L2")
        #expect(set["userVerificationMethods"] as? [String] == ["fingerprint_internal"])
        let after = try SesameCLI.run(["project", "policy", "show"] + db).stdout
        #expect(try SesameCLI.succeed(["project", "policy", "show"] + db) as NSDictionary == set as NSDictionary)

        // What show printed is a policy file; flags given with --file replace its members.
        let file = folder.path + "/policy.json"
        try Data(after.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try SesameCLI.succeed(["project", "policy", "set", "--file", file, "--minimum-certification", "none",
                                              "--none", "accept"] + db)
        #expect(fromFile["minimumCertificationLevel"] is NSNull && fromFile["acceptNoneAttestation"] as? Bool == true)
        #expect(fromFile["acceptSelfAttestation"] as? Bool == false && (fromFile["allowedAAGUIDs"] as? [String])?.count == 2)

        let reset = try SesameCLI.run(["project", "policy", "reset"] + db)
        #expect(reset.status == 0 && reset.stdout == Self.defaultJSON + "\n")
        #expect(try SesameCLI.run(["project", "policy", "show"] + db).stdout == Self.defaultJSON + "\n")
        let help = try SesameCLI.run(["project", "policy", "--help"])
        #expect(help.status == 0 && help.stdout.contains("FIDO_CERTIFIED_L3plus") && help.stdout.contains("fingerprint_internal"))
    }

    @Test("a malformed policy file, bad flags and an unknown project are refused with a clear message and nothing is stored")
    func refusals() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let db = ["--db", "sqlite:\(folder.path)/sesame.db"]
        try SesameCLI.succeed(["project", "create", "--name", "Shop", "--rp-id", "shop.example"] + db)
        func refused(_ arguments: [String], _ status: Int32, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let outcome = try SesameCLI.run(["project", "policy"] + arguments + db)
            #expect(outcome.status == status && outcome.stderr.contains(text) && outcome.stdout.isEmpty,
                    "\(arguments): \(outcome.status) \(outcome.stderr)", sourceLocation: sourceLocation)
        }
        let files: [(String, String)] = [
            ("{\"acceptNoneAttestation\": false", "not one JSON object"),
            (#"{"acceptNone": false}"#, #"unknown member "acceptNone""#),
            (#"{"allowedAAGUIDs": ["yubikey"]}"#, #"allowedAAGUIDs: "yubikey" is not an AAGUID"#),
            (#"{"minimumCertificationLevel": "L9"}"#, "minimumCertificationLevel must be null or one of"),
            (#"{"userVerificationMethods": "fingerprint_internal"}"#, "userVerificationMethods must be an array of strings"),
        ]
        for (index, (text, message)) in files.enumerated() {
            let path = folder.path + "/bad-\(index).json"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try refused(["set", "--file", path], 2, "policy file \(path): attestation policy: \(message)")
        }
        try refused(["set", "--file", folder.path + "/missing.json"], 2, "cannot read policy file")
        try refused(["set", "--none", "maybe"], 2, "--none must be accept or refuse")
        try refused(["set", "--minimum-certification", "L2"], 2, "--minimum-certification must be none or one of")
        try refused(["set"], 2, "set needs --file or a flag")
        try refused(["set", "--allow-aaguid", "not-a-uuid"], 1, "invalid_argument: allowedAAGUIDs: \"not-a-uuid\" is not an AAGUID")
        try refused(["set", "--allow-aaguid", "5e5a4e30-0000-4000-8000-000000000001", "--deny-aaguid", "5E5A4E30-0000-4000-8000-000000000001"],
                    1, "both allowed and denied")
        try refused(["set", "--user-verification-method", "retina_internal"], 1, "invalid_argument")
        try refused(["set", "--project", "nope", "--none", "refuse"], 1, "not_found")
        try refused(["set", "--bogus", "x"], 2, "unknown flag --bogus")
        try refused(["explain"], 2, "unknown command 'project policy explain'")
        #expect(try SesameCLI.run(["project", "policy", "show"] + db).stdout == Self.defaultJSON + "\n", "nothing was stored")
    }

    @Test("a stored policy that no longer reads is not shown as the default: show exits 1 naming it; set repairs it")
    func unreadable() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let db = ["--db", database]
        let project = try #require(try SesameCLI.succeed(["project", "create", "--name", "Shop", "--rp-id", "shop.example"] + db)["id"] as? String)
        try Store.open(database).projects.setAttestationPolicy(projectID: project, json: #"{"acceptNoneAttestation":"perhaps"}"#, at: Date())
        let shown = try SesameCLI.run(["project", "policy", "show"] + db)
        #expect(shown.status == 1 && shown.stdout.isEmpty && shown.stderr.contains("does not read; set it again"), "\(shown.stderr)")
        try SesameCLI.succeed(["project", "policy", "set", "--none", "refuse"] + db)
        #expect(try SesameCLI.succeed(["project", "policy", "show"] + db)["acceptNoneAttestation"] as? Bool == false)
    }

    @Test("a policy set by the CLI reaches a running server on PostgreSQL: once its refresh interval passed the next registration asks for direct and a none attestation is refused",
          .timeLimit(.minutes(3)))
    func reachesServer() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let server = try ServerProcess.start(database: database)
        defer { server.kill() }
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port, key: key)
        try SesameCLI.succeed(["platform", "add", "--db", database, "--web", "localhost"])
        let origin = "http://localhost:3000"
        let project = [("X-Appwrite-Project", "default"), ("Origin", origin)]
        let signUp = try client.post("/v1/account", #"{"userId":"unique()","email":"p@example.org","password":"password123"}"#, headers: project)
        #expect(signUp.status == 201, "\(signUp)")
        let signIn = try client.post("/v1/account/sessions/email", #"{"email":"p@example.org","password":"password123"}"#, headers: project)
        let cookie = try #require(signIn.headers.first { $0.0.lowercased() == "set-cookie" && $0.1.hasPrefix("a_session_default=") })
        let session = project + [("Cookie", String(cookie.1.prefix { $0 != ";" }))]
        func start() throws -> HTTPResult {
            let started = try client.post("/v1/account/passkeys", "{}", headers: session)
            #expect(started.status == 201, "\(started)")
            return started
        }
        #expect((try start().json["publicKey"] as? [String: Any])?["attestation"] as? String == "none")

        try SesameCLI.succeed(["project", "policy", "set", "--db", database, "--none", "refuse"])
        waitForConfigurationRefresh()
        let started = try start()
        let options = try #require(started.json["publicKey"] as? [String: Any])
        #expect(options["attestation"] as? String == "direct", "a registration after the refresh interval sees the change: \(options)")
        // A synced passkey provider answers with none attestation whatever was asked: refused, generically.
        let request = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: JSONSerialization.data(withJSONObject: options))
        let response = try SoftwareAuthenticator().create(request, origin: origin)
        let passkeyID = try #require(started.json["passkeyId"] as? String)
        let body = try JSONSerialization.data(withJSONObject: ["credential": try JSONSerialization.jsonObject(with: JSONEncoder().encode(response))])
        let finished = try client.request("PUT", "/v1/account/passkeys/\(passkeyID)/verification", headers: session + [("Content-Type", "application/json")],
                                          body: Array(body))
        #expect(finished.status == 401 && finished.json["type"] as? String == "user_passkey_invalid", "\(finished)")
        #expect(!finished.text.contains("attestation"), "no reason reaches the client: \(finished.text)")
        // The server counts a request once it is answered, so the count may trail the answer by a moment.
        let series = #"ceremony="registration",outcome="failure",reason="attestation_none_refused"} 1"#
        var metrics = ""
        for _ in 0..<50 {
            metrics = try client.get("/metrics").text
            if metrics.contains(series) { break }
            usleep(40_000)
        }
        #expect(metrics.contains(series), "\(metrics)")
    }
}
