import Foundation
import Synchronization
import Testing
@testable import SesameStore

/// SQLite's group commit: concurrent transactions share one commit, and a failing one rolls back alone.
@Suite struct GroupCommitTests {
    /// A fresh SQLite database with a table of numbered rows.
    static func database() throws -> SQLiteDatabase {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-group-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = try SQLiteDatabase(path: folder.appendingPathComponent("test.db").path)
        try database.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, note TEXT NOT NULL)", [])
        return database
    }

    /// Runs `count` transactions at once, each on its own thread, the first held until all others queue behind it, so
    /// they form one batch. Transaction `i` inserts row `i`, then throws when `failing(i)`.
    static func batch(_ database: SQLiteDatabase, count: Int, failing: @escaping @Sendable (Int) -> Bool) -> [Int: String] {
        let release = DispatchSemaphore(value: 0)
        let firstInside = Atomic<Bool>(false)
        let outcomes = Mutex<[Int: String]>([:])
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                // The first transaction takes the writer; the others start once it holds it, and queue.
                if index > 0 { while !firstInside.load(ordering: .acquiring) { usleep(100) } }
                do throws(StoreError) {
                    try database.transaction { connection throws(StoreError) in
                        if index == 0 {
                            firstInside.store(true, ordering: .releasing)
                            release.wait()
                        }
                        try connection.execute("INSERT INTO rows (id, note) VALUES ($1, $2)", [.integer(Int64(index)), .text("row \(index)")])
                        if failing(index) { throw StoreError(.conflict, "member \(index) fails") }
                    }
                    outcomes.withLock { $0[index] = "committed" }
                } catch {
                    outcomes.withLock { $0[index] = error.code.rawValue }
                }
            }
        }
        // Every other writer queues behind the first before it may finish.
        while database.writer.waitingWriters < count - 1 { usleep(1000) }
        release.signal()
        done.wait()
        return outcomes.withLock { $0 }
    }

    static func storedIDs(_ database: SQLiteDatabase) throws -> [Int64] {
        try database.query("SELECT id FROM rows ORDER BY id", []).map { try $0.integer("id") }
    }

    @Test("concurrent transactions commit as one batch, with one commit for all of them")
    func oneCommit() throws {
        let database = try Self.database()
        let before = database.writer.finishedBatches
        let outcomes = Self.batch(database, count: 20) { _ in false }
        #expect(outcomes.values.allSatisfy { $0 == "committed" } && outcomes.count == 20, "\(outcomes)")
        #expect(try Self.storedIDs(database) == Array(0..<20))
        #expect(database.writer.finishedBatches - before == 1, "20 transactions, \(database.writer.finishedBatches - before) commits")
    }

    @Test("a failing transaction in a batch rolls back alone; the others commit")
    func failingMember() throws {
        let database = try Self.database()
        let outcomes = Self.batch(database, count: 20) { $0 % 5 == 3 }
        let failed = outcomes.filter { $0.value != "committed" }.keys.sorted()
        #expect(failed == [3, 8, 13, 18], "\(outcomes)")
        #expect(outcomes.filter { $0.value == "conflict" }.count == 4)
        #expect(try Self.storedIDs(database) == (0..<20).filter { $0 % 5 != 3 }.map(Int64.init))
    }

    @Test("a statement that fails inside a member fails that member's later statements, not the batch's")
    func abortedMember() throws {
        let database = try Self.database()
        let outcomes = Self.batch(database, count: 10) { _ in false }
        #expect(outcomes.count == 10)
        // A member whose statement fails (duplicate key) and whose body swallows the error is refused as a whole.
        let error = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (100, 'kept?')", [])
                _ = try? connection.execute("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
                try connection.execute("INSERT INTO rows (id, note) VALUES (101, 'after the failure')", [])
            }
        }
        #expect(error?.code == .internalFailure)
        #expect(try Self.storedIDs(database) == Array(0..<10))
        try database.execute("INSERT INTO rows (id, note) VALUES (102, 'the next write works')", [])
        #expect(try Self.storedIDs(database).last == 102)
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
