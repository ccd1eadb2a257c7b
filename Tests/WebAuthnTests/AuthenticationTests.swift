import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// §7.2: genuine assertions pass; each step has a negative case built by mutating a valid one.
@Suite struct AuthenticationTests {
    func verify(_ fixture: CeremonyFixture, credential: AuthenticationCredential? = nil, policy: RelyingPartyPolicy? = nil,
                record: CredentialRecord? = nil, allowed: [[UInt8]] = [], identified: [UInt8]? = nil) throws -> VerifiedAuthentication {
        try AuthenticationVerifier.verify(
            credential ?? fixture.authentication(),
            expectations: AuthenticationExpectations(policy: policy ?? fixture.policy, challenge: fixture.challenge,
                                                     allowedCredentialIDs: allowed,
                                                     identification: identified.map { .identified(expectedUserHandle: $0) } ?? .usernameless),
            record: try record ?? fixture.record())
    }

    func expectRejection(_ code: WebAuthnError.Code, credential: AuthenticationCredential? = nil,
                         policy: RelyingPartyPolicy? = nil, record: CredentialRecord? = nil, allowed: [[UInt8]] = [],
                         identified: [UInt8]? = nil, keyKind: PrivateKey.Kind = .p256, _ mutate: (inout CeremonyFixture) throws -> Void = { _ in }) throws {
        // Policy and record come from the fixture as it was, so a mutation breaks only the response.
        let original = CeremonyFixture(keyKind: keyKind)
        var fixture = original
        try mutate(&fixture)
        let error = #expect(throws: WebAuthnError.self) {
            try verify(fixture, credential: credential, policy: policy ?? original.policy,
                       record: record ?? original.record(), allowed: allowed, identified: identified)
        }
        #expect(error?.code == code, "\(error.map(String.init(reflecting:)) ?? "no error")")
    }

    @Test("accepts ES256 and Ed25519 assertions and reports the new counter and flags", arguments: [PrivateKey.Kind.p256, .ed25519])
    func accepts(kind: PrivateKey.Kind) throws {
        var fixture = CeremonyFixture(keyKind: kind)
        fixture.signCount = 42
        fixture.flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
        let result = try verify(fixture, record: try fixture.record(signCount: 41, backupEligible: true),
                                allowed: [[1], fixture.credentialID])
        #expect(result.credentialID == fixture.credentialID)
        #expect(result.newSignCount == 42)
        #expect(result.userVerified && result.backupEligible && result.backedUp)
    }

    @Test("accepts a counter of zero when the stored counter is zero too")
    func zeroCounters() throws {
        #expect(try verify(CeremonyFixture()).newSignCount == 0)
    }

    @Test("parses AuthenticationResponseJSON as browsers send it, with and without userHandle")
    func parsesJSON() throws {
        var fixture = CeremonyFixture()
        let parsed = try AuthenticationCredential(json: CeremonyFixture.json(fixture.authentication()))
        #expect(parsed.userHandle == fixture.userHandle)
        _ = try verify(fixture, credential: parsed)
        fixture.userHandle = nil
        #expect(try AuthenticationCredential(json: CeremonyFixture.json(fixture.authentication())).userHandle == nil)
    }

    @Test("step 5: credential not in allowCredentials")
    func notAllowed() throws {
        try expectRejection(.credentialNotAllowed, allowed: [[1, 2, 3]])
    }

    @Test("step 6: identified user: a credential or userHandle of another account fails, no userHandle is fine")
    func identifiedUser() throws {
        let fixture = CeremonyFixture()
        try expectRejection(.userHandleMismatch, identified: Array("user-2".utf8))
        try expectRejection(.userHandleMismatch, record: try fixture.record(), identified: fixture.userHandle) {
            $0.userHandle = Array("user-2".utf8)
        }
        var anonymous = fixture
        anonymous.userHandle = nil
        _ = try verify(anonymous, record: try fixture.record(), identified: fixture.userHandle)
    }

    @Test("step 6: usernameless: userHandle missing, or naming another user, or a response for another credential")
    func wrongOwner() throws {
        try expectRejection(.userHandleMissing) { $0.userHandle = nil }
        try expectRejection(.userHandleMismatch) { $0.userHandle = Array("user-2".utf8) }
        let fixture = CeremonyFixture()
        var record = try fixture.record()
        record.id = [0xEE]
        try expectRejection(.credentialIDMismatch, record: record)
    }

    @Test("step 8: authenticator data truncated or with trailing bytes")
    func malformedAuthData() throws {
        try expectRejection(.malformedAuthenticatorData) { $0.authenticatorDataSuffix = [0] }
        let fixture = CeremonyFixture()
        let good = fixture.authentication()
        let short = AuthenticationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                             authenticatorData: Array(good.authenticatorData.prefix(36)), signature: good.signature, userHandle: good.userHandle)
        try expectRejection(.malformedAuthenticatorData, credential: short)
    }

    @Test("steps 9-10: client data not JSON")
    func malformedClientData() throws {
        let good = CeremonyFixture().authentication()
        let bad = AuthenticationCredential(rawID: good.rawID, clientDataJSON: Array("{".utf8),
                                           authenticatorData: good.authenticatorData, signature: good.signature, userHandle: good.userHandle)
        try expectRejection(.malformedClientData, credential: bad)
    }

    @Test("step 11: wrong type")
    func wrongType() throws {
        try expectRejection(.clientDataTypeMismatch) { $0.clientData["type"] = .string("webauthn.create") }
    }

    @Test("step 12: wrong challenge")
    func wrongChallenge() throws {
        try expectRejection(.challengeMismatch) { $0.clientData["challenge"] = .string(Base64URL.encode(Array(repeating: 0, count: 32))) }
    }

    @Test("step 13: wrong origin")
    func wrongOrigin() throws {
        try expectRejection(.originMismatch) { $0.origin = "https://example.org.evil.example" }
    }

    @Test("step 14: cross-origin call or unexpected top origin")
    func topOrigin() throws {
        try expectRejection(.crossOriginNotAllowed) { $0.clientData["crossOrigin"] = .bool(true) }
        var policy = CeremonyFixture().policy
        policy.crossOrigin = .allowed(topOrigins: ["https://shop.example"])
        try expectRejection(.topOriginMismatch, policy: policy) {
            $0.clientData = ["crossOrigin": .bool(true), "topOrigin": .string("https://evil.example")]
        }
    }

    @Test("step 15: wrong RP ID hash")
    func wrongRPID() throws {
        try expectRejection(.rpIDHashMismatch) { $0.rpID = "evil.example" }
    }

    @Test("step 16: UP missing")
    func upMissing() throws {
        try expectRejection(.userPresenceRequired) { $0.flags = [.userVerified] }
    }

    @Test("step 17: UV required but missing")
    func uvMissing() throws {
        try expectRejection(.userVerificationRequired) { $0.flags = [.userPresent] }
    }

    @Test("step 18: BS without BE")
    func backupState() throws {
        try expectRejection(.backupStateWithoutEligibility) { $0.flags = [.userPresent, .userVerified, .backedUp] }
    }

    @Test("step 19: BE differs from the credential record")
    func backupEligibilityChanged() throws {
        try expectRejection(.backupEligibilityChanged) { $0.flags = [.userPresent, .userVerified, .backupEligible] }
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent, .userVerified, .backupEligible]
        _ = try verify(fixture, record: try fixture.record(backupEligible: nil))   // unknown: not judged
    }

    @Test("step 22: bad signature (tampered data, tampered signature, other key, other algorithm)")
    func badSignature() throws {
        let fixture = CeremonyFixture()
        let good = fixture.authentication()
        var signature = good.signature
        signature[signature.count - 3] ^= 0x01
        let tampered = AuthenticationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                                authenticatorData: good.authenticatorData, signature: signature, userHandle: good.userHandle)
        try expectRejection(.invalidSignature, credential: tampered)
        var authData = good.authenticatorData
        authData[36] = 9   // counter changed after signing
        let changed = AuthenticationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                               authenticatorData: authData, signature: good.signature, userHandle: good.userHandle)
        try expectRejection(.invalidSignature, credential: changed, record: try fixture.record(signCount: 0))
        let garbage = AuthenticationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                               authenticatorData: good.authenticatorData, signature: [0x30, 0x00], userHandle: good.userHandle)
        try expectRejection(.invalidSignature, credential: garbage)
        let otherKey = CeremonyFixture()
        try expectRejection(.invalidSignature, record: try otherKey.record())
        try expectRejection(.invalidSignature, record: try CeremonyFixture(keyKind: .ed25519).record())
    }

    @Test("step 23: counter that does not increase")
    func counterRegression() throws {
        var fixture = CeremonyFixture()
        fixture.signCount = 5
        for stored: UInt32 in [5, 6] {
            let error = #expect(throws: WebAuthnError.self) { try verify(fixture, record: try fixture.record(signCount: stored)) }
            #expect(error?.code == .signCountRegression)
        }
        fixture.signCount = 0
        let error = #expect(throws: WebAuthnError.self) { try verify(fixture, record: try fixture.record(signCount: 3)) }
        #expect(error?.code == .signCountRegression)
    }

    @Test("response JSON: not JSON, wrong type, id differing from rawId, bad base64url, duplicate or mistyped members")
    func malformedJSON() throws {
        let fixture = CeremonyFixture()
        let json = String(decoding: CeremonyFixture.json(fixture.authentication()), as: UTF8.self)
        let cases: [(String, WebAuthnError.Code)] = [
            ("[]", .malformedResponse),
            (json.replacingOccurrences(of: "\"public-key\"", with: "\"password\""), .invalidCredentialType),
            (json.replacingOccurrences(of: "\"id\":\"", with: "\"id\":\"AA"), .credentialIDMismatch),
            (json.replacingOccurrences(of: "\"signature\":\"", with: "\"signature\":\"*"), .invalidBase64URL),
            // A member given twice could be read two ways: refused.
            (json.replacingOccurrences(of: "{\"", with: "{\"rawId\":\"AA\",\""), .malformedResponse),
            (json.replacingOccurrences(of: "\"signature\":", with: "\"signature\":7,\"x\":"), .malformedResponse),
            (json.replacingOccurrences(of: "\"response\":{", with: "\"response\":[{"), .malformedResponse),
            (json.replacingOccurrences(of: "\"type\":\"public-key\"", with: "\"type\":true"), .malformedResponse),
            (json.replacingOccurrences(of: "\"userHandle\":\"", with: "\"userHandle\":5,\"u\":\""), .malformedResponse),
            (String(json.dropLast()), .malformedResponse),
        ]
        for (text, code) in cases {
            let error = #expect(throws: WebAuthnError.self) { try AuthenticationCredential(json: Array(text.utf8)) }
            #expect(error?.code == code, "\(text)")
        }
    }
}

