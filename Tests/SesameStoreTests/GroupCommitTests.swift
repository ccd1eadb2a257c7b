import Foundation
import Synchronization
import SesameTestSupport
import Testing
@testable import SesameStore

/// SQLite's group commit at the fsync: concurrent commits share one flush of the log, and a failing transaction among
/// them rolls back alone.
@Suite struct GroupCommitTests {
    /// A fresh SQLite database with a table of numbered rows.
    static func database() throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        try database.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, note TEXT NOT NULL)", [])
        return database
    }

    /// Runs `count` transactions, each on its own thread, while a flush is in progress, so that all of them commit and
    /// then wait for the next flush together. Transaction `i` inserts row `i`, then throws when `failing(i)`.
    /// - Returns: each transaction's outcome, and how many flushes they took.
    static func group(_ database: SQLiteDatabase, count: Int, failing: @escaping @Sendable (Int) -> Bool) -> (outcomes: [Int: String], flushes: Int) {
        let outcomes = Mutex<[Int: String]>([:])
        let done = DispatchGroup()
        let before = database.sync.flushCount
        database.sync.whileFlushing {
            for index in 0..<count {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    do throws(StoreError) {
                        try database.transaction { connection throws(StoreError) in
                            try connection.execute("INSERT INTO rows (id, note) VALUES ($1, $2)", [.integer(Int64(index)), .text("row \(index)")])
                            if failing(index) { throw StoreError(.conflict, "transaction \(index) fails") }
                        }
                        outcomes.withLock { $0[index] = "committed" }
                    } catch {
                        outcomes.withLock { $0[index] = error.code.rawValue }
                    }
                }
            }
            // Every transaction that commits has done so, and waits for the flush, before this one ends.
            let committing = (0..<count).filter { !failing($0) }.count
            while (try? Self.storedIDs(database).count) ?? 0 < committing { usleep(1000) }
            usleep(20_000)
        }
        done.wait()
        return (outcomes.withLock { $0 }, database.sync.flushCount - before)
    }

    static func storedIDs(_ database: SQLiteDatabase) throws -> [Int64] {
        try database.query("SELECT id FROM rows ORDER BY id", []).map { try $0.integer("id") }
    }

    @Test("concurrent commits share one flush of the log")
    func oneFlush() throws {
        let database = try Self.database()
        let (outcomes, flushes) = Self.group(database, count: 20) { _ in false }
        #expect(outcomes.count == 20 && outcomes.values.allSatisfy { $0 == "committed" }, "\(outcomes)")
        #expect(try Self.storedIDs(database) == Array(0..<20))
        #expect(flushes == 1, "20 commits, \(flushes) flushes")
    }

    @Test("a read while a write transaction is open answers at once, without its rows; after the commit, with them")
    func readBesideWrite() throws {
        let database = try Self.database()
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (2, 'two')", [])
                inside.signal()
                release.wait()
            }
            done.signal()
        }
        inside.wait()
        // The writer is held: the read goes to a reader, which sees the last commit.
        #expect(try Self.storedIDs(database) == [1])
        release.signal()
        done.wait()
        #expect(try Self.storedIDs(database) == [1, 2])
    }

    @Test("a failing transaction among concurrent ones rolls back alone; the others commit")
    func failingTransaction() throws {
        let database = try Self.database()
        let (outcomes, flushes) = Self.group(database, count: 20) { $0 % 5 == 3 }
        #expect(outcomes.filter { $0.value == "conflict" }.keys.sorted() == [3, 8, 13, 18], "\(outcomes)")
        #expect(outcomes.filter { $0.value == "committed" }.count == 16)
        #expect(try Self.storedIDs(database) == (0..<20).filter { $0 % 5 != 3 }.map(Int64.init))
        #expect(flushes == 1)
    }

    @Test("a transaction that changed nothing waits for no flush; one that did, for one")
    func nothingToFlush() throws {
        let database = try Self.database()
        let before = database.sync.flushCount
        try database.execute("UPDATE rows SET note = 'x' WHERE id = 12345", [])
        #expect(database.sync.flushCount == before)
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        #expect(database.sync.flushCount == before + 1)
    }

    @Test("with process durability a commit waits for no flush; with full, for one")
    func processDurability() throws {
        let path = try freshSQLitePath()
        let relaxed = try SQLiteDatabase(path: path, durability: .process)
        try relaxed.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, note TEXT NOT NULL)", [])
        try relaxed.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        #expect(relaxed.sync.flushCount == 0)
        #expect(try Self.storedIDs(relaxed) == [1])
        let strict = try SQLiteDatabase(path: path, durability: .full)
        try strict.execute("INSERT INTO rows (id, note) VALUES (2, 'two')", [])
        #expect(strict.sync.flushCount == 1)
    }

    @Test("a bookkeeping statement on a fully durable database commits without a flush; it is stored all the same")
    func bookkeepingWaitsForNoFlush() throws {
        let database = try Self.database()
        let before = database.sync.flushCount
        let rows = try database.bookkeeping("INSERT INTO rows (id, note) VALUES (7, 'counted') RETURNING id", [])
        #expect(try rows.map { try $0.integer("id") } == [7])
        #expect(database.sync.flushCount == before)
        #expect(try Self.storedIDs(database) == [7])
        // The next durable commit flushes the log, the bookkeeping write with it.
        try database.execute("INSERT INTO rows (id, note) VALUES (8, 'durable')", [])
        #expect(database.sync.flushCount == before + 1)
    }

    @Test("a bookkeeping transaction commits all its statements together without waiting for a log flush, or none of them")
    func bookkeepingTransaction() throws {
        let database = try Self.database()
        let before = database.sync.flushCount
        try database.bookkeepingTransaction { connection throws(StoreError) in
            try connection.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
            try connection.execute("INSERT INTO rows (id, note) VALUES (2, 'two')", [])
        }
        #expect(database.sync.flushCount == before)
        #expect(try Self.storedIDs(database) == [1, 2])
        #expect(throws: StoreError.self) {
            try database.bookkeepingTransaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (3, 'rolled back')", [])
                try connection.execute("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
            }
        }
        #expect(try Self.storedIDs(database) == [1, 2])
        #expect(database.sync.flushCount == before)
    }

    @Test("several writes in one bookkeeping transaction of the store commit together, without a log flush")
    func storeBookkeeping() throws {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        let store = try Store(database: database)
        try store.projects.create(Fixture.project())
        let before = database.sync.flushCount
        try store.bookkeeping { transaction throws(StoreError) in
            try transaction.challenges.create(Fixture.challenge("ch-1"))
            try transaction.challenges.create(Fixture.challenge("ch-2"))
        }
        #expect(database.sync.flushCount == before)
        #expect(try store.challenges.get(id: "ch-1") != nil)
        #expect(try store.challenges.get(id: "ch-2") != nil)
    }

    @Test("a rate-limit chain, a challenge and a sign-in's action are written without a log flush; an ordinary action waits for one")
    func ceremonyStateWaitsForNoFlush() throws {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        let store = try Store(database: database)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try store.projects.create(Fixture.project())
        let before = database.sync.flushCount
        #expect(try store.rateLimits.increment([("ip", 10), ("tenant", 100)], windowStart: now) == [1, 1])
        try store.challenges.create(Fixture.challenge("ch-bookkeeping"))
        func action(_ id: String) -> AuthsignalActionRecord {
            AuthsignalActionRecord(id: id, projectID: "p1", externalUserID: nil, actionCode: "signInWithPasskey", idempotencyKey: "key-\(id)",
                                   state: "CHALLENGE_REQUIRED", stateUpdatedAt: now, createdAt: now)
        }
        try store.authsignal.createAction(action("a1"), durability: .process)
        #expect(database.sync.flushCount == before)
        #expect(try store.challenges.get(id: "ch-bookkeeping") != nil)
        #expect(try store.authsignal.action(id: "a1") != nil)
        try store.authsignal.createAction(action("a2"))
        #expect(database.sync.flushCount == before + 1)
    }

    @Test("PostgreSQL bookkeeping statements run with synchronous_commit off, others as the durability says", arguments: Durability.allCases)
    func postgresBookkeeping(durability: Durability) throws {
        let database = try PostgresDatabase(url: try PostgresCluster.shared.createDatabase(), durability: durability)
        let setting = try database.bookkeeping("SHOW synchronous_commit", []).first?.text("synchronous_commit")
        #expect(setting == "off")
        let inTransaction = try database.bookkeepingTransaction { connection throws(StoreError) in
            try connection.query("SHOW synchronous_commit", []).first?.text("synchronous_commit")
        }
        #expect(inTransaction == "off")
        #expect(try database.query("SHOW synchronous_commit", []).first?.text("synchronous_commit") == (durability == .process ? "off" : "on"))
    }

    @Test("PostgreSQL connections run with synchronous_commit off only at process durability", arguments: Durability.allCases)
    func postgresDurability(durability: Durability) throws {
        let database = try PostgresDatabase(url: try PostgresCluster.shared.createDatabase(), durability: durability)
        let setting = try database.query("SHOW synchronous_commit", []).first?.text("synchronous_commit")
        #expect(setting == (durability == .process ? "off" : "on"))
    }

    @Test("a statement that fails inside a transaction fails its later statements and rolls the whole transaction back")
    func abortedTransaction() throws {
        let database = try Self.database()
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        let error = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (100, 'kept?')", [])
                _ = try? connection.execute("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
                try connection.execute("INSERT INTO rows (id, note) VALUES (101, 'after the failure')", [])
            }
        }
        #expect(error?.code == .internalFailure)
        #expect(try Self.storedIDs(database) == [1])
    }

    @Test("reads are SELECTs; DELETE ... RETURNING and every other statement write")
    func readsAndWrites() {
        #expect(SQLiteDatabase.isRead("SELECT 1"))
        #expect(SQLiteDatabase.isRead("  select id FROM rows"))
        #expect(SQLiteDatabase.isRead("\nSELECT id FROM rows"))
        #expect(!SQLiteDatabase.isRead("DELETE FROM challenges WHERE id = $1 RETURNING id"))
        #expect(!SQLiteDatabase.isRead("INSERT INTO rows (id) VALUES (1) RETURNING id"))
        #expect(!SQLiteDatabase.isRead("SELEC"))
        #expect(!SQLiteDatabase.isRead("PRAGMA journal_mode"))
    }
}
