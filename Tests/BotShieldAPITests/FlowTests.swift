import Foundation
import SesameCore
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
