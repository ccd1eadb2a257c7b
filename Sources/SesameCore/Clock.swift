import Foundation
import Synchronization

/// The source of the current time for every domain rule (expiry, rate-limit windows, recency).
public protocol SesameClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The wall clock.
public struct SystemClock: SesameClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that tests set and advance by hand.
public final class ManualClock: SesameClock {
    private let current: Mutex<Date>

    /// Creates a clock showing `start`.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { current.withLock { $0 = date } }
}
