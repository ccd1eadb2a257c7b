import Foundation
import SesameTestSupport
import Testing
@testable import SesameStore

/// Migration 20 keys `sessions` by the secret's hash on both backends, with one unique index of user and ID: a session
/// stored before it is found after it by its hash and by its user and ID, and both still refuse a twin.
@Suite struct SessionsBySecretMigrationTests {
    @Test("a session stored before migration 20 is found after it; the hash is the key, user and ID the one index", arguments: Backend.allCases)
    func keyedBySecret(backend: Backend) throws {
        let database = try TokensBySecretMigrationTests.database(backend)
        try Migrator.migrate(database, migrations: Schema.migrations.filter { $0.version < 20 })
        try ProjectRepository(database: database).create(Fixture.project())
        try UserRepository(database: database).create(Fixture.user("u1"))
        let sessions = SessionRepository(database: database)
        let session = SessionRecord(id: "s1", projectID: "p1", userID: "u1", secretHash: Array(repeating: 7, count: 32), provider: "passkey",
                                    factors: ["passkey"], ip: "127.0.0.1", userAgent: "test", createdAt: t0, updatedAt: t0,
                                    expiresAt: t0.plus(seconds: 3600), mfaUpdatedAt: t0)
        try sessions.create(session)
        let before = try TokensBySecretMigrationTests.keys(database, backend, table: "sessions")
        #expect(before.primaryKey == ["id"])
        // The unique hash and the user (and PostgreSQL's key beside its heap; SQLite's table is its key).
        #expect(before.indexes.count == (backend == .sqlite ? 2 : 3))

        try Migrator.migrate(database)

        let keys = try TokensBySecretMigrationTests.keys(database, backend, table: "sessions")
        #expect(keys.primaryKey == ["secret_hash"])
        #expect(keys.indexes == (backend == .sqlite ? ["sessions_user"] : ["sessions_pkey", "sessions_user"]))
        #expect(try sessions.find(projectID: "p1", secretHash: session.secretHash, now: t0) == session)
        #expect(try sessions.get(projectID: "p1", userID: "u1", id: "s1", now: t0) == session)
        var twin = session
        twin.id = "s2"
        #expect(throws: StoreError.conflict) { try sessions.create(twin) }
        twin = session
        twin.secretHash = Array(repeating: 8, count: 32)
        #expect(throws: StoreError.conflict) { try sessions.create(twin) }
        #expect(try sessions.delete(projectID: "p1", userID: "u1", id: "s1"))
        #expect(try sessions.find(projectID: "p1", secretHash: session.secretHash, now: t0) == nil)
    }
}
