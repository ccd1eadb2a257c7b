import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// §7.1: one negative case per verification step, each built by mutating a valid ceremony.
@Suite struct RegistrationRejectionTests {
    let base = RegistrationTests()

    func expectRejection(_ code: WebAuthnError.Code, policy: RelyingPartyPolicy? = nil, trustAnchors: [Certificate] = [],
                         at time: Date = RegistrationTests.now, _ mutate: (inout CeremonyFixture) throws -> Void) throws {
        let original = CeremonyFixture()
        var fixture = original
        try mutate(&fixture)
        let error = #expect(throws: WebAuthnError.self) {
            try base.verify(fixture, policy: policy ?? original.policy, trustAnchors: trustAnchors, at: time)
        }
        #expect(error?.code == code, "\(error.map(String.init(reflecting:)) ?? "no error")")
    }

    func expectRejection(_ code: WebAuthnError.Code, _ credential: RegistrationCredential, _ fixture: CeremonyFixture) {
        let error = #expect(throws: WebAuthnError.self) { try base.verify(credential, fixture) }
        #expect(error?.code == code, "\(error.map(String.init(reflecting:)) ?? "no error")")
    }

    @Test("step 5-6: clientDataJSON that is not JSON, not UTF-8 or lacks members")
    func malformedClientData() throws {
        let fixture = CeremonyFixture()
        let good = fixture.registration()
        for bad in [Array("not json".utf8), [0xFF, 0xFE], Array(#"{"type":"webauthn.create"}"#.utf8)] {
            let credential = RegistrationCredential(rawID: good.rawID, clientDataJSON: bad, attestationObject: good.attestationObject)
            expectRejection(.malformedClientData, credential, fixture)
        }
    }

    @Test("step 7: wrong type")
    func wrongType() throws {
        try expectRejection(.clientDataTypeMismatch) { $0.clientData["type"] = .string("webauthn.get") }
    }

    @Test("step 8: wrong challenge, and a challenge that is not base64url")
    func wrongChallenge() throws {
        try expectRejection(.challengeMismatch) { $0.clientData["challenge"] = .string(Base64URL.encode([1, 2, 3])) }
        try expectRejection(.challengeMismatch) { $0.clientData["challenge"] = .string("!!") }
    }

    @Test("step 9: wrong origin, including wildcard look-alikes")
    func wrongOrigin() throws {
        try expectRejection(.originMismatch) { $0.origin = "https://evil.example" }
        try expectRejection(.originMismatch) { $0.origin = "http://example.org" }
        let wildcard = RelyingPartyPolicy(id: "example.org", origins: ["https://*.example.org"])
        for origin in ["https://example.org", "https://a.example.org:444", "https://evil.com/.example.org",
                       "https://a.b@c.example.org", "https://.example.org", "https://xexample.org"] {
            try expectRejection(.originMismatch, policy: wildcard) { $0.origin = origin }
        }
    }

    @Test("step 10: cross-origin without policy, and a top origin not allowed")
    func crossOrigin() throws {
        try expectRejection(.crossOriginNotAllowed) { $0.clientData["crossOrigin"] = .bool(true) }
        try expectRejection(.crossOriginNotAllowed) { $0.clientData["topOrigin"] = .string("https://shop.example") }
        var policy = CeremonyFixture().policy
        policy.crossOrigin = .allowed(topOrigins: ["https://shop.example"])
        try expectRejection(.topOriginMismatch, policy: policy) {
            $0.clientData = ["crossOrigin": .bool(true), "topOrigin": .string("https://evil.example")]
        }
    }

    @Test("step 12: attestation object that is truncated, has trailing bytes or lacks members")
    func malformedAttestationObject() throws {
        let fixture = CeremonyFixture()
        let good = fixture.registration()
        let truncated = RegistrationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                               attestationObject: Array(good.attestationObject.dropLast(5)))
        expectRejection(.cborTruncated, truncated, fixture)
        let trailing = RegistrationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                              attestationObject: good.attestationObject + [0x00])
        expectRejection(.cborTrailingBytes, trailing, fixture)
        for member in ["fmt", "attStmt", "authData"] {
            expectRejection(.malformedAttestationObject, base.withAttestationMember(good, member, nil), fixture)
        }
        expectRejection(.malformedAttestationObject, base.withAttestationMember(good, "authData", .textString("x")), fixture)
    }

    @Test("step 12: authenticator data too short, with trailing bytes, or AT without credential data")
    func malformedAuthenticatorData() throws {
        let fixture = CeremonyFixture()
        let good = fixture.registration()
        expectRejection(.malformedAuthenticatorData, base.withAttestationMember(good, "authData", .byteString(Array(repeating: 0, count: 36))), fixture)
        try expectRejection(.malformedAuthenticatorData) { $0.authenticatorDataSuffix = [0x01] }
        var noAT = fixture.authenticatorData(attested: false)
        noAT[32] |= AuthenticatorData.Flags.attestedCredentialData.rawValue
        expectRejection(.malformedAuthenticatorData, base.withAttestationMember(good, "authData", .byteString(noAT)), fixture)
        var atMissing = fixture.authenticatorData(attested: false)
        atMissing[32] &= ~AuthenticatorData.Flags.attestedCredentialData.rawValue
        expectRejection(.malformedAuthenticatorData, base.withAttestationMember(good, "authData", .byteString(atMissing)), fixture)
    }

    @Test("step 13: rpIdHash of another relying party")
    func wrongRPIDHash() throws {
        let other = RelyingPartyPolicy(id: "other.example", origins: ["https://example.org"])
        try expectRejection(.rpIDHashMismatch, policy: other) { _ in }
    }

    @Test("step 14: UP missing")
    func upMissing() throws {
        try expectRejection(.userPresenceRequired) { $0.flags = [.userVerified] }
    }

    @Test("step 15: UV required but missing")
    func uvMissing() throws {
        try expectRejection(.userVerificationRequired) { $0.flags = [.userPresent] }
    }

    @Test("step 16: BS without BE")
    func backupStateWithoutEligibility() throws {
        try expectRejection(.backupStateWithoutEligibility) { $0.flags = [.userPresent, .userVerified, .backedUp] }
    }

    @Test("step 18: algorithm the relying party did not offer")
    func algorithmNotAllowed() throws {
        var policy = CeremonyFixture().policy
        policy.allowedAlgorithms = [.edDSA]
        try expectRejection(.algorithmNotAllowed, policy: policy) { _ in }
    }

    @Test("step 18: credential key with an unsupported algorithm or inconsistent with its alg")
    func badCredentialKey() throws {
        let fixture = CeremonyFixture()
        func withKey(_ key: CBORValue) -> RegistrationCredential {
            var authData = Digest.sha256(Array(fixture.rpID.utf8)) + [0x45, 0, 0, 0, 0] + fixture.aaguid
            authData += [0, UInt8(fixture.credentialID.count)] + fixture.credentialID + CBOREncoder.encode(key)
            let clientDataJSON = fixture.clientDataJSON(type: "webauthn.create")
            let object = CBOREncoder.encode(.map([
                CBORMapEntry(.textString("fmt"), .textString("none")), CBORMapEntry(.textString("attStmt"), .map([])),
                CBORMapEntry(.textString("authData"), .byteString(authData)),
            ]))
            return RegistrationCredential(rawID: fixture.credentialID, clientDataJSON: clientDataJSON, attestationObject: object)
        }
        let good = try CBORDecoder().decode(fixture.coseKey).mapEntries!
        func replacing(_ label: Int64, _ value: CBORValue) -> CBORValue {
            .map(good.map { $0.key == .integer(label) ? CBORMapEntry($0.key, value) : $0 })
        }
        expectRejection(.unsupportedAlgorithm, withKey(replacing(3, .integer(-260))), fixture)
        expectRejection(.invalidCOSEKey, withKey(replacing(3, .integer(-35))), fixture)        // ES384 on P-256
        expectRejection(.invalidCOSEKey, withKey(replacing(-2, .byteString(Array(repeating: 1, count: 32)))), fixture)  // off curve
        expectRejection(.invalidCOSEKey, withKey(replacing(-1, .integer(9))), fixture)         // unknown curve
    }

    @Test("step 20: unsupported and unknown attestation formats")
    func unsupportedFormats() throws {
        for format in ["compound", "made-up", "TPM"] {
            try expectRejection(.unsupportedAttestationFormat) { $0.attestation = .custom(format: format, statement: .map([])) }
        }
    }

    @Test("step 21: every verified format refuses an empty statement")
    func emptyStatements() throws {
        for format in ["packed", "fido-u2f", "tpm", "android-key", "android-safetynet", "apple"] {
            try expectRejection(.malformedAttestationStatement) { $0.attestation = .custom(format: format, statement: .map([])) }
        }
    }

    @Test("step 21: none with a non-empty statement")
    func noneNotEmpty() throws {
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "none", statement: .map([CBORMapEntry(.textString("x"), .null)]))
        }
    }

    @Test("step 21: packed statement missing alg or sig, or alg differing from the credential's")
    func packedMalformed() throws {
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "packed", statement: .map([CBORMapEntry(.textString("sig"), .byteString([1]))]))
        }
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "packed", statement: .map([CBORMapEntry(.textString("alg"), .integer(-7))]))
        }
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "packed", statement: .map([
                CBORMapEntry(.textString("alg"), .integer(-8)), CBORMapEntry(.textString("sig"), .byteString([1])),
            ]))
        }
    }

    @Test("step 21: tampered packed self attestation signature")
    func packedSelfTampered() throws {
        var fixture = CeremonyFixture()
        fixture.attestation = .packedSelf
        let good = fixture.registration()
        // Change the client data after signing: the hash no longer matches what was signed.
        var clientData = good.clientDataJSON
        clientData.insert(UInt8(ascii: " "), at: clientData.count - 1)
        let tampered = RegistrationCredential(rawID: good.rawID, clientDataJSON: clientData, attestationObject: good.attestationObject)
        expectRejection(.invalidAttestationSignature, tampered, fixture)
    }

    @Test("step 21: packed full attestation signed by a key other than the certificate's")
    func packedFullWrongKey() throws {
        try expectRejection(.invalidAttestationSignature) {
            $0.aaguid = AttestationFixtures.packedAAGUID
            $0.attestation = .packedFull(key: PrivateKey.generate(.p256),
                                         certificates: [try AttestationFixtures.certificate("attestation-packed")])
        }
    }

    @Test("step 21: packed certificate violating §8.2.1 (OU, AAGUID extension, CA, x5c shape)")
    func packedCertificateRequirements() throws {
        let key = try AttestationFixtures.key("attestation-packed")
        try expectRejection(.invalidAttestationCertificate) {
            $0.aaguid = AttestationFixtures.packedAAGUID
            $0.attestation = .packedFull(key: key, certificates: [try AttestationFixtures.certificate("attestation-packed-bad-ou")])
        }
        try expectRejection(.invalidAttestationCertificate) {   // AAGUID differs from the certificate's extension
            $0.attestation = .packedFull(key: key, certificates: [try AttestationFixtures.certificate("attestation-packed")])
        }
        try expectRejection(.invalidAttestationCertificate) {   // a CA certificate as attestation certificate
            $0.attestation = .packedFull(key: try AttestationFixtures.key("attestation-root"),
                                         certificates: [try AttestationFixtures.certificate("attestation-root")])
        }
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "packed", statement: .map([
                CBORMapEntry(.textString("alg"), .integer(-7)), CBORMapEntry(.textString("sig"), .byteString([1])),
                CBORMapEntry(.textString("x5c"), .array([])),
            ]))
        }
        try expectRejection(.invalidAttestationCertificate) {
            $0.attestation = .custom(format: "packed", statement: .map([
                CBORMapEntry(.textString("alg"), .integer(-7)), CBORMapEntry(.textString("sig"), .byteString([1])),
                CBORMapEntry(.textString("x5c"), .array([.byteString([0x30, 0x03, 0x02, 0x01, 0x01])])),
            ]))
        }
    }

    @Test("step 21: tampered fido-u2f signature, several certificates, non-P-256 credential")
    func fidoU2FRejections() throws {
        let key = try AttestationFixtures.key("attestation-u2f")
        let certificate = try AttestationFixtures.certificate("attestation-u2f")
        var fixture = CeremonyFixture()
        fixture.attestation = .fidoU2F(key: PrivateKey.generate(.p256), certificate: certificate)
        expectRejection(.invalidAttestationSignature, fixture.registration(), fixture)
        try expectRejection(.malformedAttestationStatement) {
            $0.attestation = .custom(format: "fido-u2f", statement: .map([
                CBORMapEntry(.textString("sig"), .byteString([1])),
                CBORMapEntry(.textString("x5c"), .array([.byteString(certificate.derRepresentation), .byteString(certificate.derRepresentation)])),
            ]))
        }
        var ed = CeremonyFixture(keyKind: .ed25519)
        ed.attestation = .custom(format: "fido-u2f", statement: .map([
            CBORMapEntry(.textString("sig"), .byteString([1])),
            CBORMapEntry(.textString("x5c"), .array([.byteString(certificate.derRepresentation)])),
        ]))
        expectRejection(.malformedAttestationStatement, ed.registration(), ed)
        _ = key
    }

    @Test("step 23: attestation chain to an untrusted root, or judged outside its validity")
    func untrustedAttestation() throws {
        let key = try AttestationFixtures.key("attestation-packed")
        let leaf = try AttestationFixtures.certificate("attestation-packed")
        func packed(_ f: inout CeremonyFixture) {
            f.aaguid = AttestationFixtures.packedAAGUID
            f.attestation = .packedFull(key: key, certificates: [leaf])
        }
        try expectRejection(.untrustedAttestation, trustAnchors: [try AttestationFixtures.certificate("other-root")], packed)
        let before = ISO8601DateFormatter().date(from: "2020-01-01T00:00:00Z")!
        try expectRejection(.untrustedAttestation, trustAnchors: [try AttestationFixtures.certificate("attestation-root")],
                            at: before, packed)
    }

    @Test("step 24: credential ID longer than 1023 bytes, or rawId differing from it")
    func credentialID() throws {
        try expectRejection(.credentialIDTooLong) { $0.credentialID = Array(repeating: 7, count: 1024) }
        let fixture = CeremonyFixture()
        let good = fixture.registration()
        let other = RegistrationCredential(rawID: [9, 9], clientDataJSON: good.clientDataJSON, attestationObject: good.attestationObject)
        expectRejection(.credentialIDMismatch, other, fixture)
    }
}
