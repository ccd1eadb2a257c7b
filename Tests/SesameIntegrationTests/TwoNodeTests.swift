import Foundation
import SesameStore
import SesameTestSupport
import Testing

@Suite("Two sesame nodes on one PostgreSQL database")
struct TwoNodeTests {
    @Test("a challenge issued by one node is consumed once, on either node, even under a concurrent race")
    func challengeAcrossNodes() throws {
        let database = try PostgresCluster.shared.createDatabase()
        // Sequentially: only the first start of an empty database creates the default project and admin key.
        let nodeA = try ServerProcess.start(database: database)
        defer { nodeA.kill() }
        let nodeB = try ServerProcess.start(database: database)
        defer { nodeB.kill() }
        let key = try #require(nodeA.adminKey, "node A should print the admin key on the first start:\n\(nodeA.stdout)")
        #expect(nodeB.adminKey == nil, "node B must not bootstrap a second project:\n\(nodeB.stdout)")
        #expect(nodeA.port != nodeB.port)
        let a = HTTPClient(port: nodeA.port, key: key), b = HTTPClient(port: nodeB.port, key: key)

        // The same project from both nodes.
        let projectA = try a.get("/api/v1/project"), projectB = try b.get("/api/v1/project")
        #expect(projectA.status == 200 && projectB.status == 200)
        #expect(projectA.json["id"] as? String == projectB.json["id"] as? String)

        let issued = try a.createChallenge(purpose: "x")
        // expiresAt is an RFC 3339 date-time (as openapi.json says), about ttlSeconds from now.
        let created = try a.post("/api/v1/challenges", #"{"purpose":"x","ttlSeconds":300}"#)
        let expiresAt = (created.json["expiresAt"] as? String).flatMap { try? Date.ISO8601FormatStyle().parse($0) }
        #expect(expiresAt.map { abs($0.timeIntervalSinceNow - 300) < 60 } == true, "expiresAt: \(created)")
        let consumed = try b.post("/api/v1/challenges/\(issued.id)/consume", #"{"purpose":"x"}"#)
        #expect(consumed.status == 200, "\(consumed)")
        #expect(consumed.json["challenge"] as? String == issued.challenge)
        #expect(consumed.json["id"] as? String == issued.id)
        for client in [a, b] {
            let again = try client.post("/api/v1/challenges/\(issued.id)/consume", #"{"purpose":"x"}"#)
            #expect(again.status == 410, "\(again)")
            #expect(again.errorCode == "expired")
            #expect(again.isErrorShape)
        }

        // A challenge of another purpose is refused (and burnt), on the other node.
        let other = try a.createChallenge(purpose: "x")
        #expect(try b.post("/api/v1/challenges/\(other.id)/consume", #"{"purpose":"y"}"#).status == 410)
        #expect(try a.post("/api/v1/challenges/\(other.id)/consume", #"{"purpose":"x"}"#).status == 410)

        // 20 concurrent consumers, alternating nodes, for one fresh challenge: exactly one wins.
        for round in 0..<3 {
            let fresh = try b.createChallenge(purpose: "race")
            let statuses = Locked<[Int]>([])
            let winners = Locked<[String]>([])
            let finished = runOnThreads(20) { index in
                let client = index.isMultiple(of: 2) ? a : b
                do {
                    let response = try client.post("/api/v1/challenges/\(fresh.id)/consume", #"{"purpose":"race"}"#)
                    statuses.withLock { $0.append(response.status) }
                    if response.status == 200 { winners.withLock { $0.append(response.json["challenge"] as? String ?? "") } }
                } catch {
                    statuses.withLock { $0.append(-1) }
                }
            }
            #expect(finished, "round \(round): the consumers did not finish in time")
            let all = statuses.current
            #expect(all.count == 20)
            #expect(all.filter { $0 == 200 }.count == 1, "round \(round): statuses \(all.sorted())")
            #expect(all.filter { $0 == 410 }.count == 19, "round \(round): statuses \(all.sorted())")
            #expect(winners.current == [fresh.challenge])
        }
    }

    @Test("two nodes started at the same moment on an empty database bootstrap exactly one project and key")
    func simultaneousFirstStart() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let nodes = Locked<[Int: Result<ServerProcess, any Error>]>([:])
        runOnThreads(2, timeout: 60) { index in
            let result = Result { try ServerProcess.start(database: database) }
            nodes.withLock { $0[index] = result }
        }
        let started = nodes.current.values.compactMap { try? $0.get() }
        defer { started.forEach { $0.kill() } }
        #expect(started.count == 2, "both nodes should start: \(nodes.current.values.compactMap { if case .failure(let e) = $0 { "\(e)" } else { nil } })")
        let keys = started.compactMap(\.adminKey)
        #expect(keys.count == 1, "exactly one node prints the admin key: \(started.map(\.stdout))")
        guard let key = keys.first else { return }
        waitForConfigurationRefresh()  // the other node serves the project and key its peer made within the interval
        for node in started {
            let project = try HTTPClient(port: node.port, key: key).get("/api/v1/project")
            #expect(project.status == 200, "\(project)")
        }
        let store = try Store.open(database)
        #expect(try store.projects.list().count == 1)
    }
}
