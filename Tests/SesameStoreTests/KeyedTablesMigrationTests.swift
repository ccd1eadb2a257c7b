import Foundation
import Testing
@testable import SesameStore
import SesameTestSupport

/// Migration 14 rebuilds SQLite's `rate_limits`, `challenges`, `tokens` and `sessions` as tables WITHOUT ROWID: what
/// they held before is there after, with their indexes, and they work as before.
@Suite struct KeyedTablesMigrationTests {
    static let tables = ["rate_limits", "challenges", "tokens", "sessions"]

    /// Every row of `table`, each as its columns' values, in primary-key order.
    static func rows(_ database: SQLiteDatabase, _ table: String) throws -> [[SQLValue]] {
        try database.query("SELECT * FROM \(table) ORDER BY 1, 2", []).map(\.values)
    }

    @Test("rows of the four tables stored before migration 14 survive it, with their indexes; the tables are keyed by their primary key")
    func rowsSurvive() throws {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        try Migrator.migrate(database, migrations: Schema.migrations.filter { $0.version < 14 })
        // Rows written through the repositories over the database as migration 13 left it.
        let challenges = ChallengeRepository(database: database)
        try ProjectRepository(database: database).create(Fixture.project())
        try UserRepository(database: database).create(Fixture.user())
        // (SQLite's rate limits are counted in memory now; the table's rows of older versions are kept all the same.)
        try database.execute("INSERT INTO rate_limits (key, window_start, count) VALUES ('ip:1', 1800000000000, 2), ('ip:2', 1800000000000, 1)", [])
        var challenge = Fixture.challenge("c1", purpose: ChallengeRecord.registrationPurpose, userID: "u1")
        challenge.rpID = "example.org"
        challenge.name = "My key"
        challenge.linkID = "l1"
        try challenges.create(challenge)
        try challenges.create(Fixture.challenge("c2"))
        try database.execute("INSERT INTO tokens (id, project_id, user_id, secret_hash, kind, created_at, expires_at) VALUES ('t1', 'p1', 'u1', X'0102', 'passkey', 1, 2)", [])
        try database.execute("""
            INSERT INTO sessions (id, project_id, user_id, secret_hash, provider, factors, ip, user_agent, created_at, updated_at, expires_at, mfa_updated_at)
            VALUES ('s1', 'p1', 'u1', X'0304', 'passkey', '["passkey"]', '127.0.0.1', 'test', 1, 2, 3, NULL)
            """, [])
        let before = try Self.tables.map { try Self.rows(database, $0) }

        try Migrator.migrate(database)

        #expect(try database.queryFirst("SELECT MAX(version) AS v FROM schema_migrations", [])?.integer("v") == Store.schemaVersion)
        #expect(try Self.tables.map { try Self.rows(database, $0) } == before)
        for table in Self.tables {
            let sql = try database.queryFirst("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = $1", [.text(table)])?.text("sql")
            #expect(sql?.hasSuffix("WITHOUT ROWID") == true, "\(table): \(sql ?? "missing")")
        }
        let indexes = try database.query("""
            SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'
            AND tbl_name IN ('rate_limits', 'challenges', 'tokens', 'sessions') ORDER BY name
            """, [])
        // (Migration 16 keys tokens by their hash and drops `tokens_user`.)
        #expect(try indexes.map { try $0.text("name") } == ["challenges_expires", "challenges_user_purpose", "rate_limits_window", "sessions_user"])
        // The unique secret hashes still hold.
        #expect(throws: StoreError.self) {
            try database.execute("INSERT INTO tokens (id, project_id, user_id, secret_hash, kind, created_at, expires_at) VALUES ('t2', 'p1', 'u1', X'0102', 'passkey', 1, 2)", [])
        }
        // And the repositories work on the new tables.
        #expect(try challenges.consume(id: "c1", now: challenge.createdAt) == challenge)
        #expect(try challenges.consume(id: "c1", now: challenge.createdAt) == nil)
    }
}
