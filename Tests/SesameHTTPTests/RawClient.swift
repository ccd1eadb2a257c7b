import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for driving the server byte by byte (keep-alive, partial requests, oversized headers).
final class RawClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The socket (for `poll`).
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port`, from the IPv4 address `source` if given (any of 127.0.0.0/8 works on loopback);
    /// throws if the connection is refused.
    init(host: String = "127.0.0.1", port: UInt16, receiveTimeout: Double = 5, source: String? = nil) throws {
        let isIPv6 = host.contains(":")
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout.truncatingRemainder(dividingBy: 1)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw Failure(description: "bind failed: \(String(cString: strerror(errno)))") }
        }
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            let error = errno
            throw Failure(description: "connect failed: \(String(cString: strerror(error)))")
        }
    }

    /// The only close: it also runs when `init` throws after `fd` is set (a class's deinit does), so the failure
    /// path must not close too, or a second close would hit whatever socket reused the number.
    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads more bytes; returns 0 at end of stream, throws on timeout or reset.
    @discardableResult
    private func fill() throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw Failure(description: "recv failed: \(String(cString: strerror(errno)))") }
        buffer.append(contentsOf: chunk[0..<count])
        return count
    }

    /// Reads one response; `head` means the response to a HEAD request (no body follows).
    func readResponse(head: Bool = false) throws -> Response {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var end: Int?
        while end == nil {
            end = buffer.indices.dropLast(3).first { Array(buffer[$0..<$0 + 4]) == separator }
            if end == nil, try fill() == 0 { throw Failure(description: "closed before headers") }
        }
        let headerEnd = end! + 4
        let lines = String(decoding: buffer[0..<end!], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line") }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = head || status == 204 || status == 304 ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < headerEnd + length {
            if try fill() == 0 { throw Failure(description: "closed mid-body") }
        }
        response.body = Array(buffer[headerEnd..<headerEnd + length])
        buffer.removeFirst(headerEnd + length)
        return response
    }

    /// Every byte until the peer closes the connection (EOF or reset); throws on timeout.
    func readUntilClose() throws -> [UInt8] {
        while true {
            do {
                if try fill() == 0 { break }
            } catch {
                guard "\(error)".contains("reset") else { throw error }
                break
            }
        }
        defer { buffer = [] }
        return buffer
    }

    /// Whether the peer closes the connection (EOF or reset) within the receive timeout.
    func waitForClose() -> Bool {
        while true {
            do {
                if try fill() == 0 { return true }
            } catch {
                return !(error as? Failure)!.description.contains("temporarily unavailable")
            }
        }
    }
}
