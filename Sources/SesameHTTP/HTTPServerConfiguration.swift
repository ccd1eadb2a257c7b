import Foundation

extension HTTPServer {
    /// Listening address, threading and limits of an ``HTTPServer``.
    ///
    /// ## Requests libmicrohttpd answers itself
    ///
    /// A few malformed requests are answered by libmicrohttpd 0.9.75 before the responder sees them, with its own small
    /// HTML page without `Content-Type`, `Connection: close`, and the connection closed after it (the observer is not
    /// called):
    /// - 400 for a `Content-Length` that is not a number (`abc`, `-1`), 413 for one too large for 64 bits. The library
    ///   sends the status line and headers of these twice (its header check queues the error, then its state machine
    ///   overwrites the state and builds the headers again), so what a client reads as the body is garbled; the
    ///   connection is closed after it all the same.
    /// - 414 or 431 for a request line or header section that does not even fit ``memoryPoolBytes``. The pool is sized
    ///   so that every request within the limits fits with room to spare: request heads up to about 40 KB with the
    ///   defaults (five times the line limit, more than twice the header limit) still get the responder's own 414 or
    ///   431.
    /// - 505 for an HTTP version other than 1.0 and 1.1.
    ///
    /// Two kinds are not answered at all, the connection is just closed: a request line without a space, and a
    /// request head that fits the pool with less room to spare than the reply's headers need (a band about 200 bytes
    /// wide just below the pool size, 40.4 to 40.7 KB with the defaults); libmicrohttpd cannot build a reply then.
    public struct Configuration: Sendable {
        /// A numeric IPv4 or IPv6 address to bind ("127.0.0.1", "0.0.0.0", "::1", "::"), or "localhost" (127.0.0.1).
        ///
        /// IPv6 sockets are IPv6-only; bind "0.0.0.0" and "::" with two servers to serve both families.
        public var host: String = "127.0.0.1"
        /// The TCP port; 0 lets the kernel pick one (read it back from ``HTTPServer/boundPort``).
        public var port: UInt16 = 8080
        /// Worker threads in libmicrohttpd's internal pool; each connection stays on one worker.
        ///
        /// Handlers run on these threads and may block (storage calls), and a blocked worker also delays the other
        /// connections it owns, so the default is twice the core count, at least 4. Each new connection goes to the
        /// worker with the fewest, so that clients connecting together, or a proxy's upstream connections, are served
        /// side by side rather than queued on one worker.
        public var threadCount: Int = max(4, ProcessInfo.processInfo.activeProcessorCount * 2)
        /// The largest request body accepted, in bytes.
        ///
        /// A larger declared `Content-Length` is answered with 413 (rendered in the responder's error shape) before the
        /// body is read. A chunked body is stored only up to the limit; the rest is read and dropped, then answered
        /// with 413 (libmicrohttpd cannot answer mid-body), or, past max(limit, 1 MiB) of dropped bytes, the
        /// connection is closed without an answer. The connection is closed after a 413.
        public var maximumBodySize: Int = 65_536
        /// The longest request line (method, target and version) accepted, in bytes.
        ///
        /// A longer one is answered with 414 (URI Too Long) in the responder's error shape, and the connection is closed.
        /// The default, 8 KiB, is what common proxies accept (nginx's `large_client_header_buffers`).
        public var maximumRequestLineBytes: Int = 8192
        /// The most query arguments (`&`-separated parts of the query string) accepted.
        ///
        /// More are answered with 414 in the responder's error shape, and the connection is closed. Query arguments
        /// are parsed by the server, not by libmicrohttpd, so they take no room in its per-connection memory.
        public var maximumQueryArguments: Int = 256
        /// The largest header section accepted, in bytes: every header line with its line end, and the empty line.
        ///
        /// A larger one is answered with 431 (Request Header Fields Too Large) in the responder's error shape, and the
        /// connection is closed.
        public var maximumHeaderBytes: Int = 16_384
        /// The most header fields accepted; more are answered with 431 in the responder's error shape.
        public var maximumHeaderCount: Int = 100
        /// The most simultaneous connections; the default needs a few more open files than that (see ``HTTPServer/start()``).
        ///
        /// While this many are open the server accepts nothing, so further connections wait in the kernel's listen
        /// queue (up to `min(connectionLimit, 4096)`, then they are refused) until a connection closes.
        public var connectionLimit: Int = 1024
        /// The most simultaneous connections from one IP address; 0 turns the limit off.
        ///
        /// Connections over the limit are accepted and closed at once, so one address cannot take every slot of
        /// ``connectionLimit`` (other addresses are still served). The default, 128, leaves room for many clients
        /// behind one NAT address. Behind a reverse proxy every connection comes from the proxy's address: set 0 (or at
        /// least the proxy's largest number of upstream connections) and let the proxy limit its clients
        /// (for example nginx's `limit_conn`). IPv6 addresses count one by one (not per /64 prefix).
        public var perIPConnectionLimit: Int = 128
        /// Seconds a connection may stay idle (including mid-request) before it is closed; 0 disables the timeout.
        public var connectionTimeout: Int = 30
        /// Seconds a connection has to deliver a complete request line and headers; 0 turns the deadline off.
        ///
        /// The clock starts when the connection is accepted, and again when a response has been sent on a kept-alive
        /// connection; a connection still short of the blank line that ends the headers by then is closed, however
        /// often it sends a byte (``connectionTimeout`` only counts silence). An idle kept-alive connection is therefore
        /// closed after this long too: behind a reverse proxy, keep the proxy's idle upstream connections shorter. The
        /// body, once the headers are in, is bounded by ``connectionTimeout`` and ``maximumBodySize`` instead. The
        /// deadline is checked four times a second.
        public var headerTimeout: Int = 10

