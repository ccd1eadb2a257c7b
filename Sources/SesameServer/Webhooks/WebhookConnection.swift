#if canImport(Glibc)
import Glibc
#endif
import SesameCrypto

/// One HTTP/1.1 connection to a webhook endpoint: a TCP socket to an address the endpoint policy checked, with TLS for
/// `https`, and one request at a time on it. Every operation is bounded by the attempt's deadline (the socket is
/// non-blocking; waits are `poll`s).
///
/// `@unchecked Sendable`: a connection is used by one attempt at a time; ``WebhookSender`` hands it from its pool to
/// one thread and takes it back afterwards.
final class WebhookConnection: @unchecked Sendable {
    /// Why an attempt got no status: the generic reasons ``WebhookSendOutcome/failed(_:)`` reports.
    enum Failure: Error, Equatable {
        case timeout, refused, unreachable, tls, lost, badResponse

        /// The reason reported for it.
        var reason: String {
            switch self {
            case .timeout: "timeout"
            case .refused: "connection refused"
            case .unreachable: "network unreachable"
            case .tls: "TLS failure"
            case .lost: "connection lost"
            case .badResponse: "bad response"
            }
        }
    }

    /// What one exchange brought back.
    struct Response: Equatable {
        /// The final status (interim 1xx responses are skipped).
        var status: Int
        /// Whether the response ended cleanly and both sides keep the connection open for another request.
        var reusable: Bool
    }

    /// The longest status line and header section read (a longer one is a bad response).
    static let maximumHeadBytes = 64 * 1024

    private let socket: Int32
    private let session: TLSClientSession?
    /// Bytes read and not yet consumed.
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to the first of `addresses` that accepts (TCP, then TLS when `tls` is given) before `deadline`.
    /// - Parameters:
    ///   - addresses: Address literals (IPv6 without brackets), tried in order.
    ///   - port: The port.
    ///   - host: The name the server's certificate must be valid for (sent as SNI), when `tls` is given.
    ///   - tls: The TLS configuration, or `nil` for plain HTTP.
    ///   - deadline: When the attempt's time is up.
    /// - Throws: The last address's ``Failure``.
    init(addresses: [String], port: UInt16, host: String, tls: TLSClientContext?, deadline: ContinuousClock.Instant)
        throws(Failure)
    {
        var failure = Failure.unreachable
        var connected: Int32?
        for address in addresses {
            do {
                connected = try Self.connect(to: address, port: port, deadline: deadline)
                break
            } catch {
                failure = error
                if error == .timeout { break }
            }
        }
        guard let socket = connected else { throw failure }
        self.socket = socket
        guard let tls else {
            session = nil
            return
        }
        // Certificates name hosts without the root's trailing dot.
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        guard let session = try? TLSClientSession(context: tls, socket: socket, host: name) else {
            Glibc.close(socket)
            throw .tls
        }
        self.session = session
        do {
            _ = try perform(deadline) { session.handshake() }
        } catch {
            close()
            throw error == .lost ? .tls : error
        }
    }

    deinit { close() }

