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
    }

    private let port: UInt16
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []

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

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count <= 0 { return false }
        buffer += chunk[..<count]
        return true
    }

    private func read() -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while end == nil {
            if let range = buffer.firstRange(of: separator) { end = range.upperBound } else if !fill() { return nil }
        }
        let head = String(decoding: buffer[..<end!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ")[1]) else { return nil }
        var length = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        while buffer.count < end! + length { if !fill() { return nil } }
        let body = Array(buffer[end!..<(end! + length)])
        buffer.removeFirst(end! + length)
        return Response(status: status, body: body)
    }
}