        /// Creates the default configuration.
        public init() {}

        /// Creates a configuration.
        /// - Parameters:
        ///   - host: The address to bind.
        ///   - port: The TCP port; 0 lets the kernel pick one.
        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// Bytes of libmicrohttpd's per-connection memory pool (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`), from the limits.
        ///
        /// The pool holds the request line and header lines as read, 56 bytes of bookkeeping per header field, the
        /// read buffer and, when answering, the response's status line and headers. The size covers a request line and
        /// header section at their limits with ``maximumHeaderCount`` fields (64 bytes each, for alignment), plus
        /// 8 KiB for the read-ahead and the response headers; query arguments and cookies take no room (the server
        /// parses them itself). With the defaults it is about 38 KiB.
        public var memoryPoolBytes: Int {
            maximumRequestLineBytes + maximumHeaderBytes + (maximumHeaderCount + 2) * 64 + 8192
        }

        /// Throws if a value is out of range.
        func validate() throws(HTTPServerError) {
            func invalid(_ message: String) -> HTTPServerError {
                HTTPServerError(code: .invalidConfiguration, message: message)
            }
            guard (1...1024).contains(threadCount) else { throw invalid("threadCount must be 1...1024") }
            guard maximumBodySize >= 0 else { throw invalid("maximumBodySize must not be negative") }
            guard (64...(1 << 20)).contains(maximumRequestLineBytes) else {
                throw invalid("maximumRequestLineBytes must be 64...1048576")
            }
            guard (0...100_000).contains(maximumQueryArguments) else { throw invalid("maximumQueryArguments must be 0...100000") }
            guard (256...(1 << 20)).contains(maximumHeaderBytes) else {
                throw invalid("maximumHeaderBytes must be 256...1048576")
            }
            guard (1...10_000).contains(maximumHeaderCount) else { throw invalid("maximumHeaderCount must be 1...10000") }
            guard (1...1_000_000).contains(connectionLimit) else { throw invalid("connectionLimit must be 1...1000000") }
            guard (0...1_000_000).contains(perIPConnectionLimit) else {
                throw invalid("perIPConnectionLimit must be 0...1000000")
            }
            guard (0...86_400).contains(connectionTimeout) else { throw invalid("connectionTimeout must be 0...86400") }
            guard (0...86_400).contains(headerTimeout) else { throw invalid("headerTimeout must be 0...86400") }
        }
    }
}
