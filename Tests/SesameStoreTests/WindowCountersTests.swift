import Foundation
import Testing
@testable import SesameStore

/// SQLite's rate-limit counters, held in the serving process (the chain's rules are checked on both backends in
/// `StoreTests`).
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
        #expect(counters.increment([("ip:1", 5), ("tenant:t", 5)], windowStart: window, window: 3600) == [1, 1])
        #expect(counters.increment([("ip:2", 5)], windowStart: window.addingTimeInterval(60), window: 3600) == [1])
        // A fourth key: no window has ended, so it is refused, and the tenant's counter after it is not counted.
        #expect(counters.increment([("ip:3", 5), ("tenant:t", 5)], windowStart: window, window: 3600) == [.max])
        #expect(counters.current(key: "tenant:t", windowStart: window) == 1)
        #expect(counters.increment([("ip:1", 5), ("tenant:t", 5)], windowStart: window, window: 3600) == [2, 2])
        // The window that started first goes; the new key now counts.
        #expect(counters.prune(before: window.addingTimeInterval(60)) == 2)
        #expect(counters.current(key: "ip:1", windowStart: window) == 0)
        #expect(counters.increment([("ip:3", 5), ("tenant:t", 5)], windowStart: window.addingTimeInterval(60), window: 3600) == [1, 1])
    }

    @Test("when full, the counters of windows that ended make room for a key of a later window; those still running stay")
    func endedWindowsMakeRoom() {
        let counters = WindowCounters(capacity: 3)
        #expect(counters.increment([("ip:1", 5)], windowStart: window, window: 60) == [1])
        #expect(counters.increment([("ip:2", 5)], windowStart: window, window: 60) == [1])
        #expect(counters.increment([("ip:1:hour", 5)], windowStart: window, window: 3600) == [1])
        // Still the first minute: nothing has ended, so a new key is refused.
        #expect(counters.increment([("ip:3", 5)], windowStart: window, window: 60) == [.max])
        // The next minute: both minute counters ended and go; the hour's stays and counts on.
        #expect(counters.increment([("ip:3", 5)], windowStart: window.addingTimeInterval(60), window: 60) == [1])
        #expect(counters.current(key: "ip:1", windowStart: window) == 0)
        #expect(counters.increment([("ip:1:hour", 5)], windowStart: window, window: 3600) == [2])
    }
}
