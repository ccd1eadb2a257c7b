import Foundation
import SesameCore
import SesameStore
import SesameTestSupport
import Testing

/// The official `authsignal` Python SDK (pinned, with `cryptography` for the suite's software authenticator), in the
/// build folder's virtual environment shared with the other Python suites (``PythonEnvironment``).
enum AuthsignalSDK {
    static let version = "4.1.0"
    static let requirements = ["authsignal==\(version)", "cryptography==50.0.2"]
    static let suite = PythonEnvironment.repository.appendingPathComponent("Tests/AuthsignalCompat/run.py")

    /// The interpreter once the pinned SDK is installed; any failure fails the tests that need it (nothing skips).
    static let python: Result<String, IntegrationFailure> = PythonEnvironment.prepare(requirements: requirements)
        .mapError { IntegrationFailure($0.description) }
}

@Suite struct AuthsignalCompatTests {

    /// The Android app the suite's Android-shaped requests come from (its signing certificate's SHA-256).
    static let androidFingerprint = (0..<32).map { String(format: "%02X", ($0 * 7 + 3) & 0xFF) }.joined(separator: ":")

    /// A genuine track token of the live server's tenant, minted eleven minutes ago (the domain over the server's own
    /// database and master key, with its clock set back), so it has expired by the time the suite sends it.
    static func expiredToken(database: String, projectID: String) throws -> String {
        let clock = ManualClock(Date().addingTimeInterval(-660))
        let sesame = Sesame(store: try Store.open(database), clock: clock, masterKeys: try TestMasterKey.keyring(for: database))
        return try sesame.authsignal.track(project: try sesame.projects.get(projectID), userID: "expired-user", actionCode: "signIn",
                                           input: TrackInput()).token
    }

    @Test("the official Authsignal Python SDK and SDK-shaped client requests drive a live sesame serve (Tests/AuthsignalCompat)",
          arguments: Backend.allCases)
    func pythonSuite(backend: Backend) throws {
        let python = try AuthsignalSDK.python.get()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try backend.makeDatabase(in: folder)
        // The suite's client calls all come from 127.0.0.1, faster than the default 60 per minute.
        let server = try ServerProcess.start(database: database, extra: ["--inline-ip-limit", "5000"], logOff: false)
        defer { _ = server.kill() }
        let project = server.createdProjectID ?? "default"
        try SesameCLI.succeed(["project", "set-rp", "--rp-id", "shop.example", "--db", database])
        try SesameCLI.succeed(["platform", "add", "--web", "shop.example", "--db", database])
        try SesameCLI.succeed(["platform", "add", "--apple", "ABCDE12345", "--bundle-id", "com.example.shop", "--db", database])
        try SesameCLI.succeed(["platform", "add", "--android", "com.example.shop", "--fingerprint", Self.androidFingerprint, "--db", database])
        try SesameCLI.succeed(["authsignal", "action", "set-outcome", "--action", "closeAccount", "--state", "BLOCK", "--db", database])
        let created = try SesameCLI.succeed(["authsignal", "secret", "create", "--public-url", "http://127.0.0.1:\(server.port)", "--db", database])
        let secret = try #require(created["secret"] as? String)
        #expect(created["tenantId"] as? String == project)
        #expect(created["apiUrl"] as? String == "http://127.0.0.1:\(server.port)/authsignal/v1")
        // A revoked secret must fail (within the server's configuration refresh, waited out below).
        let revoked = try SesameCLI.succeed(["authsignal", "secret", "create", "--db", database])
        let revokedID = try #require(try SesameCLI.run(["authsignal", "secret", "list", "--db", database]).stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.last?["id"] as? String)
        try SesameCLI.succeed(["authsignal", "secret", "revoke", revokedID, "--db", database])
        waitForConfigurationRefresh()

        var environment = ProcessInfo.processInfo.environment
        environment["AUTHSIGNAL_API_URL"] = try #require(created["apiUrl"] as? String)
        environment["AUTHSIGNAL_API_SECRET"] = secret
        environment["SESAME_REVOKED_SECRET"] = try #require(revoked["secret"] as? String)
        environment["SESAME_TENANT"] = project
        environment["SESAME_EXPIRED_TOKEN"] = try Self.expiredToken(database: database, projectID: project)
        environment["SESAME_ANDROID_FINGERPRINT"] = Self.androidFingerprint
        environment["NO_PROXY"] = "127.0.0.1,localhost"
        environment["no_proxy"] = "127.0.0.1,localhost"
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let seenFile = folder.path + "/seen.json"
        environment["SESAME_SEEN_FILE"] = seenFile
        let run = try runProgram(python, [AuthsignalSDK.suite.path], environment: environment, timeout: 300)
        #expect(run.status == 0, "Authsignal compatibility suite on \(backend.rawValue):\n\(run.output)\nserver stderr:\n\(server.stderr)")
        let summary = run.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary.hasSuffix(" passed, 0 failed"), "\(summary)")
        print("Authsignal compatibility suite on \(backend.rawValue): \(summary)")

