import Foundation
import SesameTestSupport
import Testing
@testable import SesameStore

/// Migration 16 keys `tokens` by the secret's hash on both backends: a token stored before it is consumed after it,
/// the hash is still unique, and the table carries no other index.
@Suite struct TokensBySecretMigrationTests {
    static func database(_ backend: Backend) throws -> any SQLDatabase {
        switch backend {
        case .sqlite: try SQLiteDatabase(path: try freshSQLitePath())
        case .postgres: try PostgresDatabase(url: try PostgresCluster.shared.createDatabase())
        }
    }

    /// The indexes of `table` as the catalog lists them (PostgreSQL's primary key is one; SQLite's table WITHOUT ROWID
    /// is its own key), and the columns of its primary key.
    static func keys(_ database: any SQLDatabase, _ backend: Backend, table: String = "tokens") throws -> (indexes: [String], primaryKey: [String]) {
        switch backend {
        case .sqlite:
            (try database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 ORDER BY name", [.text(table)])
                .map { try $0.text("name") },
             try database.query("SELECT name FROM pragma_table_info($1) WHERE pk > 0 ORDER BY pk", [.text(table)]).map { try $0.text("name") })
        case .postgres:
            (try database.query("SELECT indexname AS name FROM pg_indexes WHERE tablename = $1 ORDER BY indexname", [.text(table)])
                .map { try $0.text("name") },
             try database.query("""
                 SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                 WHERE i.indrelid = $1::regclass AND i.indisprimary
                 """, [.text(table)]).map { try $0.text("name") })
        }
    }

    @Test("a token stored before migration 16 is consumed once after it; the hash is the only key", arguments: Backend.allCases)
    func keyedBySecret(backend: Backend) throws {
        let database = try Self.database(backend)
        try Migrator.migrate(database, migrations: Schema.migrations.filter { $0.version < 16 })
        try ProjectRepository(database: database).create(Fixture.project())
        try UserRepository(database: database).create(Fixture.user("u1"))
        let tokens = TokenRepository(database: database)
        let token = TokenRecord(id: "t1", projectID: "p1", userID: "u1", secretHash: Array(repeating: 7, count: 32), kind: "passkey",
                                createdAt: t0, expiresAt: t0.plus(seconds: 60))
        try tokens.create(token)
        #expect(try Self.keys(database, backend).primaryKey == ["id"])

        try Migrator.migrate(database)

        let keys = try Self.keys(database, backend)
        #expect(keys.primaryKey == ["secret_hash"])
        #expect(keys.indexes == (backend == .sqlite ? [] : ["tokens_pkey"]))
        var twin = token
        twin.id = "t2"
        #expect(throws: StoreError.conflict) { try tokens.create(twin) }
        #expect(try tokens.consume(projectID: "p1", secretHash: token.secretHash, now: t0) == token)
        #expect(try tokens.consume(projectID: "p1", secretHash: token.secretHash, now: t0) == nil)
    }
}
