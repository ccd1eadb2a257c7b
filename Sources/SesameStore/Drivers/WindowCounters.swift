import Foundation
import Synchronization

/// Fixed-window rate-limit counters in this process's memory: SQLite's (see ``RateLimitRepository``). An embedded
/// database is served by one process, so its memory holds every count, at no write to the database; a restart starts
/// the windows over.
///
/// At most `capacity` counters are held. A key that would be one more first drops the counters of windows that ended
/// (at most once per window start, so a flood cannot make every call sweep); if none did, it is refused as over its
/// limit until housekeeping prunes, so a flood from many addresses cannot evict the counts it means to escape.
final class WindowCounters: Sendable {
    private struct Key: Hashable {
        let key: String
        let windowStart: Date
    }

    private struct State {
        /// Each counter, and when its window ends.
        var counters: [Key: (count: Int64, end: Date)] = [:]
        /// The window start of the last sweep for room.
        var lastSweep = Date.distantPast

        /// Drops the counters of windows that ended by `time`, unless a sweep at `time` or later already ran.
        mutating func sweep(endedBy time: Date) {
            guard time > lastSweep else { return }
            lastSweep = time
            counters = counters.filter { $0.value.end > time }
        }
    }

    /// The most counters held at once.
    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Counts `limits` in turn in the `window`-second window starting at `windowStart`, as
    /// ``RateLimitRepository/increment(_:windowStart:window:)`` says, in one step.
    func increment(_ limits: [(key: String, limit: Int)], windowStart: Date, window: TimeInterval) -> [Int64] {
        state.withLock { state in
            var counts: [Int64] = []
            for (key, limit) in limits {
                let slot = Key(key: key, windowStart: windowStart)
                let held = state.counters[slot]?.count
                if held == nil && state.counters.count >= capacity { state.sweep(endedBy: windowStart) }
                guard let count = held.map({ $0 + 1 }) ?? (state.counters.count < capacity ? 1 : nil) else {
                    counts.append(.max)  // over any limit
                    break
                }
                state.counters[slot] = (count, windowStart.addingTimeInterval(window))
                counts.append(count)
                if count > Int64(limit) { break }
            }
            return counts
        }
    }

    /// The counter of `key` in the window starting at `windowStart` (0 when unused).
    func current(key: String, windowStart: Date) -> Int64 {
        state.withLock { $0.counters[Key(key: key, windowStart: windowStart)]?.count ?? 0 }
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