    /// Whether the server has closed (or written to) the idle connection: it must not carry another request.
    var isStale: Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return closed || poll(&descriptor, 1, 0) != 0
    }

    /// Ends the connection (TLS close_notify first); safe to call more than once.
    func close() {
        guard !closed else { return }
        closed = true
        session?.close()
        Glibc.close(socket)
    }

    /// Sends `request` (a whole HTTP/1.1 request) and reads the response's status; then drains its body, so that the
    /// connection can carry the next request, while time remains.
    ///
    /// - Returns: The status, and whether the connection may be reused (a body cut off by the deadline, an unknown
    ///   length, `Connection: close`, HTTP/1.0 without keep-alive: not reusable).
    /// - Throws: ``Failure`` when no status arrived.
    func exchange(_ request: [UInt8], deadline: ContinuousClock.Instant) throws(Failure) -> Response {
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { bytes in
                Result { () throws(Failure) in try send(bytes, deadline) }
            }
            sent += try written.get()
        }
        var head = try readHead(deadline)
        while (100...199).contains(head.status) {
            guard head.status != 101 else { throw .badResponse }
            head = try readHead(deadline)
        }
        let drained: Bool
        do {
            drained = try drainBody(of: head, deadline)
        } catch {
            drained = false
        }
        return Response(status: head.status, reusable: drained && head.keepAlive && buffer.isEmpty)
    }

    // MARK: - Response

    /// A response's status line and the header fields that frame its body and the connection.
    private struct Head {
        var status: Int
        /// `Content-Length`, when given.
        var contentLength: Int?
        /// Whether the last transfer coding is `chunked`; `nil` without `Transfer-Encoding`.
        var chunked: Bool?
        /// Whether another request may follow on the connection (HTTP/1.1 unless `close`, HTTP/1.0 with
        /// `keep-alive`).
        var keepAlive: Bool
    }

    /// Reads and consumes one status line and header section.
    private func readHead(_ deadline: ContinuousClock.Instant) throws(Failure) -> Head {
        let end = try readUntil(Self.headEnd, limit: Self.maximumHeadBytes, deadline)
        let lines = buffer[..<(end - 4)].split(separator: Self.lf, omittingEmptySubsequences: false)
            .map { $0.last == Self.cr ? $0.dropLast() : $0 }
        buffer.removeFirst(end)
        // HTTP/1.x SP 3DIGIT [SP reason]
        guard let statusLine = lines.first, statusLine.count >= 12,
            statusLine.starts(with: Array("HTTP/1.".utf8)), statusLine[statusLine.startIndex + 8] == 0x20
        else { throw .badResponse }
        let digits = statusLine.dropFirst(9).prefix(3)
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }),
            statusLine.count == 12 || statusLine[statusLine.startIndex + 12] == 0x20
        else { throw .badResponse }
        let minor = statusLine[statusLine.startIndex + 7]
        guard minor == 0x30 || minor == 0x31 else { throw .badResponse }
        var head = Head(status: digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }, keepAlive: minor == 0x31)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A) else { throw .badResponse }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingWhitespace().lowercased()
            switch name {
            case "content-length":
                guard !value.isEmpty, value.count <= 18, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                    let length = Int(value), head.contentLength == nil || head.contentLength == length
                else { throw .badResponse }
                head.contentLength = length
            case "transfer-encoding":
                head.chunked = value.split(separator: ",").last?.trimmingWhitespace() == "chunked"
            case "connection":
                let tokens = value.split(separator: ",").map { $0.trimmingWhitespace() }
                if tokens.contains("close") { head.keepAlive = false }
                if tokens.contains("keep-alive") && minor == 0x30 { head.keepAlive = true }
            default:
                continue
            }
        }
        return head
    }

    /// Reads and drops the body `head` announces; `false` when its end is unknown (read until the server closes).
    private func drainBody(of head: Head, _ deadline: ContinuousClock.Instant) throws(Failure) -> Bool {
        if head.status == 204 || head.status == 304 { return true }
        if head.chunked == true {
            while true {
                // chunk-size [; extensions] CRLF, chunk-data CRLF; the last chunk is 0, then trailers and CRLF.
                let lineEnd = try readUntil(Self.crlf, limit: 1024, deadline)
                let sizeText = buffer[..<(lineEnd - 2)].prefix { $0 != 0x3B && $0 != 0x20 && $0 != 0x09 }
                guard !sizeText.isEmpty, sizeText.count <= 15,
                    let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
                else { throw .badResponse }
                buffer.removeFirst(lineEnd)
                if size == 0 { break }
                try skip(size + 2, deadline)
            }
            while true {
                let lineEnd = try readUntil(Self.crlf, limit: Self.maximumHeadBytes, deadline)
                buffer.removeFirst(lineEnd)
                if lineEnd == 2 { return true }
            }
        }
        // Another transfer coding than chunked (or none, and no length): the body ends when the server closes.
        guard head.chunked == nil, let length = head.contentLength else {
            while try receive(deadline) { buffer.removeAll(keepingCapacity: true) }
            return false
        }
        try skip(length, deadline)
        return true
    }

    /// Consumes `count` bytes, reading as needed.
    private func skip(_ count: Int, _ deadline: ContinuousClock.Instant) throws(Failure) {
        var left = count
        while true {
            let taken = min(left, buffer.count)
            buffer.removeFirst(taken)
            left -= taken
            if left == 0 { return }
            guard try receive(deadline) else { throw .lost }
        }
    }

    /// Reads until `marker` is in the buffer; returns the offset just past it.
    private func readUntil(_ marker: [UInt8], limit: Int, _ deadline: ContinuousClock.Instant) throws(Failure) -> Int {
        var searched = 0
        while true {
            if let range = buffer[searched...].firstRange(of: marker) { return range.upperBound }
            searched = max(0, buffer.count - marker.count + 1)
            guard buffer.count < limit else { throw .badResponse }
            guard try receive(deadline) else { throw .lost }
        }
    }

    private static let cr: UInt8 = 0x0D
    private static let lf: UInt8 = 0x0A
    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let headEnd: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

    // MARK: - Transport

    /// Reads what is available into the buffer (waiting for some); `false` when the server closed the connection.
    private func receive(_ deadline: ContinuousClock.Instant) throws(Failure) -> Bool {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: 16 * 1024))
        let read = buffer[start...].withUnsafeMutableBytes { space in
            Result { () throws(Failure) -> Int in
                if let session { return try perform(deadline) { session.read(into: space) } }
                return try perform(deadline) {
                    let result = recv(socket, space.baseAddress, space.count, 0)
                    return result > 0 ? .done(result) : result == 0 ? .closed : Self.plainStep(errno, waiting: .wantRead)
                }
            }
        }
        switch read {
        case .success(let count):
            buffer.removeSubrange((start + count)...)
            return count > 0
        case .failure(let failure):
            buffer.removeSubrange(start...)
            throw failure
        }
    }

    /// Writes a prefix of `bytes`; returns how much.
    private func send(_ bytes: UnsafeRawBufferPointer, _ deadline: ContinuousClock.Instant) throws(Failure) -> Int {
        if let session { return try perform(deadline) { session.write(bytes) } }
        return try perform(deadline) {
            let result = Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            return result > 0 ? .done(result) : Self.plainStep(errno, waiting: .wantWrite)
        }
    }

    /// A plain socket call's failure as a step: retry after a wait, or the connection is lost.
    private static func plainStep(_ error: Int32, waiting: TLSClientSession.Step) -> TLSClientSession.Step {
        error == EAGAIN || error == EWOULDBLOCK || error == EINTR ? waiting : .failed
    }

    /// Repeats `operation` until it is done, waiting on the socket as it asks; a clean close reads as 0 bytes.
    private func perform(_ deadline: ContinuousClock.Instant, _ operation: () -> TLSClientSession.Step) throws(Failure)
        -> Int
    {
        while true {
            switch operation() {
            case .done(let count): return count
            case .closed: return 0
            case .failed: throw .lost
            case .wantRead: try Self.wait(socket, for: Int16(POLLIN), until: deadline)
            case .wantWrite: try Self.wait(socket, for: Int16(POLLOUT), until: deadline)
            }
        }
    }

    /// Waits until `socket` is ready for `events` (or reports an error or hang-up, which the next call reads).
    private static func wait(_ socket: Int32, for events: Int16, until deadline: ContinuousClock.Instant) throws(Failure) {
        while true {
            let left = deadline - .now
            guard left > .zero else { throw .timeout }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .lost }
        }
    }

    /// A non-blocking TCP connection to `address`, established before `deadline`.
    private static func connect(to address: String, port: UInt16, deadline: ContinuousClock.Instant) throws(Failure)
        -> Int32
    {
        // A numeric host and service: getaddrinfo parses the literal (either family) and makes no lookup.
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address, String(port), &hints, &found) == 0, let entry = found?.pointee else {
            throw .unreachable
        }
        defer { freeaddrinfo(found) }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let socket = Glibc.socket(entry.ai_family, type, 0)
        guard socket >= 0 else { throw .unreachable }
        var one: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let started = Glibc.connect(socket, entry.ai_addr, entry.ai_addrlen)
        do throws(Failure) {
            if started != 0 {
                guard errno == EINPROGRESS else { throw failure(errno) }
                try wait(socket, for: Int16(POLLOUT), until: deadline)
                var error: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { throw Failure.unreachable }
                if error != 0 { throw failure(error) }
            }
        } catch {
            Glibc.close(socket)
            throw error
        }
        return socket
    }

    /// A failed connect's reason.
    private static func failure(_ error: Int32) -> Failure {
        switch error {
        case ECONNREFUSED: .refused
        case ETIMEDOUT: .timeout
        default: .unreachable
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate func trimmingWhitespace() -> String {
        let isWhitespace = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
