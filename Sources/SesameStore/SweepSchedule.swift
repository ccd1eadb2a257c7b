import Foundation

/// When a full in-memory set (``PendingChallenges``, ``PendingTokens``, ``RequestCallCounters``) may drop its expired
/// entries to make room: at most once a second, by the time of the insert that finds it full, so that a flood does not
/// make every refused insert scan them all. A clock that went back makes a sweep due at once.
struct SweepSchedule {
    private var last: Date?

    /// Whether a sweep is due at `now`; if so, it counts as done.
    mutating func isDue(at now: Date) -> Bool {
        guard last.map({ now.timeIntervalSince($0) >= 1 || now < $0 }) ?? true else { return false }
        last = now
        return true
    }

    /// Whether `entries` has room for one more under `capacity`; a full set first drops the entries `isExpired` picks,
    /// when a sweep is due at `now`. The rule every bounded in-memory set applies before it takes a new entry.
    mutating func makeRoom<Key, Value>(in entries: inout [Key: Value], capacity: Int, at now: Date,
                                       isExpired: (Value) -> Bool) -> Bool {
        if entries.count >= capacity, isDue(at: now) { _ = entries.remove { isExpired($0.value) } }
        return entries.count < capacity
    }
}

extension Dictionary {
    /// Removes every entry `isRemoved` picks, as the in-memory sets sweep theirs.
    /// - Returns: how many were removed.
    mutating func remove(where isRemoved: (Element) -> Bool) -> Int {
        let before = count
        self = filter { !isRemoved($0) }
        return before - count
    }
}
