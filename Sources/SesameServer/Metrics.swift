import Foundation
import SesameHTTP
import Synchronization

/// Counters and a latency histogram in Prometheus text format, shared by every worker thread.
///
/// Exposes `sesame_http_requests_total{route,method,status}`, `sesame_http_request_duration_seconds`
/// (a histogram per route) and `sesame_ceremonies_total{face,ceremony,outcome,reason}` (one per finished or refused
/// ceremony; `reason` is the WebAuthn or domain code of a failure, empty on success).
public final class Metrics: Sendable {
    /// Histogram bucket upper bounds, in seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct RequestKey: Hashable { let route: String, method: String, status: Int }
    private struct Histogram {
        var counts = [UInt64](repeating: 0, count: Metrics.buckets.count)
        var count: UInt64 = 0
        var sum: Double = 0

        /// Counts one observation in every bucket whose bound it is within.
        mutating func record(_ seconds: Double) {
            for (index, bound) in Metrics.buckets.enumerated() where seconds <= bound { counts[index] += 1 }
            count += 1
            sum += seconds
        }
    }
    private struct CeremonyKey: Hashable { let face: String, ceremony: String, outcome: String, reason: String }
    private struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [String: Histogram] = [:]
        var ceremonies: [CeremonyKey: UInt64] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Records one answered request.
    /// - Parameters:
    ///   - route: the route pattern (never the concrete path, which may carry IDs); `unmatched` when none.
    public func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            // In place: a copy taken out of the dictionary would copy its counts on every request.
            state.latency[route, default: Histogram()].record(seconds)
        }
    }

    /// Records a finished or refused ceremony: `outcome` is `success` without a reason, `failure` with one.
    public func recordCeremony(_ observation: CeremonyObservation) {
        let key = CeremonyKey(face: observation.face, ceremony: observation.ceremony, outcome: observation.succeeded ? "success" : "failure",
                              reason: observation.reason)
        state.withLock { $0.ceremonies[key, default: 0] += 1 }
    }

    /// The Prometheus text exposition (format 0.0.4).
    public func exposition() -> String {
        let state = state.withLock { $0 }
        var lines: [String] = []
        lines.append("# HELP sesame_http_requests_total HTTP requests answered, by route pattern, method and status.")
        lines.append("# TYPE sesame_http_requests_total counter")
        for (key, value) in state.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            lines.append("sesame_http_requests_total{route=\"\(escape(key.route))\",method=\"\(key.method)\",status=\"\(key.status)\"} \(value)")
        }
        lines.append("# HELP sesame_http_request_duration_seconds Time from request to response, by route pattern.")
        lines.append("# TYPE sesame_http_request_duration_seconds histogram")
        for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
            let label = "route=\"\(escape(route))\""
            for (index, bound) in Self.buckets.enumerated() {
                lines.append("sesame_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(histogram.counts[index])")
            }
            lines.append("sesame_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(histogram.count)")
            lines.append("sesame_http_request_duration_seconds_sum{\(label)} \(histogram.sum)")
            lines.append("sesame_http_request_duration_seconds_count{\(label)} \(histogram.count)")
        }
        lines.append("# HELP sesame_ceremonies_total WebAuthn ceremonies finished or refused, by face, kind, outcome and reason.")
        lines.append("# TYPE sesame_ceremonies_total counter")
        let ceremonies = state.ceremonies.sorted {
            ($0.key.face, $0.key.ceremony, $0.key.outcome, $0.key.reason) < ($1.key.face, $1.key.ceremony, $1.key.outcome, $1.key.reason)
        }
        for (key, value) in ceremonies {
            lines.append("sesame_ceremonies_total{face=\"\(escape(key.face))\",ceremony=\"\(escape(key.ceremony))\","
                + "outcome=\"\(key.outcome)\",reason=\"\(escape(key.reason))\"} \(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
