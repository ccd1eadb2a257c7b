import Foundation
import SesameClient
import Testing
import WebAuthn

/// The JSON wire types: the shapes real servers send decode, and what the authenticator writes round-trips.
@Suite struct WireTypesTests {
    let rp = TestRelyingParty()

    /// Creation options as py_webauthn's `options_to_json` writes them, plus L3 and vendor members it does not
    /// know about (`hints`, `extensions`, `attestationFormats`, a vendor member).
    static let pyWebAuthnCreation = #"""
        {"rp": {"name": "Example", "id": "example.org"},
         "user": {"id": "dXNlci0x", "name": "alice@example.org", "displayName": "Alice"},
         "challenge": "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA",
         "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8},
                              {"type": "public-key", "alg": -257}],
         "timeout": 60000,
         "excludeCredentials": [{"id": "AAECAwQFBgcICQoLDA0ODw", "type": "public-key",
                                 "transports": ["internal", "hybrid"]}],
         "authenticatorSelection": {"residentKey": "required", "requireResidentKey": true,
                                    "userVerification": "required", "futureMember": 1},
         "attestation": "none",
         "hints": ["client-device"],
         "attestationFormats": [],
         "extensions": {"credProps": true, "largeBlob": {"support": "preferred"}},
         "x-vendor": {"nested": [1, 2, {"deep": null}]}}
        """#

    /// Creation options as Appwrite's PHP library (web-auth/webauthn-lib) writes them: other member order,
    /// no `rp.id`-free shortcuts, `null` for absent members, empty lists.
    static let appwriteCreation = #"""
        {"rp":{"name":"Appwrite","id":"example.org","icon":null},
         "pubKeyCredParams":[{"type":"public-key","alg":-8},{"type":"public-key","alg":-7},{"type":"public-key","alg":-257}],
         "challenge":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA",
         "attestation":"none",
         "user":{"name":"alice@example.org","id":"dXNlci0x","displayName":"Alice","icon":null},
         "authenticatorSelection":{"requireResidentKey":false,"userVerification":"preferred","residentKey":"preferred",
                                   "authenticatorAttachment":null},
         "timeout":60000,"excludeCredentials":[],"extensions":null}
        """#

    static let challenge: [UInt8] = [
        0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x90, 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x90,
        0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x90, 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x90,
    ]

    @Test(
        "creation options from real server libraries decode and drive a registration the verifier accepts",
        arguments: [pyWebAuthnCreation, appwriteCreation])
    func serverCreationOptions(json: String) throws {
        let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: Data(json.utf8))
        #expect(options.rp.id == "example.org")
        #expect(options.user.displayName == "Alice")
        #expect(options.pubKeyCredParams.map(\.alg).contains(-7))
        #expect(options.timeout == 60_000)
        #expect(options.attestation == "none")
        let authenticator = SoftwareAuthenticator()
        let response = try authenticator.create(options, origin: rp.origin)
        _ = try rp.verify(response, challenge: Self.challenge)
        #expect(authenticator.credentials(rpID: "example.org").first?.userHandle == Array("user-1".utf8))
    }

    @Test("py_webauthn creation options keep the members the authenticator reads")
    func pyWebAuthnMembers() throws {
        let options = try JSONDecoder().decode(
            PublicKeyCredentialCreationOptionsJSON.self, from: Data(Self.pyWebAuthnCreation.utf8))
        #expect(options.excludeCredentials?.first?.transports == ["internal", "hybrid"])
        #expect(options.authenticatorSelection?.requireResidentKey == true)
        #expect(options.authenticatorSelection?.residentKey == "required")
        #expect(options.hints == ["client-device"])
        #expect(options.extensions != nil)
    }

    @Test(
        "request options decode with members missing, null or unknown",
        arguments: [
            #"{"challenge":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA","timeout":60000,"rpId":"example.org","allowCredentials":[],"userVerification":"preferred"}"#,
            #"{"challenge":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA"}"#,
            #"{"allowCredentials":null,"rpId":null,"challenge":"q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA","extensions":{"appid":"https://example.org"},"hints":[],"mediation":"conditional"}"#,
        ])
    func serverRequestOptions(json: String) throws {
        let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self, from: Data(json.utf8))
        #expect(options.challenge == Base64URL.encode(Self.challenge))
        let authenticator = SoftwareAuthenticator()
        let record = try rp.register(authenticator)
        let response = try authenticator.get(options, origin: rp.origin)
        _ = try rp.verify(response, challenge: Self.challenge, record: record)
    }

    @Test("options missing a required member do not decode")
    func missingRequiredMember() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                PublicKeyCredentialRequestOptionsJSON.self, from: Data(#"{"rpId":"example.org"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                PublicKeyCredentialCreationOptionsJSON.self, from: Data(#"{"rp":{"name":"x"},"challenge":"AA"}"#.utf8))
        }
    }

    @Test("padded base64url in options is accepted")
    func paddedBase64URL() throws {
        var options = rp.creationOptions(challenge: [0xFF, 0xEE])
        options.challenge = "_-4="
        let response = try SoftwareAuthenticator().create(options, origin: rp.origin)
        _ = try rp.verify(response, challenge: [0xFF, 0xEE])
    }

    @Test("responses and options round-trip through JSONEncoder and JSONDecoder")
    func roundTrip() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(attestation: .packedSelf))
        let creation = try JSONDecoder().decode(
            PublicKeyCredentialCreationOptionsJSON.self, from: Data(Self.pyWebAuthnCreation.utf8))
        #expect(try roundTripped(creation) == creation)
        let registration = try authenticator.create(creation, origin: rp.origin)
        #expect(try roundTripped(registration) == registration)
        let request = rp.requestOptions(challenge: Self.challenge, allow: [[1, 2, 3]])
        #expect(try roundTripped(request) == request)
        let assertion = try authenticator.get(rp.requestOptions(challenge: Self.challenge), origin: rp.origin)
        #expect(try roundTripped(assertion) == assertion)
    }

    @Test("a registration response has the members and names of toJSON()")
    func registrationShape() throws {
        let response = try SoftwareAuthenticator().create(
            rp.creationOptions(challenge: Self.challenge), origin: rp.origin)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "id", "rawId", "response", "authenticatorAttachment", "clientExtensionResults", "type",
            ])
        #expect(object["type"] as? String == "public-key")
        #expect(object["authenticatorAttachment"] as? String == "platform")
        #expect((object["clientExtensionResults"] as? [String: Any])?.isEmpty == true)
        let inner = try #require(object["response"] as? [String: Any])
        #expect(
            Set(inner.keys) == [
                "clientDataJSON", "authenticatorData", "transports", "publicKey", "publicKeyAlgorithm",
                "attestationObject",
            ])
        #expect(inner["publicKeyAlgorithm"] as? Int == -7)
        #expect(inner["transports"] as? [String] == ["internal"])
        for member in ["clientDataJSON", "authenticatorData", "publicKey", "attestationObject"] {
            let value = try #require(inner[member] as? String)
            #expect(!value.contains("=") && !value.contains("+") && !value.contains("/"))
        }
    }

    @Test("an authentication response has the members and names of toJSON()")
    func authenticationShape() throws {
        let authenticator = SoftwareAuthenticator()
        _ = try rp.register(authenticator)
        let response = try authenticator.get(rp.requestOptions(challenge: Self.challenge), origin: rp.origin)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "id", "rawId", "response", "authenticatorAttachment", "clientExtensionResults", "type",
            ])
        let inner = try #require(object["response"] as? [String: Any])
        #expect(Set(inner.keys) == ["clientDataJSON", "authenticatorData", "signature", "userHandle"])
        #expect(inner["userHandle"] as? String == "dXNlci0x")
    }

    @Test("a browser's AuthenticationResponseJSON without userHandle decodes")
    func browserResponse() throws {
        let json = #"""
            {"id":"AAEC","rawId":"AAEC","type":"public-key","authenticatorAttachment":"cross-platform",
             "clientExtensionResults":{"credProps":{"rk":true}},
             "response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA","attestationObject":"oA"}}
            """#
        let response = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(json.utf8))
        #expect(response.response.userHandle == nil)
        #expect(response.authenticatorAttachment == "cross-platform")
    }

    private func roundTripped<T: Codable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
    }
}
