import Foundation
internal import CSQLite

/// Group commit for SQLite: every write runs on one writer connection, as a member of a batch, inside a savepoint of
/// the batch's one transaction, and the batch commits once, with one fsync, for all its members.
///
/// A member that fails is rolled back to its savepoint, alone; the others commit. A member that succeeds returns only
/// after its batch committed (at `synchronous=FULL`, so an acknowledged write survives SIGKILL and power loss). The
/// batch grows while writers queue for the connection: a writer that finishes while another waits hands the
/// connection on, and the last one, or the ``maximumMembers``-th, commits. Without concurrency each write is its own
/// batch, as before. If a failure ends the whole transaction (SQLite rolls it back on some I/O and memory errors),
/// every member of that batch gets the error: nothing is half-written.
final class GroupCommit: @unchecked Sendable {
    // The invariant that makes this `@unchecked Sendable`: `condition` guards every stored property except
    // `connection` and `batchOpen`, which only the thread that set `writing` touches, until it clears it.

    /// How many members a batch takes at most before it commits.
    static let maximumMembers = 64

    private let condition = NSCondition()
    private let open: @Sendable () throws(StoreError) -> SQLiteConnection
    private var connection: SQLiteConnection?
    private var writing = false
    private var waiting = 0
    private var batchOpen = false
    /// The open batch: its members that succeeded and wait for its commit.
    private var batch = Batch()
    /// Batches committed (or rolled back) so far.
    private var batchesFinished = 0

    /// The outcome of one batch, which its waiting members read.
    private final class Batch {
        var members = 0
        var finished = false
        var error: StoreError?
    }

    init(open: @escaping @Sendable () throws(StoreError) -> SQLiteConnection) {
        self.open = open
    }

    /// Runs `body` as a member of a batch and returns once that batch committed.
    /// - Throws: what `body` throws (its writes rolled back alone), or the error that ended the batch.
    func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        condition.lock()
        waiting += 1
        while writing { condition.wait() }
        waiting -= 1
        writing = true
        condition.unlock()

        // This thread alone uses the connection and `batchOpen` until it clears `writing`.
        let value: T
        do throws(StoreError) {
            let connection: SQLiteConnection
            if let existing = self.connection { connection = existing } else { connection = try open() }
            self.connection = connection
            if !batchOpen {
                try connection.run("BEGIN IMMEDIATE", [])
                batchOpen = true
            }
            value = try connection.runMember(body)
        } catch {
            if batchOpen, connection?.isInTransaction != true {
                // The failure ended the whole transaction: the batch's other members are lost with it.
                batchOpen = false
                finish(StoreError(error.code, "the batch this write joined was rolled back: \(error.detail)", transient: error.isTransient))
            } else {
                release(member: false)
            }
            throw error
        }
        let joined = batch
        release(member: true)
        if let error = wait(for: joined) { throw error }
        return value
    }

    /// Ends this thread's turn on the connection: hands it on when another writer waits and the batch has room,
    /// else commits the batch (an empty one too, so no transaction stays open without a writer).
    private func release(member: Bool) {
        condition.lock()
        if member { batch.members += 1 }
        let handOn = !batchOpen || (waiting > 0 && batch.members < Self.maximumMembers)
        if handOn {
            writing = false
            condition.broadcast()
        }
        condition.unlock()
        if !handOn { commit() }
    }

    /// Commits the open batch (this thread still holds the connection), then lets the next writer in.
    private func commit() {
        var failure: StoreError?
        if let connection {
            do throws(StoreError) {
                try connection.run("COMMIT", [])
            } catch {
                failure = error
                if connection.isInTransaction { connection.rollback() }
            }
        }
        batchOpen = false
        finish(failure)
    }

    /// Records the open batch's outcome, starts the next one and lets its waiting members (and the next writer) go.
    private func finish(_ error: StoreError?) {
        condition.lock()
        batch.finished = true
        batch.error = error
        batch = Batch()
        batchesFinished += 1
        writing = false
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `batch` committed; its error, if it failed.
    private func wait(for batch: Batch) -> StoreError? {
        condition.lock()
        defer { condition.unlock() }
        while !batch.finished { condition.wait() }
        return batch.error
    }

    /// Writers waiting for the connection now.
    var waitingWriters: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    /// Batches committed or rolled back so far (tests compare it with the writes, to see that members were grouped).
    var finishedBatches: Int {
        condition.lock()
        defer { condition.unlock() }
        return batchesFinished
    }
}
