import Foundation
import Synchronization

/// The per-request call counters of inline verification (`passkey-options` and `passkey-complete` calls per request)
/// held in this process's memory, for a SQLite store: one server process serves a SQLite database, so it sees every
/// call, and counting one costs no write to the database (the request itself is only read).
///
/// A request is first counted from the count its row holds (``VerificationRequestRepository/CallCounter``'s column,
/// which the database counts in when these counters are full), so moving between the two never lowers a count. A
/// restart starts the counts over from the rows, as it does the rate limits. At most ``capacity`` requests are held;
/// past it, those that expired are dropped first (at most once a second, so a flood does not make every call scan
/// them all), and a request that still finds no room is counted in its row instead.
public final class RequestCallCounters: Sendable {
    private struct Calls {
        var options: Int
        var complete: Int
        let expiresAt: Date

        subscript(counter: VerificationRequestRepository.CallCounter) -> Int {
            get { counter == .options ? options : complete }
            set { if counter == .options { options = newValue } else { complete = newValue } }
        }
    }

    private struct State {
        var calls: [String: Calls] = [:]
        /// When a full set may next be swept of expired requests.
        var sweeps = SweepSchedule()
    }

    /// The most requests held at once (about 150 bytes each).
    public let capacity: Int
    /// The room a store's counters have: as many requests as ``PendingChallenges`` holds challenges.
    public static let defaultCapacity = 100_000
    private let state = Mutex(State())

    /// No counts yet, room for `capacity` requests.
    public init(capacity: Int = defaultCapacity) { self.capacity = capacity }

    /// Counts one call of `counter` on the request `id`, which expires at `expiresAt` and whose row holds `stored`
    /// calls of it.
    /// - Returns: the count after this call, or `nil` when the request is not held and there is no room for it (the
    ///   caller counts it in the row).
    public func count(_ id: String, _ counter: VerificationRequestRepository.CallCounter, stored: Int, expiresAt: Date, now: Date) -> Int? {
        state.withLock { state in
            var calls: Calls
            if let held = state.calls[id] {
                calls = held
            } else {
                let room = state.sweeps.makeRoom(in: &state.calls, capacity: capacity, at: now) { $0.expiresAt <= now }
                guard room else { return nil }
                calls = Calls(options: 0, complete: 0, expiresAt: expiresAt)
            }
            // Bounded, so that not even a corrupt row can make the count overflow.
            calls[counter] = min(max(calls[counter], stored), Int.max - 1) + 1
            state.calls[id] = calls
            return calls[counter]
        }
    }

    /// Drops the counts of every request that expired at or before `time`.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeExpired(before time: Date) -> Int {
        state.withLock { $0.calls.remove { $0.value.expiresAt <= time } }
    }

    /// How many requests are held, expired ones included.
    public var count: Int { state.withLock { $0.calls.count } }
}
