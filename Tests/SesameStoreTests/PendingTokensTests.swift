import Foundation
@testable import SesameStore
import SesameTestSupport
import Synchronization
import Testing

/// Passkey sign-in tokens held in memory on SQLite until their exchange: each taken once, by its project, given back
/// after a rollback, bounded, swept, dropped by a restart, and written as a row where there is no room.
@Suite("Pending sign-in tokens in memory")
struct PendingTokensTests {
    static func token(_ hash: UInt8, project: String = "p1", user: String = "u1", expiresAt: Date = t0.plus(seconds: 60),
                      createdAt: Date = t0) -> TokenRecord {
        TokenRecord(id: "t\(hash)", projectID: project, userID: user, secretHash: Array(repeating: hash, count: 32), kind: "passkey",
                    createdAt: createdAt, expiresAt: expiresAt)
    }

    @Test("a token is taken once, by its own project; an expired one is taken too (the exchange judges it)")
    func takenOnce() {
        let pending = PendingTokens()
        #expect(pending.insert(Self.token(1)))
        #expect(!pending.insert(Self.token(1)), "one per secret hash")
        #expect(pending.take(projectID: "p2", secretHash: Self.token(1).secretHash) == nil)
        #expect(pending.take(projectID: "p1", secretHash: Self.token(1).secretHash) == Self.token(1), "another project's take left it")
        #expect(pending.take(projectID: "p1", secretHash: Self.token(1).secretHash) == nil)
        #expect(pending.insert(Self.token(2, expiresAt: t0)))
        #expect(pending.take(projectID: "p1", secretHash: Self.token(2).secretHash)?.isExpired(at: t0) == true)
        #expect(pending.count == 0)
    }

