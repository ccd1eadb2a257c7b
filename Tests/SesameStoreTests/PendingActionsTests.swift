import Foundation
import SesameStore
import Synchronization
import Testing

/// Usernameless Authsignal sign-in actions held in memory on SQLite: held until their row is committed, taken once,
/// given back, bounded, swept.
@Suite("Pending actions in memory")
struct PendingActionsTests {
    private func action(_ id: String, createdAt: Date = t0) -> AuthsignalActionRecord {
        AuthsignalActionRecord(id: id, projectID: "p", externalUserID: nil, actionCode: "signIn", idempotencyKey: "key-" + id,
                               state: "CHALLENGE_REQUIRED", stateUpdatedAt: createdAt, createdAt: createdAt)
    }

    @Test("an action is taken once and still read until its taker forgets it; given back, it can be taken again")
    func takenOnceReadUntilForgotten() throws {
        let pending = PendingActions()
        #expect(pending.insert(action("a")))
        #expect(!pending.insert(action("a")), "one ID is held once")
        #expect(try pending.get(id: "a") == action("a"))
        #expect(pending.take(id: "a") == action("a"))
        #expect(pending.take(id: "a") == nil, "taken, it is not taken again")
        #expect(try pending.get(id: "a") == action("a"), "until its row is committed it is still read here")
        pending.restore(id: "a")
        #expect(pending.take(id: "a") == action("a"), "given back, it is taken again")
        pending.forget(id: "a")
        #expect(try pending.get(id: "a") == nil)
        #expect(pending.take(id: "a") == nil)

        #expect(pending.insert(action("b")))
        pending.forget(id: "b")
        #expect(try pending.get(id: "b") == action("b"), "only a taken action is forgotten")
        #expect(throws: StoreError.self) { try pending.get(id: "a\u{0}") }
    }

    @Test("20 threads take one action: exactly one gets it")
    func oneTaker() {
        let pending = PendingActions()
        _ = pending.insert(action("x"))
        let takers = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            if pending.take(id: "x") != nil { takers.add(1, ordering: .relaxed) }
        }
        #expect(takers.load(ordering: .relaxed) == 1)
    }

    @Test("at most capacity actions are held; the sweep drops those created before its time, taken or not")
    func boundedAndSwept() throws {
        let pending = PendingActions(capacity: 3)
        #expect(pending.insert(action("old", createdAt: t0)))
        #expect(pending.insert(action("taken", createdAt: t0)))
        #expect(pending.insert(action("new", createdAt: t0.plus(seconds: 10))))
        #expect(!pending.insert(action("more")), "full")
        #expect(pending.take(id: "taken") != nil)
        #expect(pending.removeExpired(createdBefore: t0.plus(seconds: 10)) == 2)
        #expect(try pending.get(id: "new") != nil && pending.count == 1)
        #expect(pending.insert(action("more")))
    }
}