/// §7.2 step 6 in each ``UserIdentification`` mode: which combinations of expected user, record owner and returned
/// `userHandle` verify, and with which code the others fail.
@Suite struct UserIdentificationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let identification: UserIdentification
        let owner: [UInt8]?
        let returned: [UInt8]?
        /// nil when the assertion verifies.
        let failure: WebAuthnError.Code?

        var testDescription: String { name }
    }

    static let alice = Array("alice".utf8)
    static let bob = Array("bob".utf8)

    static let cases: [Case] = [
        // Identified by the credential record alone: the user is the record's owner.
        Case(name: "record only, owner unknown, no userHandle: verifies", identification: .identified(expectedUserHandle: nil),
             owner: nil, returned: nil, failure: nil),
        Case(name: "record only, owner unknown, any userHandle: verifies (only reported)",
             identification: .identified(expectedUserHandle: nil), owner: nil, returned: bob, failure: nil),
        Case(name: "record only, owner known, no userHandle: verifies", identification: .identified(expectedUserHandle: nil),
             owner: alice, returned: nil, failure: nil),
        Case(name: "record only, owner known, owner's userHandle: verifies", identification: .identified(expectedUserHandle: nil),
             owner: alice, returned: alice, failure: nil),
        Case(name: "record only, owner known, another userHandle: mismatch", identification: .identified(expectedUserHandle: nil),
             owner: alice, returned: bob, failure: .userHandleMismatch),
        // Identified with an expected handle.
        Case(name: "expected, owner unknown, no userHandle: verifies", identification: .identified(expectedUserHandle: alice),
             owner: nil, returned: nil, failure: nil),
        Case(name: "expected, owner unknown, expected userHandle: verifies", identification: .identified(expectedUserHandle: alice),
             owner: nil, returned: alice, failure: nil),
        Case(name: "expected, owner unknown, another userHandle: mismatch", identification: .identified(expectedUserHandle: alice),
             owner: nil, returned: bob, failure: .userHandleMismatch),
        Case(name: "expected, record of another account: mismatch", identification: .identified(expectedUserHandle: alice),
             owner: bob, returned: nil, failure: .userHandleMismatch),
        Case(name: "expected, record of another account, its userHandle: mismatch",
             identification: .identified(expectedUserHandle: alice), owner: bob, returned: bob, failure: .userHandleMismatch),
        // Usernameless.
        Case(name: "usernameless, no userHandle: missing", identification: .usernameless, owner: alice, returned: nil,
             failure: .userHandleMissing),
        Case(name: "usernameless, owner unknown, no userHandle: missing", identification: .usernameless, owner: nil, returned: nil,
             failure: .userHandleMissing),
        Case(name: "usernameless, owner's userHandle: verifies", identification: .usernameless, owner: alice, returned: alice,
             failure: nil),
        Case(name: "usernameless, owner unknown, any userHandle: verifies", identification: .usernameless, owner: nil, returned: bob,
             failure: nil),
        Case(name: "usernameless, another userHandle: mismatch", identification: .usernameless, owner: alice, returned: bob,
             failure: .userHandleMismatch),
    ]

    @Test("step 6 in every identification mode", arguments: cases)
    func modes(_ testCase: Case) throws {
        var fixture = CeremonyFixture()
        fixture.userHandle = testCase.owner
        let record = try fixture.record()
        fixture.userHandle = testCase.returned
        let expectations = AuthenticationExpectations(policy: fixture.policy, challenge: fixture.challenge,
                                                      identification: testCase.identification)
        let verify = { () throws(WebAuthnError) in
            _ = try AuthenticationVerifier.verify(fixture.authentication(), expectations: expectations, record: record)
        }
        if let failure = testCase.failure {
            let error = #expect(throws: WebAuthnError.self) { try verify() }
            #expect(error?.code == failure, "\(error.map(String.init(reflecting:)) ?? "no error")")
            #expect(error?.detail.contains("§7.2 step 6") == true)
        } else {
            try verify()
        }
    }
}
