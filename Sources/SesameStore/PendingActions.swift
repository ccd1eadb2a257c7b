import Foundation
import Synchronization

/// Usernameless Authsignal sign-in actions in flight, held in this process's memory for a SQLite store: an action that
/// a sign-in opens without an idempotency key lives here from its challenge call until its verification concludes it,
/// which writes it as a row with its outcome. One server process serves a SQLite database, so the node that opened an
/// action is the one that concludes it, and the calls in between neither write nor read a row. Nobody else can name
/// such an action: it has no user yet, and its idempotency key was made here and never shown.
///
/// Concluding takes the action (``take(id:)``: of concurrent callers, one gets it) and writes its row; it stays readable
/// here until that row is committed (``forget(id:)``), so a reader always finds it in one place or the other; a
/// transaction that does not commit gives it back (``restore(id:)``, registered with ``SQLConnection/onRollback(_:)``),
/// COMMIT failures and reruns included. A restart drops the actions in flight: their sign-ins fail as at their
/// expiry. At most ``capacity`` are held; the caller writes a row for one that finds no room, as on PostgreSQL.
public final class PendingActions: Sendable {
    /// The most actions held at once (about 500 bytes each).
    public let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    private struct Entry {
        var record: AuthsignalActionRecord
        /// Taken by the transaction that writes its row, until that commits (or rolls back and gives it back).
        var taken = false
    }

    /// An empty set of at most `capacity` actions.
    public init(capacity: Int = 10_000) { self.capacity = capacity }

    /// Holds `action`.
    /// - Returns: `false` when ``capacity`` actions (or one with its ID) are held.
    public func insert(_ action: AuthsignalActionRecord) -> Bool {
        entries.withLock { entries in
            guard entries.count < capacity, entries[action.id] == nil else { return false }
            entries[action.id] = Entry(record: action)
            return true
        }
    }

    /// The action with this ID as it was opened (taken or not), left in place.
    /// - Throws: ``StoreError/Code/unstorableValue`` for text a database would refuse, as a row's read would.
    public func get(id: String) throws(StoreError) -> AuthsignalActionRecord? {
        try checkStorableText(id, index: 1)
        return entries.withLock { $0[id]?.record }
    }

    /// Takes the action with this ID, to write it as a row: `nil` when it is not held or another caller took it (whose
    /// row the caller then finds, once committed).
    public func take(id: String) -> AuthsignalActionRecord? {
        entries.withLock { entries in
            guard let entry = entries[id], !entry.taken else { return nil }
            entries[id]?.taken = true
            return entry.record
        }
    }

    /// Gives back an action taken by a transaction that rolled back.
    public func restore(id: String) {
        entries.withLock { $0[id]?.taken = false }
    }

    /// Forgets an action once the row of the transaction that took it is committed (one not taken stays).
    public func forget(id: String) {
        entries.withLock { entries in
            if entries[id]?.taken == true { entries[id] = nil }
        }
    }

    /// Drops every action created before `time`.
    /// - Returns: how many were dropped.
    @discardableResult
    public func removeExpired(createdBefore time: Date) -> Int {
        entries.withLock { $0.remove { $0.value.record.createdAt.millisecondsSince1970 < time.millisecondsSince1970 } }
    }

    /// How many actions are held.
    public var count: Int { entries.withLock { $0.count } }
}
