import Foundation
import SesameTestSupport
import Testing
@testable import SesameStore

/// PostgreSQL transactions send their BEGIN with the first statement (one round trip for both), and enqueued writes
/// with the next statement or the commit: each is inside the transaction, a failure of any rolls it back and leaves the
/// connection usable, and a connection that broke while idle in the pool is replaced before the transaction runs.
@Suite struct PostgresTransactionTests {
    /// A fresh database with a table of numbered rows, reached through one pooled connection.
    static func database() throws -> PostgresDatabase {
        let database = try PostgresDatabase(url: try PostgresCluster.shared.createDatabase(), poolSize: 1)
        try database.execute("CREATE TABLE rows (id BIGINT PRIMARY KEY, note TEXT NOT NULL)", [])
        return database
    }

    static func storedIDs(_ database: PostgresDatabase) throws -> [Int64] {
        try database.query("SELECT id FROM rows ORDER BY id", []).map { try $0.integer("id") }
    }

    @Test("the first statement runs inside the transaction: a later throw rolls it back with the rest")
    func firstStatementInside() throws {
        let database = try Self.database()
        #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (1, 'first')", [])
                try connection.execute("INSERT INTO rows (id, note) VALUES (2, 'second')", [])
                throw StoreError(.conflict, "the body gives up")
            }
        }
        #expect(try Self.storedIDs(database) == [])
        let committed = try database.transaction { connection throws(StoreError) in
            try connection.execute("INSERT INTO rows (id, note) VALUES ($1, 'first')", [.integer(3)])
        }
        #expect(committed == 1)
        #expect(try Self.storedIDs(database) == [3])
    }

    @Test("a failing first statement reports its own error, writes nothing, and the connection serves the next transaction")
    func failingFirstStatement() throws {
        let database = try Self.database()
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        let error = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
                try connection.execute("INSERT INTO rows (id, note) VALUES (2, 'after the failure')", [])
            }
        }
        #expect(error?.code == .conflict)
        #expect(try Self.storedIDs(database) == [1])
        let note = try database.transaction { connection throws(StoreError) in
            try connection.query("SELECT note FROM rows WHERE id = $1", [.integer(1)]).first?.text("note")
        }
        #expect(note == "one")
    }

    @Test("a transaction that runs no statement returns its value, and the connection stays usable")
    func emptyTransaction() throws {
        let database = try Self.database()
        #expect(try database.transaction { _ throws(StoreError) in 7 } == 7)
        _ = try database.transaction { connection throws(StoreError) in
            try connection.execute("INSERT INTO rows (id, note) VALUES (4, 'four')", [])
        }
        #expect(try Self.storedIDs(database) == [4])
    }

    @Test("a connection that broke while idle in the pool is replaced, and the transaction runs once on a fresh one")
    func brokenIdleConnection() throws {
        let database = try Self.database()
        let pid = try #require(try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid"))
        let other = try PostgresDatabase(url: try PostgresCluster.shared.createDatabase(), poolSize: 1)
        #expect(try other.query("SELECT pg_terminate_backend($1::int) AS done", [.integer(pid)]).first?.integer("done") == 1)
        // The server ends the backend asynchronously; wait until it is gone.
        for _ in 0..<100 where try other.query("SELECT 1 AS n FROM pg_stat_activity WHERE pid = $1::int", [.integer(pid)]).count > 0 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        _ = try database.transaction { connection throws(StoreError) in
            try connection.execute("INSERT INTO rows (id, note) VALUES (5, 'five')", [])
        }
        #expect(try Self.storedIDs(database) == [5])
        #expect(try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid") != pid)
    }

    @Test("an enqueued write runs before the next statement, which sees it, and commits with the rest")
    func enqueuedBeforeNext() throws {
        let database = try Self.database()
        let seen = try database.transaction { connection throws(StoreError) -> Int64 in
            try connection.enqueue("INSERT INTO rows (id, note) VALUES ($1, 'queued')", [.integer(10)])
            return try connection.query("SELECT count(*) AS n FROM rows", []).first?.integer("n") ?? -1
        }
        #expect(seen == 1)
        _ = try database.transaction { connection throws(StoreError) in
            try connection.enqueue("INSERT INTO rows (id, note) VALUES ($1, 'queued')", [.integer(11)])
            try connection.enqueue("INSERT INTO rows (id, note) VALUES ($1, 'not prepared yet')", [.integer(12)])
        }
        #expect(try Self.storedIDs(database) == [10, 11, 12])
    }

    @Test("an enqueued write that fails fails the next statement, or the commit, and the whole transaction rolls back")
    func enqueuedFailure() throws {
        let database = try Self.database()
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        let pid = try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid")
        let atCommit = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (2, 'two')", [])
                try connection.enqueue("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
            }
        }
        #expect(atCommit?.code == .conflict)
        let atNext = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.enqueue("INSERT INTO rows (id, note) VALUES (1, 'duplicate')", [])
                try connection.enqueue("INSERT INTO rows (id, note) VALUES (3, 'three')", [])
                _ = try connection.query("SELECT id FROM rows", [])
            }
        }
        #expect(atNext?.code == .conflict)
        #expect(try Self.storedIDs(database) == [1])
        // The connection came back to the pool, out of the transaction and the pipeline.
        #expect(try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid") == pid)
    }

    @Test("a body that enqueues a write and then throws rolls it back, and the connection serves the next transaction")
    func enqueuedThenThrow() throws {
        let database = try Self.database()
        let pid = try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid")
        #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.enqueue("INSERT INTO rows (id, note) VALUES (20, 'queued')", [])
                throw StoreError(.conflict, "the body gives up")
            }
        }
        #expect(try Self.storedIDs(database) == [])
        #expect(try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid") == pid)
        // Outside a transaction, an enqueued write runs at once.
        try database.enqueue("INSERT INTO rows (id, note) VALUES (21, 'now')", [])
        #expect(try Self.storedIDs(database) == [21])
    }

    /// Two databases on one fresh database (one connection each), with rows 1 (`before`) and 2 (`two`).
    static func twoDatabases() throws -> (PostgresDatabase, other: PostgresDatabase) {
        let url = try PostgresCluster.shared.createDatabase()
        let database = try PostgresDatabase(url: url, poolSize: 1)
        try database.execute("CREATE TABLE rows (id BIGINT PRIMARY KEY, note TEXT NOT NULL)", [])
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'before'), (2, 'two')", [])
        return (database, try PostgresDatabase(url: url, poolSize: 1))
    }

    static let noteByID = "SELECT note FROM rows WHERE id = $1"

    @Test("a read sent ahead goes out with the next statement and answers the same read once; other reads run themselves")
    func prefetchedRead() throws {
        let (database, other) = try Self.twoDatabases()
        let notes = try database.transaction { connection throws(StoreError) -> [String?] in
            try connection.prefetch(Self.noteByID, [.integer(1)])
            try connection.execute("INSERT INTO rows (id, note) VALUES (3, 'three')", [])
            // Committed after the read went out: a read now would see it (read committed).
            try other.execute("UPDATE rows SET note = 'after' WHERE id = 1", [])
            return [
                try connection.query(Self.noteByID, [.integer(1)]).first?.text("note"),
                try connection.query(Self.noteByID, [.integer(1)]).first?.text("note"),
                try connection.query(Self.noteByID, [.integer(2)]).first?.text("note"),
            ]
        }
        #expect(notes == ["before", "after", "two"])
        #expect(try Self.storedIDs(database) == [1, 2, 3])
    }

    @Test("a read sent ahead and never asked ends with its transaction: the next transaction reads for itself")
    func prefetchedReadEndsWithTransaction() throws {
        let (database, other) = try Self.twoDatabases()
        try database.transaction { connection throws(StoreError) in
            try connection.prefetch(Self.noteByID, [.integer(2)])
            try connection.execute("INSERT INTO rows (id, note) VALUES (3, 'three')", [])
        }
        try other.execute("UPDATE rows SET note = 'changed' WHERE id = 2", [])
        let note = try database.transaction { connection throws(StoreError) in
            try connection.query(Self.noteByID, [.integer(2)]).first?.text("note")
        }
        #expect(note == "changed")
    }

    @Test("a read sent ahead and asked before any other statement is read then, with what was sent before it")
    func prefetchedReadAskedAtOnce() throws {
        let (database, _) = try Self.twoDatabases()
        let note = try database.transaction { connection throws(StoreError) -> String? in
            try connection.enqueue("UPDATE rows SET note = 'queued' WHERE id = 1", [])
            try connection.prefetch(Self.noteByID, [.integer(1)])
            return try connection.query(Self.noteByID, [.integer(1)]).first?.text("note")
        }
        #expect(note == "queued")
        #expect(try database.query(Self.noteByID, [.integer(1)]).first?.text("note") == "queued")
        // Outside a transaction there is nothing to send it with: a read sent ahead does nothing.
        try database.prefetch("SELECT missing FROM nowhere", [])
    }

    @Test("a statement first sent in a pipeline is prepared there: it survives a rollback and runs by name from then on")
    func statementPreparedInPipeline() throws {
        let database = try Self.database()
        let update = "UPDATE rows SET note = $2 WHERE id = $1"
        try database.execute("INSERT INTO rows (id, note) VALUES (1, 'one')", [])
        func preparations(of statement: String = update) throws -> Int64? {
            try database.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1", [.text(statement)]).first?.integer("n")
        }
        // The read sent ahead opens the pipeline, so the update is first sent in it.
        #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.prefetch(Self.noteByID, [.integer(1)])
                try connection.execute(update, [.integer(1), .text("rolled back")])
                throw StoreError(.conflict, "the body gives up")
            }
        }
        #expect(try preparations() == 1)
        try database.transaction { connection throws(StoreError) in
            try connection.prefetch(Self.noteByID, [.integer(1)])
            try connection.execute(update, [.integer(1), .text("kept")])
        }
        #expect(try preparations() == 1)
        #expect(try database.query(Self.noteByID, [.integer(1)]).first?.text("note") == "kept")
        // Sent twice in an open pipeline before its preparation is answered: prepared once.
        let append = "UPDATE rows SET note = note || $2 WHERE id = $1"
        try database.transaction { connection throws(StoreError) in
            try connection.prefetch(Self.noteByID, [.integer(1)])
            try connection.enqueue(append, [.integer(1), .text(" and")])
            try connection.enqueue(append, [.integer(1), .text(" more")])
        }
        #expect(try preparations(of: append) == 1)
        #expect(try database.query(Self.noteByID, [.integer(1)]).first?.text("note") == "kept and more")
    }

    @Test("a read sent ahead that fails fails the call that carries it, or the next read, and the whole transaction rolls back")
    func failingPrefetchedRead() throws {
        let (database, _) = try Self.twoDatabases()
        let pid = try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid")
        // Fails as it runs (SQLSTATE 22012, division by zero), not as it is prepared.
        let failing = "SELECT note, 1 / ($1 - 1) AS quotient FROM rows WHERE id = $1"
        let carried = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (3, 'three')", [])
                try connection.prefetch(failing, [.integer(1)])
                try connection.execute("INSERT INTO rows (id, note) VALUES (4, 'four')", [])
            }
        }
        #expect(carried?.detail.contains("22012") == true, "\(String(describing: carried))")
        let asked = #expect(throws: StoreError.self) {
            try database.transaction { connection throws(StoreError) in
                try connection.execute("INSERT INTO rows (id, note) VALUES (3, 'three')", [])
                try connection.prefetch(failing, [.integer(1)])
                _ = try connection.query(failing, [.integer(1)])
            }
        }
        #expect(asked?.detail.contains("22012") == true, "\(String(describing: asked))")
        #expect(try Self.storedIDs(database) == [1, 2])
        #expect(try database.query("SELECT pg_backend_pid() AS pid", []).first?.integer("pid") == pid)
    }
}
