import Foundation
import SesameCore
import SesameCrypto
import SesameTestSupport
import Testing
import WebAuthn

/// The acceptance test of secrets at rest: a copy of the database without the master key cannot mint a session JWT or
/// a verification token, and the server refuses to start on it; plus the key file SQLite makes, wrong keys, PostgreSQL
/// without a key, and rotation through the command line.
@Suite("master key: the database alone is not enough", .serialized)
struct MasterKeyTests {
    private static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let done = try ChildProcess.run("/usr/bin/sqlite3", [path, sql])
        guard done.status == 0 else { throw IntegrationFailure("sqlite3: \(done.standardError)") }
        return done.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    /// Starts a server that must fail; returns what it printed.
    private static func refusedStart(_ database: String, _ extra: [String] = []) throws -> String {
        let done = try ChildProcess.run(sesameExecutable.path, ["serve", "--db", database, "--listen", "127.0.0.1:0", "--log", "off"] + extra,
                                        environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SESAME_") }, timeout: 30)
        #expect(done.status == 1, "serve should refuse to start: \(done.standardOutput) \(done.standardError)")
        return done.standardError
    }

    @Test("SQLite: the key file is made 0600 beside the database; a copy of the database alone mints nothing and does not start")
    func copiedDatabase() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = try ServerProcess.start(database: "sqlite:./.sesame/sesame.db", workingDirectory: folder.path)
        defer { server.kill() }
        let keyFile = folder.url.appendingPathComponent(".sesame/master.key").path
        #expect(server.stderr.contains("sesame: created master key"), "\(server.stderr)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600, "mode \(String(mode, radix: 8))")
        #expect(try MasterKeyring(keyFile: try String(contentsOfFile: keyFile, encoding: .utf8)).current != nil)

        // A user, a session and a JWT through the real server; a signing key through the admin command.
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port)
        let headers = [("X-Appwrite-Project", "default"), ("X-Appwrite-Key", key)]
        #expect(try client.post("/v1/users", #"{"userId":"alice"}"#, headers: headers).status == 201)
        #expect(try client.post("/v1/users/alice/sessions", "{}", headers: headers).status == 201)
        let jwt = try #require(try client.post("/v1/users/alice/jwts", "{}", headers: headers).json["jwt"] as? String)
        let database = "sqlite:\(folder.path)/.sesame/sesame.db"
        #expect(try SesameCLI.succeed(["signing-key", "list", "--db", database])["kid"] is String)
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: 20) == .exited(0))

        // Copy the database, not the key.
        let copy = try TemporaryFolder()
        defer { copy.remove() }
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.url.appendingPathComponent(".sesame").path)
        where name.hasPrefix("sesame.db") {
            try FileManager.default.copyItem(atPath: "\(folder.path)/.sesame/\(name)", toPath: "\(copy.path)/\(name)")
        }
        let copied = "\(copy.path)/sesame.db"

        // What is stored does not verify as the HS256 key of the JWT the server issued, and is not a private key.
        let parts = jwt.split(separator: ".").map(String.init)
        let signature = try Base64URL.decode(parts[2])
        let storedSecret = Self.bytes(hex: try Self.sqlite3(copied, "SELECT hex(secret) FROM jwt_secrets WHERE project_id = 'default'"))
        #expect(storedSecret.count > 32 && SealedValue.isSealed(storedSecret))
        #expect(HMAC.sha256(key: storedSecret, message: Array("\(parts[0]).\(parts[1])".utf8)) != signature)
        let storedKeys = try Self.sqlite3(copied, "SELECT private_key FROM signing_keys").split(separator: "\n").map(String.init)
        #expect(!storedKeys.isEmpty)
        for stored in storedKeys {
            #expect(stored.hasPrefix(SealedValue.prefix) && !stored.contains("PRIVATE KEY"))
            #expect(throws: CryptoError.invalidKey) { try PrivateKey(pemEncoded: stored) }
        }
        let hashes = try Self.sqlite3(copied, "SELECT sealed FROM deployment_keys")
        #expect(hashes.hasPrefix(SealedValue.prefix))

        // The server refuses the copy without the key, says why, and makes no new key for it.
        let refusal = try Self.refusedStart("sqlite:\(copied)")
        #expect(refusal.contains("sealed under master key") && refusal.contains("does not exist"), "\(refusal)")
        #expect(!refusal.contains("sesame_mk_"), "never prints a key")
        #expect(!FileManager.default.fileExists(atPath: "\(copy.path)/master.key"))
        // Another key is refused too.
        let wrongKey = "\(copy.path)/wrong.key"
        #expect(try SesameCLI.run(["master-key", "generate", "--out", wrongKey]).status == 0)
        let wrong = try Self.refusedStart("sqlite:\(copied)", ["--master-key-file", wrongKey])
        #expect(wrong.contains("wrong master key"), "\(wrong)")
        // With the right key the copy is the deployment again: the JWT still works.
        let restored = try ServerProcess.start(database: "sqlite:\(copied)", extra: ["--master-key-file", keyFile])
        defer { restored.kill() }
        let account = try HTTPClient(port: restored.port).get("/v1/account", headers: [("X-Appwrite-Project", "default"), ("X-Appwrite-JWT", jwt)])
        #expect(account.status == 200, "\(account)")
    }

    @Test("PostgreSQL: serve needs a master key, and says how to make one")
    func postgresNeedsKey() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let refusal = try Self.refusedStart(database)
        #expect(refusal.contains("needs a master key") && refusal.contains("sesame master-key generate"), "\(refusal)")
    }

    @Test("rotation on the command line: the new key first and the old after it, rotate, then the old key is no longer needed")
    func rotation() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let server = try ServerProcess.start(database: database)
        server.send(SIGTERM)
        #expect(server.waitForExit(timeout: 20) == .exited(0))
        _ = try SesameCLI.succeed(["signing-key", "list", "--db", database])
        // A signing key and the token-hash key, sealed under the key the server made.
        let old = try String(contentsOfFile: "\(folder.path)/master.key", encoding: .utf8)
        let oldID = try #require(try MasterKeyring(keyFile: old).current).id
        let newFile = "\(folder.path)/new.key", bothFile = "\(folder.path)/both.key"
        let generated = try SesameCLI.succeed(["master-key", "generate", "--out", newFile])
        let newID = try #require(generated["id"] as? String)
        let new = try String(contentsOfFile: newFile, encoding: .utf8)
        try (new + old).write(toFile: bothFile, atomically: true, encoding: .utf8)

        let before = try SesameCLI.succeed(["master-key", "status", "--db", database, "--master-key-file", bothFile])
        #expect((before["sealedByKey"] as? [String: Int])?.keys.sorted() == [oldID], "\(before)")
        #expect(try SesameCLI.run(["master-key", "rotate", "--db", database, "--master-key-file", newFile]).stderr.contains("wrong master key"))
        let rotated = try SesameCLI.succeed(["master-key", "rotate", "--db", database, "--master-key-file", bothFile])
        #expect((rotated["resealed"] as? Int ?? 0) >= 2 && rotated["current"] as? String == newID, "\(rotated)")
        let after = try SesameCLI.succeed(["master-key", "status", "--db", database, "--master-key-file", newFile])
        #expect((after["sealedByKey"] as? [String: Int])?.keys.sorted() == [newID], "\(after)")
        let restarted = try ServerProcess.start(database: database, extra: ["--master-key-file", newFile])
        restarted.kill()
        let stale = try Self.refusedStart(database, ["--master-key-file", "\(folder.path)/master.key"])
        #expect(stale.contains("wrong master key") && stale.contains(newID), "\(stale)")
    }
}
