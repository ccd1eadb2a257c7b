import Foundation
import Testing
import WebAuthn
@testable import SesameCore

/// The one WebAuthn options encoder both faces use: the JSON types, with timeout and user verification from the engine.
@Suite struct WebAuthnOptionsTests {
    static let credential = CredentialDescriptor(id: [1, 2, 3], transports: ["internal", "hybrid"])
    static let bare = CredentialDescriptor(id: [4, 5], transports: [])

    func object(_ value: some JSONWritable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(value.jsonBytes)) as? [String: Any])
    }

    @Test("request options: keys, base64url values, transports only when stored, timeout and UV by binding")
    func request() throws {
        let inline = RequestOptionsJSON(rpID: "id.example", challenge: [0xFB, 0xFF], allowCredentials: [Self.credential, Self.bare],
                                        kind: .verificationRequest)
        let object = try object(inline)
        #expect(Set(object.keys) == ["rpId", "challenge", "allowCredentials", "userVerification", "timeout"])
        #expect(object["challenge"] as? String == "-_8" && object["rpId"] as? String == "id.example")
        #expect(object["timeout"] as? Int == 60_000 && object["userVerification"] as? String == "required")
        let allowed = try #require(object["allowCredentials"] as? [[String: Any]])
        #expect(allowed.count == 2 && allowed[0]["id"] as? String == "AQID" && allowed[0]["type"] as? String == "public-key")
        #expect(allowed[0]["transports"] as? [String] == ["internal", "hybrid"] && allowed[1]["transports"] == nil)
        #expect(RequestOptionsJSON(rpID: "x", challenge: [], allowCredentials: [], kind: .handOff).timeout == 60_000)
        #expect(RequestOptionsJSON(rpID: "x", challenge: [], allowCredentials: [], kind: .signIn).timeout == 300_000)
        #expect(ChallengeBinding.Kind.signIn.userVerification == .required)
        #expect(ChallengeBinding.Kind.verificationRequest.userVerification == .afterIdentity)
        #expect(ChallengeBinding.handOff(requestID: "r").kind == .handOff)
    }

    @Test("creation options: the discoverable, UV-required, attestation-free shape with the account ceremony's timeout")
    func creation() throws {
        let start = RegistrationStart(
            passkeyID: "p", challenge: [1], rpID: "shop.example", rpName: "Shop", userHandle: [9, 9], userName: "a@example.org",
            userDisplayName: "A", algorithms: [-7, -257], excludeCredentials: [Self.bare], createdAt: Date(), expiresAt: Date(),
            rateLimit: RateLimitDecision(allowed: true, limit: 10, remaining: 9, resetAt: Date())
        )
        let object = try object(start.options)
        #expect(Set(object.keys) == ["rp", "user", "challenge", "pubKeyCredParams", "timeout", "excludeCredentials",
                                     "authenticatorSelection", "attestation", "hints", "extensions"])
        #expect(object["timeout"] as? Int == 300_000 && object["attestation"] as? String == "none")
        let selection = try #require(object["authenticatorSelection"] as? [String: Any])
        #expect(selection["userVerification"] as? String == "required" && selection["residentKey"] as? String == "required")
        #expect((object["user"] as? [String: Any])?["id"] as? String == "CQk")
        #expect((object["pubKeyCredParams"] as? [[String: Any]])?.map { $0["alg"] as? Int } == [-7, -257])
        #expect((object["excludeCredentials"] as? [[String: Any]])?.first?["transports"] == nil)
        #expect((object["rp"] as? [String: String]) == ["id": "shop.example", "name": "Shop"])
        #expect((object["extensions"] as? [String: Bool]) == ["credProps": true] && (object["hints"] as? [String]) == [])
    }

    @Test("the options are compact JSON with members in name order")
    func bytes() {
        let options = RequestOptionsJSON(rpID: "id.example", challenge: [0xFB, 0xFF], allowCredentials: [Self.credential, Self.bare], kind: .signIn)
        #expect(String(decoding: options.jsonBytes, as: UTF8.self) == #"{"allowCredentials":[{"id":"AQID","transports":["internal","hybrid"],"type":"public-key"},{"id":"BAU","type":"public-key"}],"challenge":"-_8","rpId":"id.example","timeout":300000,"userVerification":"required"}"#)
    }
}
