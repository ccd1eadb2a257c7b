import Foundation
import SesameCrypto
import SesameStore
import SesameTestSupport
import Testing

/// The official `appwrite` Python SDK (pinned, with `cryptography` for the suite's software authenticator), in a
/// virtual environment inside the build folder.
///
/// Prepared once per test process: when `.build/pyenv` lacks the pinned SDK, it is created with `python3 -m venv`
/// and filled with `pip install` (``PythonEnvironment``). Any failure fails the tests that need it, naming what to
/// install; nothing skips.
enum AppwriteSDK {
    static let version = "27.0.0"
    static let requirements = ["appwrite==\(version)", "cryptography==50.0.2"]
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let suite = repository.appendingPathComponent("Tests/AppwriteCompat/run.py")

    /// The virtual environment's python, once the pinned SDK is installed; shared with the other Python tools (one
    /// environment, prepared under a lock, never cleared).
    static let python: Result<String, IntegrationFailure> = PythonEnvironment.prepare(requirements: requirements)
        .mapError { IntegrationFailure($0.description) }
}

/// Runs a program to completion (at most `timeout` seconds) and returns its exit status and output (stdout, then stderr).
func runProgram(_ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 120) throws
    -> (status: Int32, output: String)
{
    let done = try ChildProcess.run(path, arguments, environment: environment, timeout: timeout)
    return (done.status, done.standardOutput + done.standardError)
}

@Suite struct AppwriteCompatTests {

    /// A session that signed in 11 minutes ago (written straight into the live server's database, since the server's
    /// clock is real), for the 10-minute recent-authentication rule. Returns its secret.
    static func staleSession(database: String, projectID: String) throws -> String {
        let store = try Store.open(database)
        let signedIn = Date().addingTimeInterval(-660)
        try store.users.create(UserRecord(id: "stale-user", projectID: projectID, email: "stale@example.org",
                                          userHandle: SecureRandom.bytes(count: 32), createdAt: signedIn, updatedAt: signedIn))
        let secret = "sesame_ss_" + SecureRandom.bytes(count: 32).map { String(format: "%02x", $0) }.joined()
        try store.sessions.create(SessionRecord(
            id: "stale-session", projectID: projectID, userID: "stale-user", secretHash: Digest.sha256(Array(secret.utf8)),
            provider: "email", factors: ["password"], ip: "127.0.0.1", userAgent: "", createdAt: signedIn, updatedAt: signedIn,
            expiresAt: signedIn.addingTimeInterval(86400)))
        return secret
    }

    @Test("the official Appwrite Python SDK drives a live sesame serve (Tests/AppwriteCompat)", arguments: Backend.allCases)
    func pythonSuite(backend: Backend) throws {
        let python = try AppwriteSDK.python.get()
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try backend.makeDatabase(in: folder)
        let server = try ServerProcess.start(database: database)
        defer { _ = server.kill() }
        let key = try #require(server.adminKey, "the first start prints an admin key")
        // The passkey checks need a relying party with platforms (the bootstrap project has `localhost` already), and a
        // project without any.
        try SesameCLI.succeed(["project", "set-rp", "--rp-id", "shop.example", "--db", database])
        try SesameCLI.succeed(["platform", "add", "--web", "shop.example", "--db", database])
        let bare = try #require(try SesameCLI.succeed(["project", "create", "--name", "Bare", "--rp-id", "bare.example", "--db", database])["id"] as? String)
        waitForConfigurationRefresh()
        let stale = try Self.staleSession(database: database, projectID: server.createdProjectID ?? "default")
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_STALE_SESSION"] = stale
        environment["SESAME_ENDPOINT"] = "http://127.0.0.1:\(server.port)/v1"
        environment["SESAME_PROJECT"] = server.createdProjectID ?? "default"
        environment["SESAME_KEY"] = key
        environment["SESAME_BARE_PROJECT"] = bare
        environment["NO_PROXY"] = "127.0.0.1,localhost"
        environment["no_proxy"] = "127.0.0.1,localhost"
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let run = try runProgram(python, [AppwriteSDK.suite.path], environment: environment, timeout: 300)
        #expect(run.status == 0, "Appwrite compatibility suite on \(backend.rawValue):\n\(run.output)\nserver stderr:\n\(server.stderr)")
        let summary = run.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(summary.hasSuffix(" passed, 0 failed"), "\(summary)")
        print("Appwrite compatibility suite on \(backend.rawValue): \(summary)")
    }
}
