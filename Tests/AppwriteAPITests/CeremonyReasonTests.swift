import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import Synchronization
import SesameTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a ceremony failed reaches the operator (`/metrics`, the request log), never the client.
@Suite struct CeremonyReasonTests {
    static func series(_ outcome: String, _ reason: String, ceremony: String = "authentication") -> String {
        #"sesame_ceremonies_total{face="appwrite",ceremony="\#(ceremony)",outcome="\#(outcome)",reason="\#(reason)"}"#
    }

    /// The value of one series in the exposition, or 0 when it is absent.
    static func count(_ text: String, _ series: String) -> Int {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Int($0.dropFirst(series.count + 1)) } ?? 0
    }

    @Test("a sign-in signed for another origin: the client gets user_passkey_invalid, the metrics origin_mismatch",
          arguments: Backend.allCases)
    func wrongOriginThroughTheRouter(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(secret, authenticator)

        let refused = try harness.signIn(authenticator, origin: "https://evil.example")
        refused.expectError(401, "user_passkey_invalid")
        #expect(!refused.text.contains("origin"), "no step name reaches the client: \(refused.text)")
        var text = harness.send(.GET, "/metrics").text
        #expect(Self.count(text, Self.series("failure", "origin_mismatch")) == 1, "\(text)")
        #expect(Self.count(text, Self.series("success", "", ceremony: "registration")) == 1, "\(text)")

        harness.clock.advance(by: 1)
        #expect(try harness.signIn(authenticator).status == 201)
        // A challenge used twice: a domain reason, the client's answer unchanged.
        let start = harness.send(.POST, "/v1/account/tokens/passkey")
        let assertion = try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, start), origin: shopOrigin)
        let body = #"{"challengeId":"\#(try #require(start.object["$id"] as? String))","credential":\#(try jsonText(assertion))}"#
        #expect(harness.send(.PUT, "/v1/account/tokens/passkey", json: body).status == 201)
        harness.send(.PUT, "/v1/account/tokens/passkey", json: body).expectError(401, "user_invalid_token")
        text = harness.send(.GET, "/metrics").text
        #expect(Self.count(text, Self.series("success", "")) == 2, "\(text)")
        #expect(Self.count(text, Self.series("failure", "challenge_expired")) == 1, "\(text)")
        #expect(Self.count(text, Self.series("failure", "origin_mismatch")) == 1, "\(text)")
    }

    @Test("a registration signed for another origin is counted as a refused registration with origin_mismatch")
    func wrongOriginRegistration() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let start = harness.startRegistration(secret)
        try harness.finishRegistration(secret, start, SoftwareAuthenticator(), origin: "https://evil.example")
            .expectError(401, "user_passkey_invalid")
        let text = harness.send(.GET, "/metrics").text
        #expect(Self.count(text, Self.series("failure", "origin_mismatch", ceremony: "registration")) == 1, "\(text)")
    }

    /// Collects what a request log writes.
    final class Collector: Sendable {
        let bytes = Mutex<[UInt8]>([])
        var lines: [String] { bytes.withLock { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").map(String.init) }
    }

    @Test("over a real socket: the refused sign-in's log line carries reason origin_mismatch, and /metrics counts it")
    func wrongOriginOverHTTP() async throws {
        let collector = Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        let harness = try Harness(log: log)
        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(secret, authenticator)
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.threadCount = 2
        let server = harness.application.makeServer(configuration: configuration)
        try server.start()
        defer { server.shutdown() }
        let base = "http://127.0.0.1:\(server.boundPort)"

        func call(_ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, text: String) {
            var request = URLRequest(url: try #require(URL(string: base + path)))
            request.httpMethod = method
            request.setValue(harness.projectID, forHTTPHeaderField: "X-Appwrite-Project")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let body { request.httpBody = Data(body.utf8) }
            let (data, response) = try await URLSession.shared.data(for: request)
            return (try #require(response as? HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
        }
        let start = try await call("POST", "/v1/account/tokens/passkey", body: "{}")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(start.text.utf8)) as? [String: Any])
        let request = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(object["publicKey"])))
        let assertion = try authenticator.get(request, origin: "https://evil.example")
        let refused = try await call("PUT", "/v1/account/tokens/passkey",
                                     body: #"{"challengeId":"\#(try #require(object["$id"] as? String))","credential":\#(try jsonText(assertion))}"#)
        #expect(refused.status == 401 && refused.text.contains("user_passkey_invalid") && !refused.text.contains("origin_mismatch"),
                "\(refused.text)")

        // The server records a request once it is sent, so the count may trail the answer by a moment.
        var counted = 0
        for _ in 0..<50 {
            counted = Self.count(try await call("GET", "/metrics").text, Self.series("failure", "origin_mismatch"))
            if counted > 0 { break }
            try await Task.sleep(for: .milliseconds(40))
        }
        #expect(counted == 1)
        log.flush()
        let line = try #require(collector.lines.first { $0.contains(#""method":"PUT""#) && $0.contains(#""route":"/v1/account/tokens/passkey""#) },
                                "\(collector.lines)")
        #expect(line.contains(#""reason":"origin_mismatch""#) && line.contains(#""status":401"#), "\(line)")
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["reason"] as? String == "origin_mismatch")
        // Successful requests carry no reason.
        #expect(collector.lines.filter { $0.contains(#""route":"/v1/account/tokens/passkey""#) && $0.contains(#""method":"POST""#) }
            .allSatisfy { !$0.contains("reason") })
    }
}

/// What the management API and the passkey policy list as accepted is exactly what a ceremony accepts.
@Suite struct AcceptedOriginsTests {
    @Test("a web platform on another domain is neither listed nor accepted; a listed one is", arguments: Backend.allCases)
    func listedIsAccepted(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.sesame.projects.addPlatform(projectID: harness.projectID, .web(hostname: "shop.example.net"))
        _ = try harness.sesame.projects.addPlatform(projectID: harness.projectID, .web(hostname: "login.shop.example"))
        let management = harness.send(.GET, "/api/v1/project", headers: [("Authorization", "Bearer \(harness.key)")])
        #expect(management.status == 200, "\(management.text)")
        let listed = try #require(management.object["origins"] as? [String], "\(management.text)")
        #expect(Set(listed) == ["https://shop.example", "https://login.shop.example"], "\(listed)")
        let policy = harness.send(.GET, "/v1/project/policies/passkey", headers: [("X-Appwrite-Key", harness.key)])
        #expect(Set(try #require(policy.object["origins"] as? [String])) == Set(listed), "\(policy.text)")

        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(secret, authenticator)
        // Listed: accepted. Off the relying party's domain, though a web platform: refused, and counted so.
        harness.clock.advance(by: 1)
        #expect(try harness.signIn(authenticator, origin: "https://login.shop.example").status == 201)
        try harness.signIn(authenticator, origin: "https://shop.example.net").expectError(401, "user_passkey_invalid")
        let text = harness.send(.GET, "/metrics").text
        #expect(CeremonyReasonTests.count(text, CeremonyReasonTests.series("failure", "origin_mismatch")) == 1, "\(text)")
    }
}
