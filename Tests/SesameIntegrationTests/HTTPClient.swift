import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1 (close-on-exec, so server children never inherit it).
final class TCPConnection {
    private let fd: Int32
    private(set) var received: [UInt8] = []
    private var closed = false

    init(port: UInt16, receiveTimeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IntegrationFailure("socket failed: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int(receiveTimeout.truncatingRemainder(dividingBy: 1) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            throw IntegrationFailure("connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(error)))")
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
            guard sent > 0 else { throw IntegrationFailure("send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads more bytes into `received`; 0 at end of stream; throws on timeout or reset.
    @discardableResult
    func fill() throws -> Int {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            let error = errno
            throw IntegrationFailure(error == EAGAIN ? "receive timed out" : "recv failed: \(String(cString: strerror(error)))")
        }
        if count == 0 { closed = true }
        received.append(contentsOf: chunk[0..<count])
        return count
    }

    /// Reads one response (Content-Length framed, or up to the end of the stream).
    func readResponse() throws -> HTTPResult {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var end: Int?
        while end == nil {
            end = received.count < 4 ? nil : (0...(received.count - 4)).first { Array(received[$0..<$0 + 4]) == separator }
            if end == nil, try fill() == 0 { throw IntegrationFailure("connection closed before the response headers") }
        }
        let headerEnd = end! + 4
        let lines = String(decoding: received[0..<end!], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw IntegrationFailure("bad status line \(lines[0])") }
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var result = HTTPResult(status: status, headers: headers, body: [])
        if status == 204 || status == 304 || (100..<200).contains(status) {
            received.removeFirst(headerEnd)
            return result
        }
        if let length = result.header("Content-Length").flatMap(Int.init) {
            while received.count < headerEnd + length {
                if try fill() == 0 { throw IntegrationFailure("connection closed mid-body") }
            }
            result.body = Array(received[headerEnd..<headerEnd + length])
            received.removeFirst(headerEnd + length)
        } else {
            while !closed { try fill() }
            result.body = Array(received[headerEnd...])
            received.removeAll()
        }
        return result
    }

    /// Whether the peer closes the connection (EOF or reset) before the receive timeout.
    func waitForClose() -> Bool {
        while true {
            do {
                if try fill() == 0 { return true }
            } catch {
                return !"\(error)".contains("timed out")
            }
        }
    }
}

/// One HTTP response.
struct HTTPResult: CustomStringConvertible {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
    var jsonArray: [Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [Any] }
    /// `error.code` of the `{"error":{"code","message"}}` shape.
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    /// Whether the body is exactly the error shape with a non-empty code and message.
    var isErrorShape: Bool {
        guard json.count == 1, let error = json["error"] as? [String: Any], error.count == 2,
              let code = error["code"] as? String, let message = error["message"] as? String else { return false }
        return !code.isEmpty && !message.isEmpty && header("Content-Type")?.hasPrefix("application/json") == true
    }
    var description: String { "\(status) \(text.prefix(300))" }
}

/// `Connection: close` requests to one server over loopback.
struct HTTPClient: Sendable {
    let port: UInt16
    /// Sent as `Authorization: Bearer KEY` unless a request gives its own `Authorization` (or "" for none).
    var key: String?

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                 contentType: String? = "application/json", timeout: Double = 10) throws -> HTTPResult {
        let connection = try TCPConnection(port: port, receiveTimeout: timeout)
        var head = "\(method) \(path) HTTP/1.1\r\n"
        let names = Set(headers.map { $0.0.lowercased() })
        if !names.contains("host") { head += "Host: 127.0.0.1:\(port)\r\n" }
        if !names.contains("authorization"), let key { head += "Authorization: Bearer \(key)\r\n" }
        for (name, value) in headers where !value.isEmpty { head += "\(name): \(value)\r\n" }
        if let body {
            if let contentType, !names.contains("content-type") { head += "Content-Type: \(contentType)\r\n" }
            if !names.contains("transfer-encoding") { head += "Content-Length: \(body.count)\r\n" }
        }
        head += "Connection: close\r\n\r\n"
        try connection.send(head)
        if let body {
            // The server may answer (413) and close before reading everything: still read what it said.
            do { try connection.send(body) } catch {}
        }
        return try connection.readResponse()
    }

    func get(_ path: String, headers: [(String, String)] = []) throws -> HTTPResult { try request("GET", path, headers: headers) }

    func post(_ path: String, _ json: String, headers: [(String, String)] = []) throws -> HTTPResult {
        try request("POST", path, headers: headers, body: Array(json.utf8))
    }

    func delete(_ path: String) throws -> HTTPResult { try request("DELETE", path) }

    /// POST /api/v1/challenges; returns (id, challenge) on 201.
    func createChallenge(purpose: String = "x") throws -> (id: String, challenge: String) {
        let response = try post("/api/v1/challenges", #"{"purpose":"\#(purpose)","ttlSeconds":300}"#)
        guard response.status == 201, let id = response.json["id"] as? String, let challenge = response.json["challenge"] as? String else {
            throw IntegrationFailure("create challenge: \(response)")
        }
        return (id, challenge)
    }

    /// The IDs of GET /api/v1/project/platforms, and the raw body for exact comparisons.
    func platforms() throws -> (ids: [String], body: String) {
        let response = try get("/api/v1/project/platforms")
        guard response.status == 200, let list = response.json["platforms"] as? [[String: Any]] else {
            throw IntegrationFailure("list platforms: \(response)")
        }
        return (list.compactMap { $0["id"] as? String }, response.text)
    }
}
