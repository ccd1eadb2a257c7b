import Foundation
import Synchronization
import Testing
@testable import SesameServer

@Suite struct MetricsTests {
    @Test("counts requests by route, method and status, with a cumulative latency histogram")
    func requests() {
        let metrics = Metrics()
        metrics.recordRequest(route: "/health", method: "GET", status: 200, duration: .microseconds(800))
        metrics.recordRequest(route: "/health", method: "GET", status: 200, duration: .milliseconds(30))
        metrics.recordRequest(route: "unmatched", method: "GET", status: 404, duration: .milliseconds(1))
        metrics.recordCeremony("authentication", outcome: "invalid_signature")
        let text = metrics.exposition()
        #expect(text.contains(#"sesame_http_requests_total{route="/health",method="GET",status="200"} 2"#))
        #expect(text.contains(#"sesame_http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.001"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.025"} 1"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="0.05"} 2"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_bucket{route="/health",le="+Inf"} 2"#))
        #expect(text.contains(#"sesame_http_request_duration_seconds_count{route="/health"} 2"#))
        #expect(text.contains(#"sesame_ceremonies_total{ceremony="authentication",outcome="invalid_signature"} 1"#))
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
    @Test("writes one JSON line with exactly the safe fields")
    func line() throws {
        let lines = Mutex<[String]>([])
        let log = RequestLog { line in lines.withLock { $0.append(line) } }
        log.record(time: Date(timeIntervalSince1970: 0), method: "POST", route: "/v1/account/passkeys/:passkeyId",
                   status: 201, duration: .milliseconds(12), remoteAddress: "127.0.0.1")
        let written = lines.withLock { $0 }
        #expect(written.count == 1 && !written[0].contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "method", "route", "status", "duration_ms", "remote"])
        #expect(object["route"] as? String == "/v1/account/passkeys/:passkeyId")
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
        #expect(object["duration_ms"] as? Double == 12)
    }
}
