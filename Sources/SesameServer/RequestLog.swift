import Foundation
import SesameCore
import Synchronization
import WebAuthn

/// Writes one JSON line per answered request.
///
/// Only what is safe to keep: time, method, route pattern (never the concrete path, which can carry IDs),
/// status, duration, the client address, a route's correlation tag `rq` when it sets one (a keyed hash, see
/// ``HTTPResponse/correlation``), and `reason`, the stable code of a refused ceremony (``CeremonyObservation/reason``). Never a request ID, header, query, body, secret, challenge or credential ID
/// (DESIGN.md, "Security and privacy").
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
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(2, base + offset, buffer.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    /// Logs one request.
    public func record(time: Date, method: String, route: String, status: Int, duration: Duration, remoteAddress: String,
                       correlation: String? = nil, reason: String? = nil) {
        let microseconds = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let full: [UInt8]? = pending.withLock { out in
            // Written straight into the batch, in the byte order of sorted keys, without intermediate strings.
            out += Self.durationKey
            Timestamps.appendDecimal(Int(microseconds / 1000), to: &out)  // trap-safe: integer division of a measured duration
            out.append(UInt8(ascii: "."))
            Timestamps.appendDecimal(Int(microseconds % 1000), minimumDigits: 3, to: &out)  // trap-safe: integer remainder
            out += Self.methodKey
            JSONWriter.appendQuoted(method, to: &out)
            if let reason, !reason.isEmpty {
                out += Self.reasonKey
                JSONWriter.appendQuoted(reason, to: &out)
            }
            out += Self.remoteKey
            JSONWriter.appendQuoted(remoteAddress, to: &out)
            out += Self.routeKey
            JSONWriter.appendQuoted(route, to: &out)
            if let correlation {
                out += Self.correlationKey
                JSONWriter.appendQuoted(correlation, to: &out)
            }
            out += Self.statusKey
            Timestamps.appendDecimal(status, to: &out)
            out += Self.timeKey
            Timestamps.appendRFC3339(time, to: &out)
            out += Self.lineEnd
            guard out.count >= Self.batchBytes else { return nil }
            defer { out.removeAll(keepingCapacity: true) }
            return out
        }
        if let full { sink(full) }
    }

    private static let durationKey = Array(#"{"duration_ms":"#.utf8)
    private static let methodKey = Array(#","method":"#.utf8)
    private static let reasonKey = Array(#","reason":"#.utf8)
    private static let remoteKey = Array(#","remote":"#.utf8)
    private static let routeKey = Array(#","route":"#.utf8)
    private static let correlationKey = Array(#","rq":"#.utf8)
    private static let statusKey = Array(#","status":"#.utf8)
    private static let timeKey = Array(#","time":""#.utf8)
    private static let lineEnd = Array("\"}\n".utf8)

    /// Writes every pending line now.
    public func flush() {
        let batch = pending.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        if !batch.isEmpty { sink(batch) }
    }
}
