import Foundation
import Synchronization

/// Fixed-window rate-limit counters in this process's memory: SQLite's (see ``RateLimitRepository``). An embedded
/// database is served by one process, so its memory holds every count, at no write to the database; a restart starts
/// the windows over.
///
/// At most `capacity` counters are held: a key that would be one more (a flood from that many addresses within the
/// windows still held) is refused as over its limit until housekeeping prunes the windows that ended, so a flood
/// cannot evict the counts it means to escape.
final class WindowCounters: Sendable {
    private struct Key: Hashable {
        let key: String
        let windowStart: Date
    }

    /// The most counters held at once.
    let capacity: Int
    private let counters = Mutex<[Key: Int64]>([:])

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Counts `limits` in turn, as ``RateLimitRepository/increment(_:windowStart:)`` says, in one step.
    func increment(_ limits: [(key: String, limit: Int)], windowStart: Date) -> [Int64] {
        counters.withLock { counters in
            var counts: [Int64] = []
            for (key, limit) in limits {
                let slot = Key(key: key, windowStart: windowStart)
                guard let count = counters[slot].map({ $0 + 1 }) ?? (counters.count < capacity ? 1 : nil) else {
                    counts.append(.max)  // over any limit
                    break
                }
                counters[slot] = count
                counts.append(count)
                if count > Int64(limit) { break }
            }
            return counts
        }
    }

    /// The counter of `key` in the window starting at `windowStart` (0 when unused).
    func current(key: String, windowStart: Date) -> Int64 {
        counters.withLock { $0[Key(key: key, windowStart: windowStart)] ?? 0 }
    }

    /// Forgets the counters of windows that started before `time`; how many.
    func prune(before time: Date) -> Int {
        counters.withLock { counters in
            let before = counters.count
            counters = counters.filter { $0.key.windowStart >= time }
            return before - counters.count
        }
    }
}
