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

/// A driver's connection: an ``SQLConnection`` that can run a whole transaction on itself.
protocol DriverConnection: SQLConnection, AnyObject {
    /// Runs `body` between BEGIN and COMMIT on this connection, rolling back on any throw.
    func runTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T
}

extension ConnectionPool where Connection: DriverConnection {
    /// A transaction on a pooled connection, rerun up to `attempts` times on a transient failure.
    func transaction<T>(attempts: Int, _ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try withTransientRetry(attempts: attempts) { () throws(StoreError) -> T in
            try withConnection { connection throws(StoreError) -> T in try connection.runTransaction(body) }
        }
    }

    /// One autocommit query on a pooled connection, retried like ``transaction(attempts:_:)``.
    func query(attempts: Int, _ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try withTransientRetry(attempts: attempts) { () throws(StoreError) -> [SQLRow] in
            try withConnection { connection throws(StoreError) -> [SQLRow] in try connection.query(sql, parameters) }
        }
    }

    /// One autocommit statement on a pooled connection; returns the rows it changed.
    func execute(attempts: Int, _ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try withTransientRetry(attempts: attempts) { () throws(StoreError) -> Int in
            try withConnection { connection throws(StoreError) -> Int in try connection.execute(sql, parameters) }
        }
    }
}
