import Foundation
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

/// The client API's limits (spec §1.4 `too_many_requests`): per IP and per tenant, each minute, in the error shape.
@Suite struct RateLimitTests {
    @Test("an IP gets the public per-IP limit of client calls a minute, then 429 too_many_requests with Retry-After",
          arguments: Backend.allCases)
    func perIP(backend: Backend) throws {
        let harness = try Harness(backend, callsPerMinutePerIP: 5)
        let call = { (ip: String) in
            harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization, remoteAddress: ip)
        }
        for _ in 0..<5 { #expect(call("192.0.2.1").status == 200) }
        let refused = call("192.0.2.1")
        #expect(refused.isError(429, "too_many_requests"), "\(refused.text)")
        #expect(Int(refused.response.headers["Retry-After"] ?? "") != nil)
        #expect(call("192.0.2.2").status == 200, "another address has its own count")
        // Token-authenticated calls count too.
        let token = try #require(harness.track("alice", "signIn")["token"] as? String)
        #expect(harness.send(.GET, "/client/user-authenticators", authorization: "Bearer " + token, remoteAddress: "192.0.2.1")
            .isError(429, "too_many_requests"))
        harness.clock.advance(by: 60)
        #expect(call("192.0.2.1").status == 200, "a new minute")
        // The server API is not limited this way.
        for _ in 0..<10 { #expect(harness.send(.GET, "/users/alice", authorization: harness.serverAuthorization, remoteAddress: "192.0.2.1").status == 200) }
    }

    @Test("a tenant gets a hundred times the per-IP limit a minute, from all addresses together", arguments: Backend.allCases)
    func perTenant(backend: Backend) throws {
        let harness = try Harness(backend, callsPerMinutePerIP: 1)
        for index in 0..<100 {
            #expect(harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization,
                                 remoteAddress: "198.51.100.\(index)").status == 200)
        }
        #expect(harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization,
                             remoteAddress: "203.0.113.1").isError(429, "too_many_requests"))
    }

    @Test("with the per-IP limits off (--dev-no-ip-limits), one address may pass the per-IP limit; the tenant's holds",
          arguments: Backend.allCases)
    func perIPOff(backend: Backend) throws {
        let harness = try Harness(backend, callsPerMinutePerIP: 1, perIPLimits: false)
        for _ in 0..<100 {
            #expect(harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization,
                                 remoteAddress: "127.0.0.1").status == 200)
        }
        #expect(harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization,
                             remoteAddress: "127.0.0.1").isError(429, "too_many_requests"))
    }
}
