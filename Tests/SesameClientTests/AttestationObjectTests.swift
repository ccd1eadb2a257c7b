import Testing
import WebAuthn

@testable import SesameClient

/// The attestation object reader behind the platform authenticators' registration responses: AuthenticationServices
/// hands over the attestation object only, and `toJSON()` also carries its authenticator data, public key and
/// algorithm. The software authenticator writes all of them, so its answers are the reference.
@Suite struct AttestationObjectTests {
    let rp = TestRelyingParty()

    @Test(
        "the fields read from the attestation object are those the software authenticator reports beside it",
        arguments: [SoftwareAuthenticator.Attestation.none, .packedSelf])
    func fieldsMatchSoftwareAuthenticator(attestation: SoftwareAuthenticator.Attestation) throws {
        let authenticator = SoftwareAuthenticator(settings: .init(attestation: attestation))
        let registration = try authenticator.create(rp.creationOptions(challenge: TestRelyingParty.challenge()), origin: rp.origin)
        let fields = try #require(AttestationObjectFields(attestationObject: try bytes(registration.response.attestationObject)))
        #expect(fields.authenticatorData == (try bytes(registration.response.authenticatorData)))
        #expect(fields.publicKey == (try bytes(try #require(registration.response.publicKey))))
        #expect(fields.publicKeyAlgorithm == -7)
    }

    @Test("a response rebuilt from the raw credential ID, client data and attestation object passes the verifier")
    func rebuiltResponseVerifies() throws {
        let challenge = TestRelyingParty.challenge()
        let software = try SoftwareAuthenticator().create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        let rebuilt = try #require(
            RegistrationResponseJSON(
                credentialID: try bytes(software.rawID), clientDataJSON: try bytes(software.response.clientDataJSON),
                attestationObject: try bytes(software.response.attestationObject), transports: ["hybrid", "internal"],
                authenticatorAttachment: "platform"))
        var expected = software
        expected.response.transports = ["hybrid", "internal"]
        #expect(rebuilt == expected)
        let verified = try rp.verify(rebuilt, challenge: challenge)
        #expect(verified.credentialID == (try bytes(software.rawID)))
        #expect(verified.transports == ["hybrid", "internal"])
    }

    @Test("a key other than P-256 keeps its algorithm and has no SubjectPublicKeyInfo, as getPublicKey() answers null")
    func otherKeyType() throws {
        // COSE OKP Ed25519 (kty 1, alg -8, crv 6).
        let key = CBORItem.map([
            (.integer(1), .integer(1)), (.integer(3), .integer(-8)), (.integer(-1), .integer(6)),
            (.integer(-2), .bytes(Array(repeating: 7, count: 32))),
        ]).encoded
        let authData = Self.authenticatorData(flags: 0x45, credentialID: [1, 2, 3], key: key)
        let fields = try #require(AttestationObjectFields(attestationObject: Self.attestationObject(authData)))
        #expect(fields.authenticatorData == authData && fields.publicKeyAlgorithm == -8 && fields.publicKey == nil)
    }

    @Test("unreadable attestation objects are refused")
    func refusals() throws {
        let software = try SoftwareAuthenticator().create(rp.creationOptions(challenge: TestRelyingParty.challenge()), origin: rp.origin)
        let object = try bytes(software.response.attestationObject)
        let authData = try bytes(software.response.authenticatorData)
        // Cut short, or followed by more bytes.
        #expect(AttestationObjectFields(attestationObject: Array(object.dropLast())) == nil)
        #expect(AttestationObjectFields(attestationObject: object + [0x00]) == nil)
        // No authData, or authData that is not a byte string.
        #expect(AttestationObjectFields(attestationObject: CBORItem.map([(.text("fmt"), .text("none"))]).encoded) == nil)
        #expect(AttestationObjectFields(attestationObject: CBORItem.map([(.text("authData"), .text("x"))]).encoded) == nil)
        // Not a map at all, or an indefinite-length map.
        #expect(AttestationObjectFields(attestationObject: CBORItem.bytes(authData).encoded) == nil)
        #expect(AttestationObjectFields(attestationObject: [0xBF] + Array(object.dropFirst()) + [0xFF]) == nil)
        // Authenticator data without the AT flag, or with its credential ID running past the end.
        var noAT = authData
        noAT[32] &= ~0x40
        #expect(AttestationObjectFields(attestationObject: Self.attestationObject(noAT)) == nil)
        var longID = authData
        longID[53] = 0xFF
        #expect(AttestationObjectFields(attestationObject: Self.attestationObject(longID)) == nil)
        // A COSE key without alg.
        let noAlg = CBORItem.map([(.integer(1), .integer(2)), (.integer(-1), .integer(1))]).encoded
        #expect(AttestationObjectFields(attestationObject: Self.attestationObject(
            Self.authenticatorData(flags: 0x45, credentialID: [1], key: noAlg))) == nil)
    }

    @Test("the CBOR reader reads what the SDK's encoder writes, and refuses hostile nesting")
    func reader() {
        let item = CBORItem.map([
            (.integer(-3), .bytes([1, 2])), (.integer(1), .integer(2)), (.text("é"), .integer(Int64.min)),
            (.integer(1000), .map([])),
        ])
        var reader = CBORReader(item.encoded)
        let value = reader.value()
        #expect(reader.isAtEnd)
        guard case .map(let entries)? = value else {
            Issue.record("not a map: \(String(describing: value))")
            return
        }
        #expect(entries.count == 4)
        #expect(entries.contains(CBORValue.MapEntry(key: .integer(-3), value: .bytes([1, 2]))))
        #expect(entries.contains(CBORValue.MapEntry(key: .text("é"), value: .integer(Int64.min))))
        #expect(entries.contains(CBORValue.MapEntry(key: .integer(1000), value: .map([]))))
        // Arrays, a tag and simple values.
        var mixed = CBORReader([0x83, 0xF5, 0xC1, 0x01, 0xF6])
        #expect(mixed.value() == .array([.simple(21), .integer(1), .simple(22)]))
        // 15 nested arrays around an integer are read, 16 are refused (the depth limit, 16 levels in all).
        var nested = CBORReader(Array(repeating: 0x81, count: 15) + [0x00])
        #expect(nested.value() != nil && nested.isAtEnd)
        var deep = CBORReader(Array(repeating: 0x81, count: 16) + [0x00])
        #expect(deep.value() == nil)
        // A string claiming more bytes than there are is truncated input.
        var short = CBORReader([0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00])
        #expect(short.value() == nil)
        // Invalid UTF-8 in a text string.
        var text = CBORReader([0x62, 0xC3, 0x28])
        #expect(text.value() == nil)
    }

    /// rpIdHash (zeros) ‖ flags ‖ signCount 0 ‖ zero AAGUID ‖ L ‖ credentialID ‖ key.
    static func authenticatorData(flags: UInt8, credentialID: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(repeating: 0, count: 32) + [flags, 0, 0, 0, 0] + Array(repeating: 0, count: 16)
            + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID + key
    }

    /// `{fmt: "none", attStmt: {}, authData}`.
    static func attestationObject(_ authData: [UInt8]) -> [UInt8] {
        CBORItem.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]).encoded
    }
}