    @Test("20 threads take one token: exactly one gets it")
    func oneWinner() {
        let pending = PendingTokens()
        #expect(pending.insert(Self.token(1)))
        let winners = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            if pending.take(projectID: "p1", secretHash: Self.token(1).secretHash) != nil { winners.add(1, ordering: .relaxed) }
        }
        #expect(winners.load(ordering: .relaxed) == 1)
    }

    @Test("a token given back after a rollback is usable again; one held by a rolled-back insert is dropped")
    func restoreAndRemove() {
        let pending = PendingTokens()
        #expect(pending.insert(Self.token(1)))
        let taken = pending.take(projectID: "p1", secretHash: Self.token(1).secretHash)!
        pending.restore(taken)
        pending.restore(taken)
        #expect(pending.count == 1)
        #expect(pending.take(projectID: "p1", secretHash: taken.secretHash) == taken)
        #expect(pending.insert(Self.token(2)))
        pending.remove(secretHash: Self.token(2).secretHash)
        #expect(pending.take(projectID: "p1", secretHash: Self.token(2).secretHash) == nil)
    }

    @Test("at capacity: expired tokens make room (at most once a second); live ones refuse the next, for a row instead")
    func capacity() {
        let pending = PendingTokens(capacity: 2)
        #expect(pending.insert(Self.token(1, expiresAt: t0)))
        #expect(pending.insert(Self.token(2)))
        #expect(pending.insert(Self.token(3)), "the expired one made room")
        #expect(pending.take(projectID: "p1", secretHash: Self.token(1).secretHash) == nil)
        #expect(!pending.insert(Self.token(4)))
        #expect(pending.count == 2)
        // Within the second after a sweep, a full set is not scanned again; after it, it is.
        #expect(pending.take(projectID: "p1", secretHash: Self.token(3).secretHash) != nil)
        #expect(pending.insert(Self.token(5, expiresAt: t0.plus(seconds: 0.5))))
        #expect(!pending.insert(Self.token(6, createdAt: t0.plus(seconds: 0.6))))
        #expect(pending.insert(Self.token(7, createdAt: t0.plus(seconds: 1))))
        #expect(pending.take(projectID: "p1", secretHash: Self.token(5).secretHash) == nil)
    }

    @Test("sweeps: expired ones before a time, every one of a user")
    func sweeps() {
        let pending = PendingTokens()
        #expect(pending.insert(Self.token(1, expiresAt: t0.plus(seconds: 10))))
        #expect(pending.insert(Self.token(2)))
        #expect(pending.insert(Self.token(3, user: "u2")))
        #expect(pending.removeExpired(before: t0.plus(seconds: 9)) == 0)
        #expect(pending.removeExpired(before: t0.plus(seconds: 10)) == 1)
        #expect(pending.removeAll(userID: "u1") == 1)
        #expect(pending.count == 1)
        #expect(pending.take(projectID: "p1", secretHash: Self.token(3).secretHash) != nil)
    }

    /// A store with a user `u1` in project `p1`.
    static func store(_ backend: Backend, heldTokens: Int = PendingTokens.defaultCapacity, url: String? = nil) throws -> Store {
        let store = try Store(database: Store.open(url ?? backend.makeURL()).database, rateLimitSharing: RateLimitRepository.sharingInterval,
                              heldTokens: heldTokens)
        if try store.projects.get(id: "p1") == nil {
            try store.projects.create(Fixture.project("p1"))
            try store.users.create(Fixture.user("u1"))
        }
        return store
    }

    static func rows(_ store: Store) throws -> Int64 {
        try #require(try store.database.query("SELECT COUNT(*) AS n FROM tokens", []).first).integer("n")
    }

    static func session(_ number: UInt8) -> [String: SessionRecord] {
        ["passkey": SessionRecord(id: "s\(number)", projectID: "p1", userID: "u1", secretHash: Array(repeating: 100 + number, count: 32),
                                  provider: "passkey", factors: ["passkey"], ip: "127.0.0.1", userAgent: "test", createdAt: t0,
                                  updatedAt: t0, expiresAt: t0.plus(seconds: 3600), mfaUpdatedAt: t0)]
    }

    @Test("a sign-in's token: held in memory on SQLite (no row) while there is room, a row past it and on PostgreSQL; either is exchanged once",
          arguments: Backend.allCases)
    func heldOrRow(backend: Backend) throws {
        let store = try Self.store(backend, heldTokens: 1)
        try store.transaction { transaction throws(StoreError) in try store.holdSignInToken(Self.token(1), in: transaction) }
        try store.transaction { transaction throws(StoreError) in try store.holdSignInToken(Self.token(2), in: transaction) }
        #expect(store.pendingTokens?.count == (backend == .sqlite ? 1 : nil))
        #expect(try Self.rows(store) == (backend == .sqlite ? 1 : 2))
        for hash: UInt8 in [1, 2] {
            #expect(try store.exchangeToken(projectID: "p1", secretHash: Self.token(hash).secretHash, userID: "u1", now: t0,
                                            sessions: Self.session(hash)) == .created(Self.session(hash)["passkey"]!))
            #expect(try store.exchangeToken(projectID: "p1", secretHash: Self.token(hash).secretHash, userID: "u1", now: t0,
                                            sessions: Self.session(hash + 10)) == .unknownToken)
        }
        #expect(try Self.rows(store) == 0)
        #expect(store.pendingTokens?.count ?? 0 == 0)
    }

    @Test("a rolled-back sign-in drops the token it held; a rolled-back exchange gives the token back", arguments: Backend.allCases)
    func rollbacks(backend: Backend) throws {
        let store = try Self.store(backend)
        #expect(throws: StoreError.self) {
            try store.transaction { transaction throws(StoreError) in
                try store.holdSignInToken(Self.token(1), in: transaction)
                throw StoreError(.conflict, "the sign-in failed after holding its token")
            }
        }
        #expect(store.pendingTokens?.count ?? 0 == 0)
        #expect(try store.exchangeToken(projectID: "p1", secretHash: Self.token(1).secretHash, userID: "u1", now: t0,
                                        sessions: Self.session(1)) == .unknownToken)
        // An exchange whose session cannot be stored (its secret hash is taken) rolls back: the token is still good.
        try store.transaction { transaction throws(StoreError) in try store.holdSignInToken(Self.token(2), in: transaction) }
        try store.sessions.create(Self.session(2)["passkey"]!)
        let clash = try #require(throws: StoreError.self) {
            try store.exchangeToken(projectID: "p1", secretHash: Self.token(2).secretHash, userID: "u1", now: t0, sessions: Self.session(2))
        }
        #expect(clash.code == .conflict)
        #expect(try store.exchangeToken(projectID: "p1", secretHash: Self.token(2).secretHash, userID: "u1", now: t0,
                                        sessions: Self.session(3)) == .created(Self.session(3)["passkey"]!))
    }

    @Test("a SQLite store opened again (a restart) no longer has the tokens the last one held")
    func restart() throws {
        let url = try Backend.sqlite.makeURL()
        let first = try Self.store(.sqlite, url: url)
        try first.transaction { transaction throws(StoreError) in try first.holdSignInToken(Self.token(1), in: transaction) }
        let second = try Self.store(.sqlite, url: url)
        #expect(try second.exchangeToken(projectID: "p1", secretHash: Self.token(1).secretHash, userID: "u1", now: t0,
                                         sessions: Self.session(1)) == .unknownToken)
    }
}
