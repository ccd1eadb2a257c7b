import Foundation

extension HTTPServer {
    /// Listening address, threading and limits of an ``HTTPServer``.
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
        /// connections it owns, so the default is twice the core count, at least 4.
        public var threadCount: Int = max(4, ProcessInfo.processInfo.activeProcessorCount * 2)
        /// The largest request body accepted, in bytes.
        ///
        /// A larger declared `Content-Length` is answered with 413 (rendered in the responder's error shape) before the
        /// body is read. A chunked body is stored only up to the limit; the rest is read and dropped, then answered
        /// with 413 (libmicrohttpd cannot answer mid-body), or, past max(limit, 1 MiB) of dropped bytes, the
        /// connection is closed without an answer. The connection is closed after a 413.
        public var maximumBodySize: Int = 65_536
        /// Per-connection memory for the request line, headers and read buffer (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`).
        ///
        /// A request whose line plus headers do not fit is answered by libmicrohttpd itself, not by the responder:
        /// 431 (Request Header Fields Too Large) for headers, 414 (URI Too Long) for a long request line, each with a
        /// small HTML body and no `Content-Type`, and the connection is closed. The observer is not called for them.
        public var maximumHeaderBytes: Int = 16_384
        /// The most simultaneous connections; more are accepted and closed at once.
        public var connectionLimit: Int = 1024
        /// Seconds a connection may stay idle (including mid-request) before it is closed; 0 disables the timeout.
        public var connectionTimeout: Int = 30

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

        /// Throws if a value is out of range.
        func validate() throws(HTTPServerError) {
            func invalid(_ message: String) -> HTTPServerError {
                HTTPServerError(code: .invalidConfiguration, message: message)
            }
            guard (1...1024).contains(threadCount) else { throw invalid("threadCount must be 1...1024") }
            guard maximumBodySize >= 0 else { throw invalid("maximumBodySize must not be negative") }
            guard (2048...(64 << 20)).contains(maximumHeaderBytes) else {
                throw invalid("maximumHeaderBytes must be 2048...67108864")
            }
            guard (1...1_000_000).contains(connectionLimit) else { throw invalid("connectionLimit must be 1...1000000") }
            guard (0...86_400).contains(connectionTimeout) else { throw invalid("connectionTimeout must be 0...86400") }
        }
    }
}
