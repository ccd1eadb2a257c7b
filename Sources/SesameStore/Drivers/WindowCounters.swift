import Foundation
import Synchronization

/// Fixed-window rate-limit counters in this process's memory, which decide every hit (see ``RateLimitRepository``).
///
/// On SQLite they are the only counts: an embedded database is served by one process, so its memory holds every hit,
/// at no write to the database; a restart starts the windows over. On PostgreSQL (``sharingInterval`` set) each node
/// also shares its counts through the database: a counter whose node has not written it for that long, or that
/// is past half its limit, is *due*, and the hit that finds it due takes the node's unwritten hits
/// (``increment(_:windowStart:window:now:)`` returns them) for the caller to add to the shared row, whose total, with
/// every node's hits, comes back through ``shared(_:windowStart:)``. So a node's view of a counter lacks at most
/// the other nodes' hits of the last interval that were in the first half of the limit.
///
/// At most `capacity` counters are held. A key that would be one more first drops the counters of windows that ended
/// (at most once per window start, so a flood cannot make every call sweep); if none did, it is refused as over its
/// limit until housekeeping prunes, so a flood from many addresses cannot evict the counts it means to escape.
final class WindowCounters: Sendable {
    private struct Key: Hashable {
        let key: String
        let windowStart: Date
    }

    private struct Counter {
        /// This node's view: the shared total when last written, plus this node's hits since.
        var count: Int64
        /// When its window ends.
        var end: Date
        /// This node's hits not yet added to the shared row (always 0 without sharing).
        var unwritten: Int64 = 0
        /// When this node last took its hits to write (`nil`: never).
        var takenAt: ContinuousClock.Instant?
    }

    private struct State {
        var counters: [Key: Counter] = [:]
        /// The window start of the last sweep for room.
        var lastSweep = Date.distantPast

        /// Drops the counters of windows that ended by `time`, unless a sweep at `time` or later already ran.
        mutating func sweep(endedBy time: Date) {
            guard time > lastSweep else { return }
            lastSweep = time
            counters = counters.filter { $0.value.end > time }
        }
    }

    /// Hits of one key to add to its shared row.
    struct Unwritten: Equatable {
        let key: String
        let hits: Int64
    }

    /// The most counters held at once.
    let capacity: Int
    /// How long this node may count a key in memory before it writes its hits to the shared row again; `nil` when this
    /// process's counts are the only ones (SQLite).
    let sharingInterval: Duration?
    private let state = Mutex(State())

    init(capacity: Int = 100_000, sharingInterval: Duration? = nil) {
        self.capacity = capacity
        self.sharingInterval = sharingInterval
    }

    /// Counts `limits` in turn in the `window`-second window starting at `windowStart`, as
    /// ``RateLimitRepository/increment(_:windowStart:window:)`` says, in one step.
    /// - Returns: the counts, and the unwritten hits of the counted keys that are due to be shared (never any without
    ///   ``sharingInterval``); the caller adds them to the shared rows and hands the totals to ``shared(_:windowStart:)``,
    ///   or gives them back with ``unshared(_:windowStart:)`` when it could not.
    func increment(_ limits: [(key: String, limit: Int)], windowStart: Date, window: TimeInterval,
                   now: ContinuousClock.Instant = .now) -> (counts: [Int64], due: [Unwritten]) {
        state.withLock { state in
            var counts: [Int64] = [], due: [Unwritten] = []
            for (key, limit) in limits {
                let slot = Key(key: key, windowStart: windowStart)
                let held = state.counters[slot]
                if held == nil && state.counters.count >= capacity { state.sweep(endedBy: windowStart) }
                guard var counter = held ?? (state.counters.count < capacity ? Counter(count: 0, end: windowStart.addingTimeInterval(window)) : nil)
                else {
                    counts.append(.max)  // over any limit
                    break
                }
                counter.count += 1
                if let sharingInterval {
                    counter.unwritten += 1
                    let stale = counter.takenAt.map { now - $0 >= sharingInterval } ?? true
                    if stale || counter.count > Int64(limit / 2) {
                        due.append(Unwritten(key: key, hits: counter.unwritten))
                        counter.unwritten = 0
                        counter.takenAt = now
                    }
                }
                state.counters[slot] = counter
                counts.append(counter.count)
                if counter.count > Int64(limit) { break }
            }
            return (counts, due)
        }
    }

    /// Takes in the shared totals of keys whose hits were written: each view becomes the total plus this node's hits
    /// since they were taken (never less than it was).
    func shared(_ totals: [String: Int64], windowStart: Date) {
        state.withLock { state in
            for (key, total) in totals {
                let slot = Key(key: key, windowStart: windowStart)
                guard var counter = state.counters[slot] else { continue }
                // Bounded, so that not even a corrupt row can make the view overflow.
                counter.count = max(counter.count, min(total, Int64.max / 2) + counter.unwritten)
                state.counters[slot] = counter
            }
        }
    }

    /// Gives back hits that could not be written: they are written with the key's next hit.
    func unshared(_ unwritten: [Unwritten], windowStart: Date) {
        state.withLock { state in
            for entry in unwritten {
                let slot = Key(key: entry.key, windowStart: windowStart)
                guard var counter = state.counters[slot] else { continue }
                counter.unwritten += entry.hits
                counter.takenAt = nil
                state.counters[slot] = counter
            }
        }
    }

    /// This node's view of the counter of `key` in the window starting at `windowStart`, if it holds one.
    func current(key: String, windowStart: Date) -> Int64? {
        state.withLock { $0.counters[Key(key: key, windowStart: windowStart)]?.count }
    }

    /// Forgets the counters of windows that started before `time`; how many.
    func prune(before time: Date) -> Int {
        state.withLock { state in
            let before = state.counters.count
            state.counters = state.counters.filter { $0.key.windowStart >= time }
            return before - state.counters.count
        }
    }
}