        // The request log (JSON lines on stderr) names routes and refusal reasons, never a secret, token, challenge,
        // challenge or credential ID, idempotency key or assertion part the suite sent or received.
        // The log is written in batches every 200 ms: SIGTERM makes the server write the rest before it exits.
        server.terminate()
        let log = server.stderr
        #expect(log.contains(#""route":"/authsignal/v1/client/verify/passkey""#), "the face's requests are logged")
        for reason in ["origin_mismatch", "invalid_signature", "unknown_credential", "challenge_expired"] {
            #expect(log.contains(#""reason":"\#(reason)""#), "a refused ceremony logs its reason \(reason)")
        }
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: seenFile))) as? [String])
        #expect(seen.count > 100, "the suite collected what it saw")
        for value in seen + [secret, try #require(revoked["secret"] as? String), "eyJhbGciOiJIUzI1Ni"] {
            #expect(!log.contains(value), "the log holds a secret-ish value (\(value.count) characters)")
        }
    }
}

/// `sesame authsignal ...` on a real database: the secret is printed once, listed without it, revoked; bad input exits
/// with a usage error.
@Suite struct AuthsignalCLITests {
    @Test("secret create, list and revoke; set-outcome and list-outcomes; refusals exit non-zero without a secret")
    func commands() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let project = try #require(try SesameCLI.succeed(["project", "create", "--name", "Shop", "--rp-id", "shop.example", "--db", database])["id"]
            as? String)
        let created = try SesameCLI.succeed(["authsignal", "secret", "create", "--db", database])
        let secret = try #require(created["secret"] as? String)
        #expect(created["tenantId"] as? String == project && created["apiUrl"] as? String == "http://localhost:8080/authsignal/v1")
        let listed = try SesameCLI.run(["authsignal", "secret", "list", "--db", database])
        #expect(listed.status == 0 && !listed.stdout.contains(secret) && listed.stdout.contains(#""revoked":false"#), "\(listed.stdout)")
        let id = try #require(listed.json["id"] as? String)
        try SesameCLI.succeed(["authsignal", "secret", "revoke", id, "--db", database])
        #expect(try SesameCLI.run(["authsignal", "secret", "list", "--db", database]).stdout.contains(#""revoked":true"#))
        let again = try SesameCLI.run(["authsignal", "secret", "revoke", id + "x", "--db", database])
        #expect(again.status == 1 && again.stderr.contains("not_found"), "\(again.stderr)")
        // An API key of the management API is no tenant secret, and revoking it here is refused.
        let apiKey = try SesameCLI.succeed(["apikey", "create", "--name", "ci", "--db", database])
        let keyID = try #require(apiKey["id"] as? String)
        #expect(try SesameCLI.run(["authsignal", "secret", "revoke", keyID, "--db", database]).status == 1)

        try SesameCLI.succeed(["authsignal", "action", "set-outcome", "--action", "closeAccount", "--state", "BLOCK", "--db", database])
        #expect(try SesameCLI.run(["authsignal", "action", "list-outcomes", "--db", database]).stdout.contains(#""state":"BLOCK""#))
        try SesameCLI.succeed(["authsignal", "action", "set-outcome", "--action", "closeAccount", "--state", "default", "--db", database])
        #expect(try SesameCLI.run(["authsignal", "action", "list-outcomes", "--db", database]).stdout.isEmpty)
        #expect(try SesameCLI.run(["authsignal", "action", "set-outcome", "--action", "x", "--state", "MAYBE", "--db", database]).status == 2)
        #expect(try SesameCLI.run(["authsignal", "action", "set-outcome", "--action", "bad action", "--state", "BLOCK", "--db", database]).status == 1)
        #expect(try SesameCLI.run(["authsignal", "secret", "create", "--project", "nope", "--db", database]).status == 1)
        #expect(try SesameCLI.run(["authsignal", "nonsense", "verb", "--db", database]).status == 2)
        #expect(try SesameCLI.run(["authsignal", "--db", database]).status == 2)
    }
}
