import Foundation
import SesameStore
import SesameTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Acknowledged writes survive SIGKILL")
struct DurabilityTests {
    /// What one acknowledged (201) write returned.
    enum Write: Sendable {
        case challenge(id: String, bytes: String)
        case platform(id: String, hostname: String)
    }

    @Test("every write answered 201 before a SIGKILL mid-burst is in the database afterwards, at either durability",
          arguments: Backend.allCases, Durability.allCases)
    func sigkillMidBurst(backend: Backend, durability: Durability) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try backend.makeDatabase(in: folder)
        let server = try ServerProcess.start(database: database, extra: ["--durability", durability.rawValue])
        defer { server.kill() }
        let key = try #require(server.adminKey)
        let client = HTTPClient(port: server.port, key: key)

        let killed = Locked(false)
        let acknowledged = Locked<[Write]>([])
        let unexpected = Locked<[String]>([])  // non-201 answers, or errors, before the kill
        let failuresAfterKill = Locked(0)
        let threads = 8
        let group = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            group.enter()
            Thread {
                gate.wait()
                defer { group.leave() }
                var n = 0
                // Bounded: stops at the first failure after the kill, or after 20 s whatever happens.
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    n += 1
                    let wasKilled = killed.current
                    do {
                        if (thread + n).isMultiple(of: 2) {
                            let response = try client.post("/api/v1/challenges", #"{"purpose":"burst","ttlSeconds":3600}"#)
                            if response.status == 201, let id = response.json["id"] as? String,
                               let bytes = response.json["challenge"] as? String {
                                acknowledged.withLock { $0.append(.challenge(id: id, bytes: bytes)) }
                            } else if !wasKilled {
                                unexpected.withLock { $0.append("challenge: \(response)") }
                            }
                        } else {
                            let host = "t\(thread)-\(n).burst.example"
                            let response = try client.post("/api/v1/project/platforms", #"{"type":"web","hostname":"\#(host)"}"#)
                            if response.status == 201, let id = response.json["id"] as? String {
                                acknowledged.withLock { $0.append(.platform(id: id, hostname: host)) }
                            } else if !wasKilled {
                                unexpected.withLock { $0.append("platform: \(response)") }
                            }
                        }
                    } catch {
                        if killed.current {
                            failuresAfterKill.withLock { $0 += 1 }
                            return
                        }
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        for _ in 0..<threads { gate.signal() }

        // Let the burst run, then SIGKILL the server in the middle of it: once it has acknowledged a few dozen writes (a
        // first flush of the log can take seconds when the machine's disk is busy), at least a second in.
        let started = Date()
        func running() -> TimeInterval { Date().timeIntervalSince(started) }
        while running() < 1 || (acknowledged.current.count < 40 && running() < 60) { Thread.sleep(forTimeInterval: 0.05) }
        let beforeKill = acknowledged.current.count
        killed.withLock { $0 = true }
        server.send(SIGKILL)
        let termination = server.waitForExit(timeout: 10)
        #expect(termination == .signaled(SIGKILL), "the server should die of SIGKILL, not \(String(describing: termination))")
        #expect(group.wait(timeout: .now() + 30) == .success, "the writer threads did not stop")

        let writes = acknowledged.current
        let challenges = writes.compactMap { if case .challenge(let id, let bytes) = $0 { (id, bytes) } else { nil } }
        let platforms = writes.compactMap { if case .platform(let id, let host) = $0 { (id, host) } else { nil } }
        print("""
            [integration] SIGKILL durability on \(backend.rawValue): \(writes.count) writes acknowledged \
            (\(challenges.count) challenges, \(platforms.count) platforms; \(beforeKill) seen before the kill was sent), \
            \(failuresAfterKill.current) of \(threads) writers cut off by the kill
            """)
        let unexpectedAnswers = unexpected.current
        #expect(unexpectedAnswers.count == 0, "answers other than 201 before the kill: \(unexpectedAnswers.prefix(5))")
        #expect(writes.count > 20, "too few writes to say anything: \(writes.count)")
        #expect(failuresAfterKill.current > 0, "the kill should interrupt the burst")

        // Reopen the database directly: every acknowledged challenge and platform is there.
        let store = try Store.open(database)
        var missingChallenges: [String] = []
        for (id, bytes) in challenges {
            guard let record = try store.challenges.get(id: id), base64URL(record.challenge) == bytes else {
                missingChallenges.append(id)
                continue
            }
        }
        #expect(missingChallenges.isEmpty, "\(missingChallenges.count) of \(challenges.count) acknowledged challenges lost")
        let project = try #require(try store.projects.list().first)
        let stored = Dictionary(uniqueKeysWithValues: try store.platforms.list(projectID: project.id).map { ($0.id, $0.hostname) })
        let missingPlatforms = platforms.filter { stored[$0.0] != .some($0.1) }
        #expect(missingPlatforms.isEmpty, "\(missingPlatforms.count) of \(platforms.count) acknowledged platforms lost")

        // And a restarted server (no second bootstrap) serves them.
        let restarted = try ServerProcess.start(database: database)
        defer { restarted.kill() }
        #expect(restarted.adminKey == nil, "a restart must not bootstrap again:\n\(restarted.stdout)")
        let listed = Set(try HTTPClient(port: restarted.port, key: key).platforms().ids)
        #expect(platforms.allSatisfy { listed.contains($0.0) })
        if let (id, _) = challenges.last {
            let consumed = try HTTPClient(port: restarted.port, key: key).post("/api/v1/challenges/\(id)/consume", #"{"purpose":"burst"}"#)
            #expect(consumed.status == 200, "\(consumed)")
        }
        #expect(restarted.terminate() == .exited(0))
    }
}

/// Unpadded base64url, as the API prints challenges.
func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
