import Foundation
import SesameTestSupport
import Testing
@testable import SesameStore

/// The rate-limit counters held in the serving process, alone on SQLite and shared through the database on PostgreSQL
/// (the chain's rules are checked on both backends in `StoreTests`).
@Suite struct WindowCountersTests {
    let window = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("on SQLite the counters live in the process: the rate_limits table stays empty")
    func notInTheDatabase() throws {
        let store = try Store(database: SQLiteDatabase(path: try freshSQLitePath()))
        #expect(try store.rateLimits.increment([("ip:1", 10), ("tenant:t", 10)], windowStart: window) == [1, 1])
        #expect(try store.rateLimits.current(key: "tenant:t", windowStart: window) == 1)
        #expect(try store.database.query("SELECT key FROM rate_limits", []).isEmpty)
    }

    @Test("when full, a new key is refused as over any limit and stops the chain; held keys still count; a prune makes room")
    func capacity() {
        let counters = WindowCounters(capacity: 3)
        #expect(counters.increment([("ip:1", 5), ("tenant:t", 5)], windowStart: window, window: 3600).counts == [1, 1])
        #expect(counters.increment([("ip:2", 5)], windowStart: window.addingTimeInterval(60), window: 3600).counts == [1])
        // A fourth key: no window has ended, so it is refused, and the tenant's counter after it is not counted.
        #expect(counters.increment([("ip:3", 5), ("tenant:t", 5)], windowStart: window, window: 3600).counts == [.max])
        #expect(counters.current(key: "tenant:t", windowStart: window) == 1)
        #expect(counters.increment([("ip:1", 5), ("tenant:t", 5)], windowStart: window, window: 3600).counts == [2, 2])
        // The window that started first goes; the new key now counts.
        #expect(counters.prune(before: window.addingTimeInterval(60)) == 2)
        #expect(counters.current(key: "ip:1", windowStart: window) == nil)
        #expect(counters.increment([("ip:3", 5), ("tenant:t", 5)], windowStart: window.addingTimeInterval(60), window: 3600).counts == [1, 1])
    }

    @Test("when full, the counters of windows that ended make room for a key of a later window; those still running stay")
    func endedWindowsMakeRoom() {
        let counters = WindowCounters(capacity: 3)
        #expect(counters.increment([("ip:1", 5)], windowStart: window, window: 60).counts == [1])
        #expect(counters.increment([("ip:2", 5)], windowStart: window, window: 60).counts == [1])
        #expect(counters.increment([("ip:1:hour", 5)], windowStart: window, window: 3600).counts == [1])
        // Still the first minute: nothing has ended, so a new key is refused.
        #expect(counters.increment([("ip:3", 5)], windowStart: window, window: 60).counts == [.max])
        // The next minute: both minute counters ended and go; the hour's stays and counts on.
        #expect(counters.increment([("ip:3", 5)], windowStart: window.addingTimeInterval(60), window: 60).counts == [1])
        #expect(counters.current(key: "ip:1", windowStart: window) == nil)
        #expect(counters.increment([("ip:1:hour", 5)], windowStart: window, window: 3600).counts == [2])
    }

    @Test("sharing: a key's first hit is due, then its hits are taken at most once per interval while in the first half of the limit, and every hit past the half")
    func sharingSchedule() {
        let counters = WindowCounters(sharingInterval: .milliseconds(100))
        let t0 = ContinuousClock.now
        func hit(_ limit: Int, at offset: Duration) -> (counts: [Int64], due: [WindowCounters.Unwritten]) {
            counters.increment([("ip:1", limit)], windowStart: window, window: 60, now: t0 + offset)
        }
        #expect(hit(10, at: .zero).due == [.init(key: "ip:1", hits: 1)])
        #expect(hit(10, at: .milliseconds(10)).due.isEmpty)
        #expect(hit(10, at: .milliseconds(50)).due.isEmpty)
        // The interval since the last take has passed: the hits since, this one with them.
        #expect(hit(10, at: .milliseconds(100)) == ([4], [.init(key: "ip:1", hits: 3)]))
        #expect(hit(10, at: .milliseconds(110)) == ([5], []))
        // Past half the limit (6 > 5): every hit, whatever the time.
        #expect(hit(10, at: .milliseconds(120)) == ([6], [.init(key: "ip:1", hits: 2)]))
        #expect(hit(10, at: .milliseconds(121)) == ([7], [.init(key: "ip:1", hits: 1)]))
        // Without sharing nothing is ever due.
        let alone = WindowCounters()
        #expect((0..<5).allSatisfy { _ in alone.increment([("ip:1", 2)], windowStart: window, window: 60).due.isEmpty })
    }

