import Foundation
import SesameClient
import SesameCore
import SesameTestSupport
import Testing

/// The Swift SDK's inline helper against the real server: the answer it gives the app for each situation.
@Suite struct SDKTests {
    @Test("InlineVerification: verified, then the panels for no credential, not linked, no passkey and a closed request",
          arguments: Backend.allCases)
    func sdkAgainstServer(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let base = try #require(URL(string: harness.base + "/operations"))
        let sdk = InlineVerification(baseURL: base, authenticator: SoftwareInlineAuthenticator(harness.authenticator, origin: InlineHarness.iosOrigin))

        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        #expect(await sdk.verify(requestID: requestID) == .verified)
        #expect(try await harness.status(requestID).data?["status"] as? String == "completed")
        // The same request again: closed.
        #expect(await sdk.verify(requestID: requestID) == .panel(.failed(code: "request_closed"), url: nil, setupURL: nil))

        // A device without the person's passkey: the panel keeps the hand-off and the setup link from the server.
        let elsewhere = InlineVerification(baseURL: base, authenticator: SoftwareInlineAuthenticator(SoftwareAuthenticator(),
                                                                                                   origin: InlineHarness.iosOrigin))
        let second = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        let handOff = URL(string: "\(InlineHarness.appURL)/verify?request_id=\(second)")
        let setup = URL(string: "\(InlineHarness.appURL)/app/account/passkey")
        #expect(await elsewhere.verify(requestID: second) == .panel(.noCredential, url: handOff, setupURL: setup))
        #expect(try await harness.status(second).data?["status"] as? String == "pending")

        let unlinked = try #require(try await harness.createRequest(ref: "acct_unknown")["request_id"] as? String)
        let unlinkedURL = URL(string: "\(InlineHarness.appURL)/verify?request_id=\(unlinked)")
        #expect(await sdk.verify(requestID: unlinked) == .panel(.notLinked, url: unlinkedURL, setupURL: setup))

        let empty = try harness.person(passkeys: 0)
        try harness.link("acct_empty", to: empty.id)
        let noPasskey = try #require(try await harness.createRequest(ref: "acct_empty")["request_id"] as? String)
        let noPasskeyURL = URL(string: "\(InlineHarness.appURL)/verify?request_id=\(noPasskey)")
        #expect(await sdk.verify(requestID: noPasskey) == .panel(.noPasskey, url: noPasskeyURL, setupURL: setup))

        harness.clock.advance(by: 301)
        #expect(await sdk.verify(requestID: second) == .panel(.expired(code: "request_expired"), url: nil, setupURL: nil))
    }
}
