import Foundation
import SesameTestSupport
import Testing

/// The README's walk-throughs, run as they stand against a fresh `make run` server: examples that work in order.
@Suite struct ReadmeTests {
    static let readme = PythonEnvironment.repository.appendingPathComponent("README.md")

    /// The first ```sh block after the line that starts with `marker`.
    static func block(after marker: String) throws -> String {
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "\n" + marker), "README has no \(marker)")
        let open = try #require(text.range(of: "```sh\n", range: start.upperBound..<text.endIndex))
        let close = try #require(text.range(of: "\n```\n", range: open.upperBound..<text.endIndex))
        return String(text[open.upperBound..<close.lowerBound])
    }

    @Test("the first five minutes with curl, then the administration block, in order, on the server make run starts")
    func walkThroughs() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Exactly make run's database, in a fresh working directory, as a new user has it.
        let server = try ServerProcess.start(database: "sqlite:./.sesame/sesame.db", workingDirectory: folder.path)
        defer { server.kill() }
        let key = try #require(server.adminKey)

        let curl = try Self.block(after: "<!-- walk-through: curl")
            .replacingOccurrences(of: "sesame_sk_...", with: key)
            .replacingOccurrences(of: "localhost:8080", with: "localhost:\(server.port)")
        #expect(curl.contains("localhost:\(server.port)") && !curl.contains("localhost:8080"))
        let walk = try ChildProcess.run("/bin/bash", ["-e", "-c", "cd \"$0\" && " + curl, folder.path], timeout: 60)
        #expect(walk.status == 0, "curl walk-through:\n\(walk.standardOutput)\n\(walk.standardError)")
        let answers = walk.standardOutput.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        // Sign-up, session, me, registration start, passkeys, (sign-out: no body), sign-in start, users.
        #expect(answers.count == 7, "\(walk.standardOutput)")
        #expect(answers.first?["email"] as? String == "ada@example.org")
        #expect(answers.count > 2 && answers[2]["email"] as? String == "ada@example.org", "the cookie signed curl in")
        #expect(answers.count > 3 && (answers[3]["publicKey"] as? [String: Any])?["rp"] as? [String: String] != nil)
        #expect(answers.count > 4 && answers[4]["total"] as? Int == 0)
        #expect(answers.count > 5 && (answers[5]["publicKey"] as? [String: Any])?["rpId"] as? String == "localhost")
        #expect(answers.last?["total"] as? Int == 1)

        let admin = try Self.block(after: "## Administration")
        let script = "cd \"$0\" && sesame() { \"\(sesameExecutable.path)\" \"$@\"; } && " + admin
        let administration = try ChildProcess.run("/bin/bash", ["-e", "-c", script, folder.path], timeout: 60)
        #expect(administration.status == 0, "administration:\n\(administration.standardOutput)\n\(administration.standardError)")
        let lines = administration.standardOutput.split(separator: "\n")
        #expect(lines.first?.contains(#""id":"default""#) == true && lines.last?.contains(#""name":"ci""#) == true, "\(lines)")
        #expect(administration.standardError.isEmpty, "\(administration.standardError)")
    }
}
