import Dispatch
import Foundation
internal import CMicroHTTPD
internal import CSesameShims
import Synchronization

/// One open TCP connection, kept as libmicrohttpd's socket context from its start to its close.
///
/// Sendable: immutable apart from the atomic deadline.
final class ConnectionRecord: Sendable {
    /// The connection's socket; valid while the record is registered (libmicrohttpd reports the close first).
    let socket: Int32
    /// Monotonic nanoseconds by which the current request line and headers must be complete, or 0 while a request
    /// is being read past its headers or answered (no header deadline then).
    let headerDeadline: Atomic<UInt64>

    init(socket: Int32, headerDeadline: UInt64) {
        self.socket = socket
        self.headerDeadline = Atomic(headerDeadline)
    }
}

/// Enforces the header-read deadline: a connection whose request line and headers are not complete within
/// `headerTimeout` of connecting (or of its previous request ending) has its socket shut down by a sweeper thread.
///
/// libmicrohttpd 0.9.75 has only an inactivity timeout, which a client sending a byte now and then never trips.
/// Shutting the socket down wakes the connection's worker, which sees the end of the stream and closes it as usual
/// (its memory, its slot and the per-IP count are released there). Records are registered on libmicrohttpd's
/// connection-start notification and removed on its close notification, which comes before the socket is closed;
/// the sweeper holds the same lock while it shuts sockets down, so it never touches a closed (or reused) descriptor.
final class ConnectionTracker: Sendable {
    /// The header deadline in nanoseconds; 0 turns it off.
    let headerTimeout: UInt64
    private let open = Mutex<[ObjectIdentifier: ConnectionRecord]>([:])
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// How often the sweeper looks for connections past their deadline.
    static let sweepInterval = DispatchTimeInterval.milliseconds(250)

    init(headerTimeoutSeconds: Int) {
        // Clamped as validate() requires (the tracker exists before start() validates): the product cannot overflow.
        headerTimeout = UInt64(min(max(0, headerTimeoutSeconds), 86_400)) * 1_000_000_000  // trap-safe: clamped
    }

    /// Monotonic nanoseconds (CLOCK_MONOTONIC), the clock of every deadline.
    static func now() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    /// The deadline for a connection that starts waiting for a request now, or 0 if there is none.
    func deadlineFromNow() -> UInt64 {
        headerTimeout == 0 ? 0 : Self.now() + headerTimeout
    }

    /// Registers a connection that libmicrohttpd has just accepted.
    func opened(_ record: ConnectionRecord) {
        _ = open.withLock { $0.updateValue(record, forKey: ObjectIdentifier(record)) }
    }

    /// Forgets a connection that libmicrohttpd is about to close.
    func closed(_ record: ConnectionRecord) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(record)) }
    }

    /// The number of connections libmicrohttpd holds open.
    var openCount: Int {
        open.withLock { $0.count }
    }

    /// Starts the sweeper thread (only if there is a deadline to enforce).
    func start() {
        guard headerTimeout > 0, !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while !stopping.load(ordering: .acquiring) {
                _ = wake.wait(timeout: .now() + Self.sweepInterval)
                sweep(now: Self.now())
            }
            finished.signal()
        }
        thread.name = "sesame.http.header-deadline"
        thread.start()
    }

    /// Stops the sweeper thread and waits for it; idempotent.
    func stop() {
        guard running.load(ordering: .acquiring), !stopping.exchange(true, ordering: .acquiringAndReleasing) else {
            return
        }
        wake.signal()
        finished.wait()
    }

    /// Shuts down every connection whose header deadline has passed; each is shut down once.
    func sweep(now: UInt64) {
        open.withLock { records in
            for record in records.values {
                let deadline = record.headerDeadline.load(ordering: .relaxed)
                guard deadline != 0, deadline <= now else { continue }
                // Claim it so a later sweep does not shut it down again (the close notification may take a moment).
                guard
                    record.headerDeadline.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged
                else { continue }
                csesame_shutdown_socket(record.socket)
            }
        }
    }
}

/// libmicrohttpd's connection notification: registers a record on start and forgets it on close.
func sesameConnectionNotify(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let socketContext else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        guard let connection else { return }
        let record = ConnectionRecord(
            socket: csesame_mhd_connection_fd(connection), headerDeadline: context.connections.deadlineFromNow()
        )
        socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
        context.connections.opened(record)
    case .CONNECTION_NOTIFY_CLOSED:
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        let record = Unmanaged<ConnectionRecord>.fromOpaque(pointer).takeRetainedValue()
        context.connections.closed(record)
    default:
        return
    }
}

/// The record of `connection`, if libmicrohttpd reported its start.
func connectionRecord(_ connection: OpaquePointer) -> ConnectionRecord? {
    guard let pointer = csesame_mhd_socket_context(connection) else { return nil }
    return Unmanaged<ConnectionRecord>.fromOpaque(pointer).takeUnretainedValue()
}
