import Foundation
import SesameCore
import SesameCrypto
import SesameHTTP
import SesameServer
import SesameTestSupport
import Testing

@Suite struct FlowTests {
    @Test("a linked person confirms inline: verified, status completed with a token", arguments: Backend.allCases)
    func verifiedEndToEnd(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person(passkeys: 2)
        try harness.link("acct_123", to: person.id)
        let created = try await harness.createRequest(ref: "acct_123")
        let requestID = try #require(created["request_id"] as? String)
        let reply = try await harness.verifyInline(requestID)
        #expect(reply.status == 200)
        #expect(reply.outcome.outcome == "verified", "\(reply)")
        let status = try await harness.status(requestID)
        #expect(status.data?["status"] as? String == "completed", "\(status)")
        #expect((status.data?["verification_token"] as? String)?.split(separator: ".").count == 3)
    }
}

@Suite struct LogCorrelationTests {
    @Test("routes of a verification request tag the log with HMAC(log key, request ID), never the ID", arguments: [Backend.sqlite])
    func correlation(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let requestID = try #require(try await harness.createRequest()["request_id"] as? String)
        let expected = try #require(harness.sesame.inline.logCorrelation(requestID: requestID))
        #expect(expected.count == 8 && expected.allSatisfy(\.isHexDigit) && !requestID.contains(expected))
        let key = HMAC.sha256(key: harness.sesame.inline.logKey, message: Array(requestID.utf8))
        #expect(expected == key.prefix(4).map { String(format: "%02x", $0) }.joined())
        for path in ["/operations/request/passkey-options", "/operations/handoff/options"] {
            let request = HTTPRequest(method: .POST, path: path, headers: ["Content-Type": "application/json"],
                                      body: Array(#"{"request_id":"\#(requestID)"}"#.utf8), remoteAddress: "127.0.0.1")
            #expect(harness.application.router.respond(to: request).correlation == expected, "\(path)")
        }
        #expect(harness.sesame.inline.logCorrelation(requestID: "not-a-request") == nil)
    }
}
