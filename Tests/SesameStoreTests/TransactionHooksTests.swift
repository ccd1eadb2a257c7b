import Foundation
import SesameStore
import SesameTestSupport
import Testing

/// What a transaction's body registers to run when it ends (`onRollback`, `onCommit`): give-backs run whenever the
/// transaction does not commit, its COMMIT's own failure and a driver's rerun included; follow-ups once it committed.
@Suite struct TransactionHooksTests {
    /// What the hooks did, in order.
    private final class Events: @unchecked Sendable {
        // Touched only on the thread that runs the test's transactions.
        var log: [String] = []
    }

    /// A store with a table whose row names a project only at commit time (a deferred foreign key), so that a
    /// transaction inserting a row that names none fails at its COMMIT, after its body returned.
    private func store(_ backend: Backend) throws -> Store {
        let store = try backend.makeStore()
        try store.database.execute("CREATE TABLE commit_checked (project_id TEXT NOT NULL REFERENCES projects (id) DEFERRABLE INITIALLY DEFERRED)", [])
        return store
    }

    @Test("a committed transaction runs its follow-ups in order and none of its give-backs", arguments: Backend.allCases)
    func committed(backend: Backend) throws {
        let store = try store(backend)
        let events = Events()
        try store.transaction { transaction throws(StoreError) in
            transaction.database.onRollback { events.log.append("give back") }
            transaction.database.onCommit { events.log.append("first") }
            try transaction.projects.create(Fixture.project())
            #expect(events.log.isEmpty, "nothing runs before the transaction ends")
            transaction.database.onCommit { events.log.append("second") }
        }
        #expect(events.log == ["first", "second"])
    }

    @Test("a body that throws runs its give-backs, last registered first, and none of its follow-ups", arguments: Backend.allCases)
    func bodyThrows(backend: Backend) throws {
        let store = try store(backend)
        let events = Events()
        let error = #expect(throws: StoreError.self) {
            try store.transaction { transaction throws(StoreError) in
                transaction.database.onRollback { events.log.append("first") }
                try transaction.projects.create(Fixture.project())
                transaction.database.onRollback { events.log.append("second") }
                transaction.database.onCommit { events.log.append("follow-up") }
                throw StoreError(.conflict, "the body gives up")
            }
        }
        #expect(error?.code == .conflict)
        #expect(events.log == ["second", "first"])
        #expect(try store.projects.get(id: "p1") == nil)
    }

    @Test("a COMMIT that fails after the body returned runs the give-backs", arguments: Backend.allCases)
    func commitFails(backend: Backend) throws {
        let store = try store(backend)
        let events = Events()
        #expect(throws: StoreError.self) {
            try store.transaction { transaction throws(StoreError) in
                transaction.database.onRollback { events.log.append("give back") }
                transaction.database.onCommit { events.log.append("follow-up") }
                try transaction.projects.create(Fixture.project())
                try transaction.database.execute("INSERT INTO commit_checked (project_id) VALUES ('no such project')", [])
            }
        }
        #expect(events.log == ["give back"])
        #expect(try store.projects.get(id: "p1") == nil, "the transaction rolled back")
    }

    @Test("a body the driver reruns after a serialization failure gives back what its first attempt took before it runs again")
    func rerun() throws {
        let store = try store(.postgres)
        let events = Events()
        try store.transaction { transaction throws(StoreError) in
            events.log.append("attempt")
            transaction.database.onRollback { events.log.append("give back") }
            if events.log.count == 1 {
                try transaction.database.execute("DO $$ BEGIN RAISE EXCEPTION 'try again' USING ERRCODE = '40001'; END $$", [])
            }
        }
        #expect(events.log == ["attempt", "give back", "attempt"])
    }

    @Test("outside a transaction a follow-up runs at once and a give-back never", arguments: Backend.allCases)
    func outsideATransaction(backend: Backend) throws {
        let store = try store(backend)
        let events = Events()
        store.database.onRollback { events.log.append("give back") }
        store.database.onCommit { events.log.append("follow-up") }
        #expect(events.log == ["follow-up"])
    }
}
