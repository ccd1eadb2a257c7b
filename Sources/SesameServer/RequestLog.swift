import Foundation
import Synchronization

/// Writes one JSON line per answered request.
///
/// Only what is safe to keep: time, method, route pattern (never the concrete path, which can carry IDs),
/// status, duration and the client address. Never a request ID, header, query, body, secret, challenge or
/// credential ID (DESIGN.md, "Security and privacy").
public final class RequestLog: Sendable {
    /// Where lines go.
    public typealias Sink = @Sendable (String) -> Void

    private let sink: Sink

    /// Creates a log writing to `sink` (standard error by default).
    public init(sink: @escaping Sink = RequestLog.standardError) { self.sink = sink }

    /// Writes each line to standard error, whole lines at a time.
    public static let standardError: Sink = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Logs one request.
    public func record(time: Date, method: String, route: String, status: Int, duration: Duration, remoteAddress: String) {
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let entry: [String: Any] = [
            "time": Self.formatter.withLock { $0.string(from: time) },
            "method": method, "route": route, "status": status,
            "duration_ms": (milliseconds * 1000).rounded() / 1000, "remote": remoteAddress,
        ]
        // A dictionary of strings and numbers always serialises.
        let data = try! JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys, .withoutEscapingSlashes])
        sink(String(decoding: data, as: UTF8.self))
    }

    private static let formatter: Mutex<ISO8601DateFormatter> = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions.insert(.withFractionalSeconds)
        return Mutex(formatter)
    }()
}
