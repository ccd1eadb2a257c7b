import Foundation
@testable import SesameStore
import SesameTestSupport
import Testing

/// What a grant's write waits for (on SQLite, where the log's flushes are counted).
@Suite struct GrantDurabilityTests {
    @Test("a grant is ceremony state: create-session commits it without waiting for a log flush; the link it opens waits for one")
    func grantWaitsForNoFlush() async throws {
        let folder = sqliteTestRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = try SQLiteDatabase(path: folder.appendingPathComponent("sesame.db").path)
        let harness = try InlineHarness(.sqlite, store: try Store(database: database))
        let before = database.sync.flushCount
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        #expect(database.sync.flushCount == before)
        #expect(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant).status == 200)
        #expect(database.sync.flushCount == before + 1)
    }
}
