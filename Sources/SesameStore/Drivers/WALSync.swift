import Foundation

/// Group commit for SQLite, at the fsync: transactions commit one after another on the writer connection at
/// `synchronous=NORMAL` (into the write-ahead log, without waiting for the disk), and each then waits until the log
/// is on stable storage. The first to wait flushes it (fdatasync) for every commit made so far; commits that land
/// while a flush runs share the next one. So an acknowledged write survives SIGKILL (it is in the log) and power loss
/// (the log is flushed before the caller hears back), at one fsync per group of concurrent commits, not per request,
/// and a flush never holds up the next commit.
///
/// A flush waits, at most ``gatheringDelay``, while other writers are between starting and committing (as PostgreSQL's
/// `commit_delay` with `commit_siblings`), so that a burst of concurrent writes shares one flush; alone, a writer
/// flushes at once. The log is flushed through a connection of its own, used for nothing else, so its file handle is
/// never shared.
final class WALSync: @unchecked Sendable {
    // The invariant that makes this `@unchecked Sendable`: `condition` guards the counters and `flushing`; only the
    // thread that set `flushing` uses `connection`, until it clears it.

    private let condition = NSCondition()
    private let connection: SQLiteConnection
    /// Commits noted so far; a commit's ticket is the count after it.
    private var committed: UInt64 = 0
    /// Every commit up to this ticket is on stable storage.
    private var durable: UInt64 = 0
    private var flushing = false
    /// Whether the thread that set `flushing` waits for writers in flight before it flushes.
    private var gathering = false
    private var flushes = 0
    /// Writers that started a transaction and have not committed or failed yet.
    private var writing = 0

    /// How long a flush waits at most for writers in flight to commit and join it.
    static let gatheringDelay: TimeInterval = 0.000_5

    /// - Parameter connection: a connection of the database, in WAL mode, used only here.
    init(connection: SQLiteConnection) throws(StoreError) {
        self.connection = connection
        // The connection opens its handle of the log with its first read.
        _ = try connection.query("SELECT count(*) AS n FROM sqlite_master", [])
    }

    /// Notes a writer that is about to wait for the writer connection; ``noteCommit()`` or ``noteEnd()`` follows.
    func noteWriter() {
        condition.lock()
        writing += 1
        condition.unlock()
    }

    /// Notes a writer's transaction that ended without a commit to flush (it failed or changed nothing).
    func noteEnd() {
        condition.lock()
        writing -= 1
        wakeGatheringFlush()
        condition.unlock()
    }

    /// Notes a commit that just returned; call it on the writer, so tickets follow commit order.
    /// - Returns: the commit's ticket, for ``waitUntilDurable(_:)``.
    func noteCommit() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        writing -= 1
        committed += 1
        wakeGatheringFlush()
        return committed
    }

    /// Wakes the flush waiting for writers once the last one is done. Only then: a wake-up per commit stirred every
    /// thread waiting for a flush, each to go back to sleep (under the sign-in bench, 0.69 `futex` calls per HTTP
    /// response against 0.27 without them). Call it with `condition` locked.
    private func wakeGatheringFlush() {
        if gathering && writing == 0 { condition.broadcast() }
    }

    /// Returns once the commit with `ticket` is on stable storage, flushing the log unless a flush that covers it
    /// (one started after it) is already running.
    /// - Throws: ``StoreError/Code/unavailable`` when the flush fails; the commit may then be lost on power loss.
    func waitUntilDurable(_ ticket: UInt64) throws(StoreError) {
        condition.lock()
        defer { condition.unlock() }
        while durable < ticket {
            guard !flushing else {
                condition.wait()
                continue
            }
            flushing = true
            // Writers in flight commit within moments: let them join this flush.
            let deadline = Date().addingTimeInterval(Self.gatheringDelay)
            gathering = true
            while writing > 0 && condition.wait(until: deadline) {}
            gathering = false
            let target = committed
            condition.unlock()
            let status = connection.syncWAL()
            condition.lock()
            flushing = false
            flushes += 1
            if status { durable = max(durable, target) }
            condition.broadcast()
            guard status else { throw StoreError(.unavailable, "the write-ahead log could not be flushed to disk") }
        }
    }

    /// Flushes done so far (tests compare it with the commits, to see that they were grouped).
    var flushCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return flushes
    }

    /// Runs `body` as if a flush were in progress, so that commits meanwhile wait for the next one (tests only use it
    /// to make a group happen on purpose).
    func whileFlushing(_ body: () -> Void) {
        condition.lock()
        while flushing { condition.wait() }
        flushing = true
        condition.unlock()
        body()
        condition.lock()
        flushing = false
        condition.broadcast()
        condition.unlock()
    }
}
