import Dispatch
import Synchronization

/// A bounded pool of connections handed to one borrower at a time, created lazily and dropped when unhealthy.
///
/// A semaphore counts the free slots, so a borrower waits at most `acquireTimeout` and then gets
/// ``StoreError/Code/unavailable``. A connection found unhealthy after use is not returned; it is closed (by its
/// `deinit`) and the next borrower opens a fresh one.
final class ConnectionPool<Connection: AnyObject>: Sendable {
    /// A connection in the idle list. `@unchecked Sendable` because connections are not thread-safe; the
    /// invariant: a connection sits in the idle list or is lent to exactly one borrower, never both, and only the
    /// borrower's thread touches it while it is lent.
    private struct Idle: @unchecked Sendable {
        let connection: Connection
    }

    private let idle = Mutex<[Idle]>([])
    private let permits: DispatchSemaphore
    private let acquireTimeout: Double
    private let open: @Sendable () throws(StoreError) -> Connection
    private let isReusable: @Sendable (Connection) -> Bool

    /// Creates an empty pool.
    /// - Parameters:
    ///   - size: the most connections open at once.
    ///   - acquireTimeout: seconds a borrower waits for a free connection.
    ///   - open: opens a new connection.
    ///   - isReusable: whether a connection may go back to the pool after use.
    init(
        size: Int, acquireTimeout: Double,
        open: @escaping @Sendable () throws(StoreError) -> Connection,
        isReusable: @escaping @Sendable (Connection) -> Bool
    ) {
        precondition(size > 0, "a pool needs at least one connection")
        self.permits = DispatchSemaphore(value: size)
        self.acquireTimeout = acquireTimeout
        self.open = open
        self.isReusable = isReusable
    }

    /// Lends a connection to `body` on the calling thread, waiting a bounded time for one to be free.
    func withConnection<T>(_ body: (Connection) throws(StoreError) -> T) throws(StoreError) -> T {
        guard permits.wait(timeout: .now() + acquireTimeout) == .success else {
            throw StoreError(.unavailable, "no free database connection within \(acquireTimeout) s", transient: false)
        }
        defer { permits.signal() }
        let connection: Connection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused.connection
        } else {
            connection = try open()
        }
        defer {
            if isReusable(connection) {
                let returned = Idle(connection: connection)
                idle.withLock { $0.append(returned) }
            }
        }
        return try body(connection)
    }
}
