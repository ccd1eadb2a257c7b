import Foundation
import Synchronization
import SesameCore
import SesameHTTP
import SesameStore
import Testing
@testable import SesameServer

@Suite struct MetricsTests {
    @Test("counts requests by route, method and status, with a cumulative latency histogram")
    func requests() {
        let metrics = Metrics()
        metrics.recordRequest(route: "/health", method: "GET", status: 200, duration: .microseconds(800))
        metrics.recordRequest(route: "/health", method: "GET", status: 200, duration: .milliseconds(30))
        metrics.recordRequest(route: "unmatched", method: "GET", status: 404, duration: .milliseconds(1))
        let text = metrics.exposition()
        #expect(text.contains(#"sesame_http_requests_total{route="/health",method="GET",status="200"} 2"#))
        #expect(text.contains(#"sesame_http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.001"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.025"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.05"} 2"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="+Inf"} 2"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_count{route="/health"} 2"#))
    }

    @Test("counts the ceremony a response carries by face, kind, outcome and reason, and nothing for responses without one")
    func ceremonies() throws {
        let application = SesameApplication(sesame: try Self.sesame(), log: nil)
        let request = HTTPRequest(method: .PUT, path: "/v1/account/tokens/passkey", remoteAddress: "127.0.0.1")
        var refused = HTTPResponse(status: 401)
        refused.ceremony = CeremonyObservation(face: "appwrite", ceremony: "authentication", reason: "origin_mismatch")
        var verified = HTTPResponse(status: 201)
        verified.ceremony = CeremonyObservation(face: "appwrite", ceremony: "authentication", reason: "")
        application.observe(request, refused, .milliseconds(1))
        application.observe(request, refused, .milliseconds(1))
        application.observe(request, verified, .milliseconds(1))
        application.observe(request, HTTPResponse(status: 200), .milliseconds(1))
        let text = application.metrics.exposition()
        #expect(text.contains(#"sesame_ceremonies_total{face="appwrite",ceremony="authentication",outcome="failure",reason="origin_mismatch"} 2"#),
                "\(text)")
        #expect(text.contains(#"sesame_ceremonies_total{face="appwrite",ceremony="authentication",outcome="success",reason=""} 1"#))
        #expect(text.components(separatedBy: "\nsesame_ceremonies_total{").count == 3, "two series, nothing for the plain response")
    }

    /// A domain over a throwaway SQLite database.
    static func sesame() throws -> Sesame {
        let url = "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("sesame-metrics-\(UUID().uuidString)/db").path
        return Sesame(store: try Store.open(url), clock: ManualClock(), masterKeys: MasterKeyring(current: .generate()))
    }

    @Test("keeps exact counts under concurrent recording")
    func concurrent() {
        let metrics = Metrics()
        DispatchQueue.concurrentPerform(iterations: 1000) { _ in
            metrics.recordRequest(route: "/r", method: "POST", status: 201, duration: .milliseconds(2))
        }
        #expect(metrics.exposition().contains(#"sesame_http_requests_total{route="/r",method="POST",status="201"} 1000"#))
    }
}

@Suite struct RequestLogTests {
    /// Collects what a log writes.
    final class Collector: Sendable {
        let bytes = Mutex<[UInt8]>([])
        var lines: [String] { bytes.withLock { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").map(String.init) }
    }

    @Test("writes one JSON line per request with exactly the safe fields, escaped")
    func line() throws {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        log.record(time: Date(timeIntervalSince1970: 1_764_417_600.123), method: "POST", route: "/v1/account/passkeys/:passkeyId",
                   status: 201, duration: .microseconds(12_345), remoteAddress: "127.0.0.1")
        log.record(time: Date(timeIntervalSince1970: 0), method: "GET", route: "un\"matched\\\n", status: 404,
                   duration: .milliseconds(2), remoteAddress: "::1")
        log.flush()
        let lines = collector.lines
        #expect(lines.count == 2)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "method", "route", "status", "duration_ms", "remote"])
        #expect(object["route"] as? String == "/v1/account/passkeys/:passkeyId")
        #expect(object["time"] as? String == "2025-11-29T12:00:00.123Z")
        #expect(object["duration_ms"] as? Double == 12.345)
        #expect(object["status"] as? Int == 201)
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["route"] as? String == "un\"matched\\\n")
        #expect(second["time"] as? String == "1970-01-01T00:00:00.000Z")
    }

    @Test("adds a route's correlation tag as rq, in sorted key order")
    func correlation() throws {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        log.record(time: Date(timeIntervalSince1970: 0), method: "POST", route: "/operations/request/passkey-options", status: 200,
                   duration: .zero, remoteAddress: "127.0.0.1", correlation: "0a1b2c3d")
        log.flush()
        let line = try #require(collector.lines.first)
        #expect(line.contains(#""route":"/operations/request/passkey-options","rq":"0a1b2c3d","status":200"#), "\(line)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "method", "route", "rq", "status", "duration_ms", "remote"])
    }

    @Test("adds a refused ceremony's reason, in sorted key order; nothing for an empty reason")
    func reason() throws {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        log.record(time: Date(timeIntervalSince1970: 0), method: "PUT", route: "/v1/account/tokens/passkey", status: 401,
                   duration: .zero, remoteAddress: "127.0.0.1", reason: "origin_mismatch")
        log.record(time: Date(timeIntervalSince1970: 0), method: "PUT", route: "/v1/account/tokens/passkey", status: 201,
                   duration: .zero, remoteAddress: "127.0.0.1", reason: "")
        log.flush()
        let lines = collector.lines
        #expect(lines.count == 2)
        #expect(lines[0].contains(#""method":"PUT","reason":"origin_mismatch","remote":"127.0.0.1""#), "\(lines[0])")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "method", "reason", "route", "status", "duration_ms", "remote"])
        #expect(!lines[1].contains("reason"))
    }

    @Test("quotes, backslashes and control characters in a field are escaped: the line stays one JSON object")
    func escaping() throws {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        let odd = "a\"b\\c\nd\u{1}e/é"
        log.record(time: Date(timeIntervalSince1970: 0), method: odd, route: "/x", status: 400, duration: .zero, remoteAddress: odd)
        log.flush()
        let lines = collector.lines
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["method"] as? String == odd && object["remote"] as? String == odd)
    }

    @Test("writes in batches: nothing before a flush or a full batch, everything after")
    func batching() {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        log.record(time: Date(), method: "GET", route: "/health", status: 200, duration: .zero, remoteAddress: "")
        #expect(collector.lines.isEmpty)
        for _ in 0..<200 { log.record(time: Date(), method: "GET", route: "/health", status: 200, duration: .zero, remoteAddress: "") }
        #expect(collector.lines.count >= 100)
        log.flush()
        #expect(collector.lines.count == 201)
    }
}
