import Foundation
import SesameStore
import Testing

/// Inline verification's per-request call counters in memory (SQLite): each counter on its own, from the row's count,
/// within a bounded room swept of expired requests at most once a second.
@Suite struct RequestCallCountersTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("each request and counter counts on its own, never below the row's count")
    func counts() {
        let counters = RequestCallCounters()
        let expiry = Self.t0.addingTimeInterval(300)
        #expect(counters.count("req_a", .options, stored: 0, expiresAt: expiry, now: Self.t0) == 1)
        #expect(counters.count("req_a", .options, stored: 0, expiresAt: expiry, now: Self.t0) == 2)
        #expect(counters.count("req_a", .complete, stored: 0, expiresAt: expiry, now: Self.t0) == 1)
        #expect(counters.count("req_b", .options, stored: 4, expiresAt: expiry, now: Self.t0) == 5, "a first count goes on from the row's")
        #expect(counters.count("req_a", .complete, stored: 7, expiresAt: expiry, now: Self.t0) == 8, "as does a later one")
        #expect(counters.count("req_c", .options, stored: .max, expiresAt: expiry, now: Self.t0) == .max, "a corrupt row's count cannot overflow")
        #expect(counters.count == 3)
    }

    @Test("when full: expired requests are swept for room at most once a second; without room, nil")
    func capacity() {
        let counters = RequestCallCounters(capacity: 2)
        #expect(counters.count("req_a", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(10), now: Self.t0) == 1)
        #expect(counters.count("req_b", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(300), now: Self.t0) == 1)
        // Full at 9.8 s: the sweep finds nothing expired.
        let full = Self.t0.addingTimeInterval(9.8)
        #expect(counters.count("req_c", .options, stored: 0, expiresAt: full.addingTimeInterval(300), now: full) == nil)
        // req_a has expired at 10.5 s, but the last sweep ran less than a second ago.
        let later = Self.t0.addingTimeInterval(10.5)
        #expect(counters.count("req_c", .options, stored: 0, expiresAt: later.addingTimeInterval(300), now: later) == nil)
        #expect(counters.count("req_b", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(300), now: later) == 2, "a held request still counts")
        let second = Self.t0.addingTimeInterval(11)
        #expect(counters.count("req_c", .options, stored: 0, expiresAt: second.addingTimeInterval(300), now: second) == 1)
        #expect(counters.count == 2)
    }

    @Test("removeExpired drops the requests that expired by then")
    func removeExpired() {
        let counters = RequestCallCounters()
        _ = counters.count("req_a", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(10), now: Self.t0)
        _ = counters.count("req_b", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(20), now: Self.t0)
        #expect(counters.removeExpired(before: Self.t0.addingTimeInterval(10)) == 1)
        #expect(counters.count == 1)
        #expect(counters.count("req_a", .options, stored: 0, expiresAt: Self.t0.addingTimeInterval(10), now: Self.t0) == 1, "counted anew")
    }
}
