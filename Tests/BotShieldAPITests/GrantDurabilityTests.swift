import Foundation
@testable import SesameStore
import SesameClient
import SesameTestSupport
import Testing

/// What a grant's write and the setup page's sign-in wait for (on SQLite, where the log's flushes are counted).
@Suite struct GrantDurabilityTests {
    static func sqliteStore() throws -> (SQLiteDatabase, Store) {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        return (database, try Store(database: database))
    }

    @Test("the setup page's sign-in opens its session in the finish itself: it waits for a log flush, its challenge held in memory all the same")
    func setupSignInWaitsForFlush() async throws {
        let (database, store) = try Self.sqliteStore()
        let harness = try InlineHarness(.sqlite, store: store)
        let page = SetupTests.Page(harness)
        let device = SoftwareAuthenticator()
        #expect(try await page.register("id/options", "id", authenticator: device).status == 200)
        let before = database.sync.flushCount
        let signedIn = try await page.signIn(authenticator: device)
        #expect(signedIn.status == 200 && SetupTests.Page.cookie(of: signedIn) != nil, "\(signedIn)")
        #expect(database.sync.flushCount == before + 1)
    }

    @Test("a grant is ceremony state: create-session commits it without waiting for a log flush; the link it opens waits for one")
    func grantWaitsForNoFlush() async throws {
        let (database, store) = try Self.sqliteStore()
        let harness = try InlineHarness(.sqlite, store: store)
        let before = database.sync.flushCount
        let grant = try #require(try await harness.post("/operations/sdk/create-session", [:], bearer: harness.liveKey).data?["anchor_grant_token"]
            as? String)
        #expect(database.sync.flushCount == before)
        #expect(try await harness.post("/operations/sdk/create-verification-link", ["scope": "checkout"], bearer: grant).status == 200)
        #expect(database.sync.flushCount == before + 1)
    }
}
