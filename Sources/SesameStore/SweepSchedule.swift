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
