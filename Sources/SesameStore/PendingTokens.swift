import Foundation
import Synchronization

/// Passkey sign-in tokens waiting for their exchange, held in this process's memory for a SQLite store: a token lives
/// from its sign-in's finish until the exchange for a session takes it (within a minute; in practice the next call),
/// and one server process serves a SQLite database, so the process that made a token is the one that takes it. Neither
/// step then writes or deletes a row, which makes a sign-in's two write transactions a page smaller each.
///
/// Each token is taken at most once: every change happens under one lock. A token is ceremony state in flight, which a
/// power cut could lose as a row too (the finish commits without waiting for the disk on SQLite): a restart drops the
/// tokens held, and the person signs in again, as after an expiry. At most ``capacity`` are held (expired ones dropped
/// first, at most once a second); ``Store/holdSignInToken(_:in:)`` stores a token that finds no room as a row, as on
/// PostgreSQL.
public final class PendingTokens: Sendable {
    /// The most tokens held at once (about 300 bytes each).
    public let capacity: Int
    private let records = Mutex<[[UInt8]: TokenRecord]>([:])
    /// When a full set may next be swept of expired tokens (by the inserting token's creation time).
    private let sweeps = Mutex(SweepSchedule())

    /// The capacity a store's set has: a few megabytes, and a minute of sign-ins at 160 per second never exchanged.
    public static let defaultCapacity = 10_000

    /// An empty set of at most `capacity` tokens.
    public init(capacity: Int = defaultCapacity) { self.capacity = capacity }

    /// Holds `token`.
    /// - Returns: `false` when ``capacity`` live tokens (or one with its secret's hash) are held.
    public func insert(_ token: TokenRecord) -> Bool {
        records.withLock { records in
            let now = token.createdAt
            guard records[token.secretHash] == nil,
                  sweeps.withLock({ $0.makeRoom(in: &records, capacity: capacity, at: now) { $0.isExpired(at: now) } })
            else { return false }
            records[token.secretHash] = token
            return true
        }
    }

    /// Takes the project's token with this secret's hash; one of another project is left in place.
    /// - Returns: the token, or `nil` when none is held for the project (an expired one is returned: the caller judges it).
    public func take(projectID: String, secretHash: [UInt8]) -> TokenRecord? {
        records.withLock { records in
            guard records[secretHash]?.projectID == projectID else { return nil }
            return records.removeValue(forKey: secretHash)
        }
    }

    /// Gives back a token taken by a transaction that rolled back, unless one with its secret's hash is held again.
    public func restore(_ token: TokenRecord) {
        records.withLock { records in
            if records[token.secretHash] == nil { records[token.secretHash] = token }
        }
    }

    /// Drops the token with this secret's hash (held by a transaction that rolled back).
    public func remove(secretHash: [UInt8]) {
        _ = records.withLock { $0.removeValue(forKey: secretHash) }
    }

    /// Drops every token that expires at or before `time`.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeExpired(before time: Date) -> Int {
        records.withLock { $0.remove { $0.value.isExpired(at: time) } }
    }

    /// Drops every token of a user.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeAll(userID: String) -> Int {
        records.withLock { $0.remove { $0.value.userID == userID } }
    }

    /// How many tokens are held, expired ones included.
    public var count: Int { records.withLock { $0.count } }
}
