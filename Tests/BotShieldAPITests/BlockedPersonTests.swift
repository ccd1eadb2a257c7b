import Foundation
import SesameCore
import SesameTestSupport
import Testing

/// A person the project blocked cannot confirm anything: their passkeys count for nothing until they are unblocked.
@Suite struct BlockedPersonTests {
    @Test("a blocked person: options fall back to no_passkey, a prepared answer is assertion_invalid on both paths; unblocked, it verifies",
          arguments: Backend.allCases)
    func blocked(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        let payload = try #require(try await harness.options(requestID).data)
        let answer = try harness.assert(payload)

        _ = try harness.sesame.users.setStatus(projectID: harness.projectID, id: person.id, active: false)
        let options = try await harness.options(requestID)
        #expect(options.data?["fallback"] as? String == "app" && options.data?["reason"] as? String == "no_passkey", "\(options)")
        let reply = try await harness.complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
        #expect(reply.outcome.outcome == "failed" && reply.outcome.code == "assertion_invalid", "\(reply)")
        #expect(try await harness.verifyByHandOff(requestID).outcome.code == "assertion_invalid")
        #expect(try await harness.status(requestID).data?["status"] as? String == "pending")

        _ = try harness.sesame.users.setStatus(projectID: harness.projectID, id: person.id, active: true)
        #expect(try await harness.verifyInline(requestID).outcome.outcome == "verified")
    }
}
