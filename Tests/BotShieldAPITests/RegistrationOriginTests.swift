import Foundation
import SesameClient
import SesameCore
import SesameTestSupport
import Testing
import WebAuthn

/// Row 41: passkeys of the relying party are created only on its own pages, never in a partner's app.
@Suite struct RegistrationOriginTests {
    @Test("row 41: a registration from an approved partner app's origin is refused; from the hosted pages it works",
          arguments: Backend.allCases)
    func onlyOurPages(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let fingerprint = [UInt8](repeating: 0xAB, count: 32)
        let app = try harness.sesame.partners.addApp(partnerID: harness.partner.id,
                                                     platform: .android(packageName: "com.partner.app", sha256Fingerprints: [fingerprint]))
        _ = try harness.sesame.partners.setAppState(partnerID: harness.partner.id, appID: app.id, to: .approved)
        let user = try harness.sesame.users.create(projectID: harness.projectID, id: nil, email: nil, password: nil, name: nil)
        let secret = try harness.sesame.sessions.create(projectID: harness.projectID, userID: user.id, provider: "passkey", factors: ["passkey"],
                                                        client: ClientInfo(ip: "127.0.0.1", userAgent: "tests")).secret
        let headers = ["X-Appwrite-Project": harness.projectID, "X-Appwrite-Session": secret]

        /// Starts a registration through the account API and answers it from `origin`.
        func register(origin: String) async throws -> HTTPReply {
            let start = try await harness.post("/v1/account/passkeys", [:], headers: headers)
            #expect(start.status == 201, "\(start)")
            let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                   from: JSONSerialization.data(withJSONObject: try #require(start.object["publicKey"])))
            let response = try SoftwareAuthenticator().create(options, origin: origin)
            let credential = try JSONSerialization.jsonObject(with: JSONEncoder().encode(response))
            let id = try #require(start.object["passkeyId"] as? String)
            return try await harness.send("PUT", "/v1/account/passkeys/\(id)/verification",
                                          body: try JSONSerialization.data(withJSONObject: ["credential": credential]), headers: headers)
        }

        for origin in ["android:apk-key-hash:" + Base64URL.encode(fingerprint), "https://partner.example"] {
            let refused = try await register(origin: origin)
            #expect(refused.status == 401 && refused.object["type"] as? String == "user_passkey_invalid", "\(origin): \(refused)")
        }
        #expect(try harness.sesame.passkeys.list(userID: user.id).isEmpty)
        #expect(try await register(origin: InlineHarness.appURL).status == 200)
        #expect(try harness.sesame.passkeys.list(userID: user.id).count == 1)
    }
}
