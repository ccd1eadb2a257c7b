import Foundation
import Synchronization

/// Writes one JSON line per answered request.
///
/// Only what is safe to keep: time, method, route pattern (never the concrete path, which can carry IDs),
/// status, duration and the client address. Never a request ID, header, query, body, secret, challenge or
/// credential ID (DESIGN.md, "Security and privacy").
///
/// Lines are formatted by hand and written in batches (every 200 ms, or at 16 KiB), since a JSON encoder and a
/// system call per request would cost more than the request itself. ``flush()`` writes what is pending.
///
/// `@unchecked Sendable`: `pending` is behind a `Mutex`; `timer` is touched only in `init` and `deinit`.
public final class RequestLog: @unchecked Sendable {
    /// Where batches of lines go.
    public typealias Sink = @Sendable ([UInt8]) -> Void

    private let sink: Sink
    private let pending = Mutex<[UInt8]>([])
    private let timer: any DispatchSourceTimer
    private static let batchBytes = 16_384

    /// Creates a log writing to `sink` (standard error by default).
    public init(sink: @escaping Sink = RequestLog.standardError) {
        self.sink = sink
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
    }

    deinit {
        timer.cancel()
        flush()
    }

    /// Writes to standard error.
    public static let standardError: Sink = { bytes in
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    /// Logs one request.
    public func record(time: Date, method: String, route: String, status: Int, duration: Duration, remoteAddress: String) {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        var line = #"{"duration_ms":"#
        line += "\(microseconds / 1000).\(String(microseconds % 1000).leftPadded(to: 3))"
        line += #","method":"# + Self.quoted(method) + #","remote":"# + Self.quoted(remoteAddress)
        line += #","route":"# + Self.quoted(route) + #","status":\#(status),"time":""# + Self.timestamp(time) + "\"}\n"
        let full: [UInt8]? = pending.withLock { buffer in
            buffer += line.utf8
            guard buffer.count >= Self.batchBytes else { return nil }
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if let full { sink(full) }
    }

    /// Writes every pending line now.
    public func flush() {
        let batch = pending.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !batch.isEmpty { sink(batch) }
    }

    /// A JSON string literal of `text`, escaping quotes, backslashes and control characters.
    static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            return "\"" + text + "\""
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// `2026-01-31T12:00:00.000Z`.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { String(n).leftPadded(to: 2) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
            + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(String(milliseconds % 1000).leftPadded(to: 3))Z"
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
