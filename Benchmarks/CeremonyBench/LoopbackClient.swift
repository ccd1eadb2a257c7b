import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over one keep-alive loopback connection: enough for a load generator, and far
/// cheaper per request than URLSession, so the server is what gets measured.
final class LoopbackClient {
    struct Response {
        let status: Int
        let body: [UInt8]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
        /// The body decoded as `T` (the ceremonies' hot loops: one typed pass instead of `json` and a re-encoding).
        func decoded<T: Decodable>(_ type: T.Type, snakeCase: Bool = false) -> T {
            let decoder = JSONDecoder()
            if snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
            do { return try decoder.decode(T.self, from: Data(body)) } catch {
                fatalError("cannot decode \(T.self) from \(String(decoding: body, as: UTF8.self)): \(error)")
            }
        }
    }

    private let port: UInt16
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 16384)

    init(port: UInt16) { self.port = port }
    deinit { if socket >= 0 { close(socket) } }

    private func connect() {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(socket >= 0, "socket failed")
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(result == 0, "connect to 127.0.0.1:\(port) failed")
        buffer = []
    }

    /// Sends one request and reads the whole response; reconnects once if the server closed the connection.
    func send(_ method: String, _ path: String, headers: [String: String], body: String? = nil) -> Response {
        for attempt in 0..<2 {
            if socket < 0 { connect() }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let payload = Array((body ?? "").utf8)
            head += "Content-Length: \(payload.count)\r\n\r\n"
            let bytes = Array(head.utf8) + payload
            if write(bytes), let response = read() { return response }
            close(socket)
            socket = -1
            precondition(attempt == 0, "the server closed the connection twice")
        }
        fatalError("unreachable")
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Reads more of the response into `buffer`; `false` when the connection closed or failed.
    private func fill() -> Bool {
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count <= 0 { return false }
        buffer += chunk[..<count]
        return true
    }

    /// Reads one response: the status line's code and `Content-Length` of its head, then that many bytes of body
    /// (plain byte scans, so that the load generator spends little of the cores it shares with the server).
    private func read() -> Response? {
        var head: (end: Int, status: Int, length: Int)?
        while head == nil {
            head = buffer.withUnsafeBufferPointer(Self.parseHead)
            if head == nil && !fill() { return nil }
        }
        let (end, status, length) = head!
        while buffer.count < end + length { if !fill() { return nil } }
        let body = Array(buffer[end..<(end + length)])
        buffer.removeFirst(end + length)
        return Response(status: status, body: body)
    }

    /// The end of a complete response head at the start of `bytes` with its status code and `Content-Length` (0 when
    /// absent), or `nil` while the head is incomplete.
    private static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>) -> (end: Int, status: Int, length: Int)? {
        let name = Array("content-length:".utf8)
        var length = 0, lineStart = 0, index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == 13, bytes[index + 1] == 10 else {
                index += 1
                continue
            }
            // A line ends at `index`; an empty one ends the head.
            if index == lineStart {
                // "HTTP/1.1 200 ...": the code is bytes 9-11.
                guard bytes.count > 12 else { return nil }
                return (index + 2, bytes[9...11].reduce(0) { $0 * 10 + Int($1) - 48 }, length)
            }
            if index - lineStart > name.count, name.indices.allSatisfy({ bytes[lineStart + $0] | 0x20 == name[$0] }) {
                for byte in bytes[(lineStart + name.count)..<index] where byte >= 48 && byte <= 57 { length = length * 10 + Int(byte) - 48 }
            }
            index += 2
            lineStart = index
        }
        return nil
    }
}
