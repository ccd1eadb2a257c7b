import Foundation
internal import CMicroHTTPD
internal import CSesameShims
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd that hands each complete request to an ``HTTPResponder``.
///
/// libmicrohttpd runs an internal pool of ``Configuration/threadCount`` worker threads (epoll); responders run
/// synchronously on them and may block. A thread of the server's own accepts connections and gives each to the worker
/// with the fewest (see ``Configuration/threadCount``). Keep-alive is on; responses carry `Connection: close` only
/// after a request the transport refused (413, 414, 431, or 400 for its body framing) and while shutting down.
/// Connection limits (global and per IP) and a header-read deadline bound what slow or abusive clients can hold; see
/// ``Configuration``.
public final class HTTPServer: Sendable {
    /// Called once per request that got a response (for logging and metrics), on the worker thread, after the
    /// response was sent or the connection failed. `duration` runs from the end of the headers to that moment.
    public typealias Observer = @Sendable (_ request: HTTPRequest, _ response: HTTPResponse, _ duration: Duration) -> Void

    /// The configuration the server was created with.
    public let configuration: Configuration
    private let context: ServerContext
    private let lifecycle = Mutex<Lifecycle>(.idle)
    private let port = Atomic<UInt16>(0)

    private enum Lifecycle {
        case idle
        /// `server` is libmicrohttpd's daemon with the thread that accepts for it (`csesame_server`).
        case running(server: OpaquePointer, context: Unmanaged<ServerContext>)
        case stopped
    }

    /// Creates a server; nothing listens until ``start()``.
    /// - Parameters:
    ///   - configuration: Address, threads and limits.
    ///   - responder: Answers every request (usually a ``Router``).
    ///   - observer: Called once per answered request, on the worker thread.
    public init(configuration: Configuration, responder: any HTTPResponder, observer: Observer? = nil) {
        self.configuration = configuration
        self.context = ServerContext(responder: responder, observer: observer, configuration: configuration)
    }

    deinit {
        shutdown(timeout: .zero)
    }

    /// The port actually bound once started (useful with port 0), or 0 before ``start()``.
    public var boundPort: UInt16 {
        port.load(ordering: .acquiring)
    }

    /// Binds the address and starts serving on libmicrohttpd's worker threads; returns at once.
    ///
    /// Raises the process's soft limit on open files (up to the hard limit) if it is below
    /// ``Configuration/connectionLimit`` plus 256 for everything else the process opens, so that a full server can
    /// still accept and answer.
    /// - Throws: ``HTTPServerError`` with code `addressInUse`, `invalidAddress`, `cannotListen`,
    ///   `invalidConfiguration`, `alreadyStarted` or `daemonFailed`.
    public func start() throws(HTTPServerError) {
        let configuration = self.configuration
        let context = self.context
        let bound = try lifecycle.withLock { state throws(HTTPServerError) -> UInt16 in
            guard case .idle = state else {
                throw HTTPServerError(code: .alreadyStarted, message: "the server was already started")
            }
            try configuration.validate()
            _ = csesame_raise_open_file_limit(configuration.connectionLimit + 256)
            let (socket, boundPort) = try Self.listen(configuration)

            let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            let retained = Unmanaged.passRetained(context)
            guard
                let server = csesame_server_start(
                    flags, socket, sesameAccessHandler, retained.toOpaque(), sesameRequestCompleted,
                    sesameConnectionNotify, sesameRequestLineReceived,
                    UInt32(configuration.threadCount), UInt32(configuration.connectionLimit),
                    UInt32(configuration.perIPConnectionLimit), UInt32(configuration.connectionTimeout),
                    configuration.memoryPoolBytes
                )
            else {
                retained.release()
                csesame_close(socket)
                throw HTTPServerError(
                    code: .daemonFailed,
                    message: "libmicrohttpd, or the thread accepting for it, could not start on "
                        + "\(configuration.host):\(boundPort)"
                )
            }
            context.connections.start()
            state = .running(server: server, context: retained)
            return boundPort
        }
        port.store(bound, ordering: .releasing)
    }

    /// Stops gracefully: stop accepting, let in-flight requests finish (up to `timeout`), then stop the daemon.
    ///
    /// New connections are refused as soon as shutdown begins; requests already being read or handled finish, and
    /// their responses carry `Connection: close`. After `timeout`, remaining connections are closed, but a handler
    /// that is still running is waited for (it runs on a worker thread that must be joined). Idempotent; concurrent
    /// callers wait for the first to finish. A server that was never started just becomes unusable.
    /// - Parameter timeout: How long to wait for in-flight requests.
    public func shutdown(timeout: Duration = .seconds(10)) {
        let context = self.context
        lifecycle.withLock { state in
            guard case .running(let server, let retained) = state else {
                state = .stopped
                return
            }
            state = .stopped
            context.draining.store(true, ordering: .relaxed)
            // The listening socket is shut down and closed at once: new connections are refused.
            csesame_server_stop_accepting(server)
            let deadline = ContinuousClock.now + timeout
            while context.inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
            context.connections.stop()
            csesame_server_stop(server)
            retained.release()
        }
    }

    /// Opens the listening socket, mapping failures to clear errors.
    private static func listen(_ configuration: Configuration) throws(HTTPServerError) -> (Int32, UInt16) {
        let host = configuration.host == "localhost" ? "127.0.0.1" : configuration.host
        var error: Int32 = 0
        var boundPort: UInt16 = 0
        let backlog = Int32(min(configuration.connectionLimit, 4096))
        let socket = csesame_listen(host, configuration.port, backlog, &error, &boundPort)
        guard socket >= 0 else {
            let address = "\(configuration.host):\(configuration.port)"
            switch error {
            case EADDRINUSE:
                throw HTTPServerError(code: .addressInUse, message: "\(address) is already in use")
            case EINVAL, EADDRNOTAVAIL, EAFNOSUPPORT:
                throw HTTPServerError(
                    code: .invalidAddress,
                    message: "cannot bind \(address): not a numeric IPv4/IPv6 address of this machine"
                )
            default:
                throw HTTPServerError(
                    code: .cannotListen, message: "cannot listen on \(address): \(String(cString: strerror(error)))"
                )
            }
        }
        return (socket, boundPort)
    }
}
