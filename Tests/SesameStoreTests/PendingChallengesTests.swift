import Foundation
import SesameStore
import SesameTestSupport
import Synchronization
import Testing

/// Authentication challenges held in memory on SQLite: each taken once, bound takes, give-back, bounds and sweeps.
@Suite("Pending challenges in memory")
struct PendingChallengesTests {
    @Test("a challenge is taken once; an expired one is taken but not given; a bound take leaves another binding's")
    func takenOnce() throws {
        let pending = PendingChallenges()
        try pending.insert(Fixture.challenge("a"))
        #expect(throws: StoreError.self) { try pending.insert(Fixture.challenge("a")) }
        #expect(try pending.get(id: "a") == Fixture.challenge("a"))
        #expect(try pending.take(id: "a", now: t0) == Fixture.challenge("a"))
        #expect(try pending.take(id: "a", now: t0) == nil)

        try pending.insert(Fixture.challenge("late"))
        #expect(try pending.take(id: "late", now: t0.plus(seconds: 300)) == nil, "expiry is exclusive")
        #expect(try pending.get(id: "late") == nil, "and the expired challenge is gone with the attempt")

        var bound = Fixture.challenge("r")
        bound.requestID = "req_1"
        try pending.insert(bound)
        #expect(try pending.take(id: "r", requestID: "req_2", purpose: "authentication", now: t0) == nil)
        #expect(try pending.take(id: "r", requestID: "req_1", purpose: "handoff", now: t0) == nil)
        #expect(try pending.get(id: "r") == bound, "another request's or purpose's take leaves it")
        #expect(try pending.take(id: "r", requestID: "req_1", purpose: "authentication", now: t0) == bound)
    }

    @Test("20 threads take one challenge: exactly one gets it")
    func oneWinner() throws {
        let pending = PendingChallenges()
        try pending.insert(Fixture.challenge("x"))
        let winners = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            if (try? pending.take(id: "x", now: t0)) != nil { winners.add(1, ordering: .relaxed) }
        }
        #expect(winners.load(ordering: .relaxed) == 1)
    }

    @Test("a challenge given back after a rollback is usable again, unless one with its ID came meanwhile")
    func restore() throws {
        let pending = PendingChallenges()
        try pending.insert(Fixture.challenge("a"))
        let taken = try #require(try pending.take(id: "a", now: t0))
        pending.restore(taken)
        #expect(try pending.take(id: "a", now: t0) == taken)
        var newer = Fixture.challenge("a")
        newer.challenge = Array(repeating: 1, count: 32)
        try pending.insert(newer)
        pending.restore(taken)
        #expect(try pending.get(id: "a") == newer)
    }

    @Test("at capacity: expired challenges make room; live ones refuse the next as unavailable")
    func capacity() throws {
        let pending = PendingChallenges(capacity: 3)
        try pending.insert(Fixture.challenge("old", expiresAt: t0))
        try pending.insert(Fixture.challenge("b"))
        try pending.insert(Fixture.challenge("c"))
        try pending.insert(Fixture.challenge("d"))
        #expect(pending.count == 3)
        #expect(try pending.get(id: "old") == nil)
        let refused = try #require(throws: StoreError.self) { try pending.insert(Fixture.challenge("e")) }
        #expect(refused.code == .unavailable)
        #expect(pending.count == 3)
        // Within the second after a sweep, a full set is not scanned again; after it, it is.
        var expiring = Fixture.challenge("f", expiresAt: t0.plus(seconds: 0.5))
        expiring.createdAt = t0
        #expect(try pending.take(id: "d", now: t0) != nil)
        try pending.insert(expiring)
        var early = Fixture.challenge("g")
        early.createdAt = t0.plus(seconds: 0.6)
        #expect(throws: StoreError.self) { try pending.insert(early) }
        #expect(try pending.get(id: "f") != nil, "not swept within the second")
        var later = Fixture.challenge("h")
        later.createdAt = t0.plus(seconds: 1)
        try pending.insert(later)
        #expect(try pending.get(id: "f") == nil)
        #expect(try pending.get(id: "h") != nil)
    }

    @Test("sweeps: expired ones before a time, every one of a user")
    func sweeps() throws {
        let pending = PendingChallenges()
        try pending.insert(Fixture.challenge("soon", userID: "u1", expiresAt: t0.plus(seconds: 10)))
        try pending.insert(Fixture.challenge("later", userID: "u1"))
        try pending.insert(Fixture.challenge("other", userID: "u2"))
        #expect(pending.removeExpired(before: t0.plus(seconds: 9)) == 0)
        #expect(pending.removeExpired(before: t0.plus(seconds: 10)) == 1)
        #expect(pending.removeAll(userID: "u1") == 1)
        #expect(try pending.get(id: "other") != nil)
        #expect(pending.count == 1)
    }

    @Test("text a database refuses (a NUL) is refused the same way")
    func unstorableText() throws {
        let pending = PendingChallenges()
        for attempt in [{ _ = try pending.get(id: "a\u{0}") }, { _ = try pending.take(id: "a\u{0}", now: t0) },
                        { _ = try pending.take(id: "a", requestID: "r\u{0}", purpose: "p", now: t0) },
                        { try pending.insert(Fixture.challenge("a\u{0}")) }] as [() throws -> Void] {
            let error = try #require(throws: StoreError.self) { try attempt() }
            #expect(error.code == .unstorableValue)
        }
    }

    @Test("a SQLite store holds them; a PostgreSQL store keeps every challenge a row", arguments: Backend.allCases)
    func perBackend(backend: Backend) throws {
        let store = try Store.open(try backend.makeURL())
        #expect((store.pendingChallenges != nil) == (backend == .sqlite))
    }
}