    @Test("sharing: the shared total plus the hits since becomes the view, never lowering it; hits that could not be written are given back and due with the next hit")
    func sharedTotals() {
        let counters = WindowCounters(sharingInterval: .seconds(60))
        let t0 = ContinuousClock.now
        #expect(counters.increment([("k", 100)], windowStart: window, window: 60, now: t0).due == [.init(key: "k", hits: 1)])
        _ = counters.increment([("k", 100)], windowStart: window, window: 60, now: t0)
        // Other nodes counted 10 more: the view is their total plus this node's hit since the take.
        counters.shared(["k": 11], windowStart: window)
        #expect(counters.current(key: "k", windowStart: window) == 12)
        // An older total (a write that raced with a later one) never lowers the view.
        counters.shared(["k": 3], windowStart: window)
        #expect(counters.current(key: "k", windowStart: window) == 12)
        // A write that failed: its hits come back, and the next hit takes them again, whatever the interval.
        counters.unshared([.init(key: "k", hits: 1)], windowStart: window)
        #expect(counters.increment([("k", 100)], windowStart: window, window: 60, now: t0).due == [.init(key: "k", hits: 3)])
    }

    @Test("two nodes on one PostgreSQL share their counts: each writes a key's hits with its first, then once per interval in the first half of the limit and with every hit past it, each decided on every node's total")
    func rateLimitsShared() throws {
        let url = try Backend.postgres.makeURL()
        let interval = Duration.seconds(1)
        let nodeA = try Store(database: PostgresDatabase(url: url), rateLimitSharing: interval)
        let nodeB = try Store(database: PostgresDatabase(url: url), rateLimitSharing: interval)
        func shared(_ key: String) throws -> Int64 {
            try nodeA.database.queryFirst("SELECT count FROM rate_limits WHERE key = $1", [.text(key)])?.integer("count") ?? 0
        }
        // First half of a limit of 1,000: A's first hit is written, its next ones stay in memory for the interval.
        for expected in Int64(1)...10 { #expect(try nodeA.rateLimits.increment([("ip:x", 1000)], windowStart: window) == [expected]) }
        #expect(try shared("ip:x") == 1)
        // B's first hit writes, and is decided on, every node's written count.
        #expect(try nodeB.rateLimits.increment([("ip:x", 1000)], windowStart: window) == [2])
        // After the interval A's next hit writes the hits since, and B's next one sees them.
        Thread.sleep(forTimeInterval: 1.05)
        #expect(try nodeA.rateLimits.increment([("ip:x", 1000)], windowStart: window) == [12])
        #expect(try shared("ip:x") == 12)
        #expect(try nodeB.rateLimits.increment([("ip:x", 1000)], windowStart: window) == [13])

        // A limit of 4 (half: 2), hit on both nodes in turn: past the half every hit is written and decided on the
        // total of both, so together they allow exactly 4.
        let limit: [(key: String, limit: Int)] = [("ip:y", 4)]
        var allowed = 0
        for node in [nodeA, nodeA, nodeA, nodeB, nodeB, nodeA, nodeB, nodeA] {
            if let count = try node.rateLimits.increment(limit, windowStart: window).last, count <= 4 { allowed += 1 }
        }
        #expect(allowed == 4)
        #expect(try shared("ip:y") >= 8 - 1, "every hit but at most one in the first half was written")
    }

    @Test("on PostgreSQL a shared write that fails throws; the hits stay counted here and go with the next write")
    func failedShare() throws {
        let store = try Store(database: PostgresDatabase(url: try Backend.postgres.makeURL()), rateLimitSharing: .seconds(60))
        func hit(_ limit: Int) throws -> [Int64] { try store.rateLimits.increment([("ip:z", limit)], windowStart: window) }
        func shared() throws -> Int64? {
            try store.database.queryFirst("SELECT count FROM rate_limits WHERE key = 'ip:z'", [])?.integer("count")
        }
        #expect(try hit(1000) == [1])  // the first hit is written
        #expect(try hit(1000) == [2])  // within the interval: in memory
        // The database refuses the next write (a shared count of 3 or more); past half of a limit of 4, hit 3 is due.
        try store.database.execute("ALTER TABLE rate_limits ADD CONSTRAINT below_three CHECK (count < 3)", [])
        #expect(throws: StoreError.self) { try hit(4) }
        #expect(try shared() == 1)
        #expect(try store.rateLimits.current(key: "ip:z", windowStart: window) == 3, "the refused write's hits stay counted here")
        // Once the database takes writes again, the next hit writes them with its own, whatever the interval.
        try store.database.execute("ALTER TABLE rate_limits DROP CONSTRAINT below_three", [])
        #expect(try hit(1000) == [4])
        #expect(try shared() == 4)
    }
}
