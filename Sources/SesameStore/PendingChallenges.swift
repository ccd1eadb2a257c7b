import Foundation
import Synchronization

/// Challenges of authentication ceremonies held in this process's memory, for a SQLite store: one server process
/// serves a SQLite database, so the node that issued a challenge is the one that takes it back, and neither needs a
/// write or a read of the database.
///
/// Each challenge is taken at most once: every change happens under one lock. A restart drops the challenges of the
/// ceremonies in flight (the person starts again, as after an expiry) and can never bring a used one back. At most
/// ``capacity`` are held; past it, expired ones are dropped first (at most once a second, so a flood does not make
/// every refused insert scan them all), and a new one is refused (``StoreError/Code/unavailable``) while that many
/// are held. Text a database would refuse (a NUL character) is
/// refused the same way (``StoreError/Code/unstorableValue``), so a caller sees one behaviour on every backend.
public final class PendingChallenges: Sendable {
    /// The most challenges held at once (about 300 bytes each).
    public let capacity: Int
    private let records = Mutex<[String: ChallengeRecord]>([:])
    /// When a full set may next be swept of expired challenges (by the inserting challenge's creation time).
    private let sweeps = Mutex(SweepSchedule())

    /// An empty set of at most `capacity` challenges.
    public init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Adds a challenge.
    /// - Throws: ``StoreError/Code/conflict`` when the ID is held, ``StoreError/Code/unavailable`` when ``capacity``
    ///   challenges are live.
    public func insert(_ challenge: ChallengeRecord) throws(StoreError) {
        try checkStorableText(challenge.id, index: 1)
        try records.withLock { records throws(StoreError) in
            guard records[challenge.id] == nil else { throw StoreError(.conflict, "the challenge ID exists") }
            let now = challenge.createdAt
            let room = sweeps.withLock { $0.makeRoom(in: &records, capacity: capacity, at: now) { $0.isExpired(at: now) } }
            guard room else { throw StoreError(.unavailable, "too many ceremonies in flight") }
            records[challenge.id] = challenge
        }
    }

    /// The challenge with this ID, left in place (expired ones included, until swept).
    public func get(id: String) throws(StoreError) -> ChallengeRecord? {
        try checkStorableText(id, index: 1)
        return records.withLock { $0[id] }
    }

    /// Takes the challenge with this ID, whatever it is bound to.
    /// - Returns: the challenge, or `nil` when it is absent or expired (an expired one is taken too).
    public func take(id: String, now: Date) throws(StoreError) -> ChallengeRecord? {
        try checkStorableText(id, index: 1)
        return records.withLock { $0.removeValue(forKey: id) }.flatMap { $0.isExpired(at: now) ? nil : $0 }
    }

    /// Takes the challenge with this ID only if it has this `purpose` and is bound to this `requestID`; another is left.
    /// - Returns: the challenge, or `nil` when there is none so bound or it expired (then it is taken too).
    public func take(id: String, requestID: String, purpose: String, now: Date) throws(StoreError) -> ChallengeRecord? {
        for (index, text) in [id, requestID, purpose].enumerated() { try checkStorableText(text, index: index + 1) }
        return records.withLock { records -> ChallengeRecord? in
            guard let held = records[id], held.requestID == requestID, held.purpose == purpose else { return nil }
            return records.removeValue(forKey: id)
        }.flatMap { $0.isExpired(at: now) ? nil : $0 }
    }

    /// Puts back a challenge taken by a transaction that rolled back, unless one with its ID is held again.
    public func restore(_ challenge: ChallengeRecord) {
        records.withLock { records in
            if records[challenge.id] == nil { records[challenge.id] = challenge }
        }
    }

    /// Drops every challenge that expires at or before `time`.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeExpired(before time: Date) -> Int {
        records.withLock { $0.remove { $0.value.isExpired(at: time) } }
    }

    /// Drops every challenge bound to a user.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeAll(userID: String) -> Int {
        records.withLock { $0.remove { $0.value.userID == userID } }
    }

    /// How many challenges are held, expired ones included.
    public var count: Int { records.withLock { $0.count } }
}
