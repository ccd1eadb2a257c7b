import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// §7.1: every step, first accepting genuine ceremonies, then breaking one thing at a time.
@Suite struct RegistrationTests {
    static let now = ISO8601DateFormatter().date(from: "2030-01-01T00:00:00Z")!

    func verify(_ fixture: CeremonyFixture, policy: RelyingPartyPolicy? = nil, requiresUserPresence: Bool = true,
                trustAnchors: [Certificate] = [], at time: Date = now) throws(WebAuthnError) -> VerifiedRegistration {
        try verify(fixture.registration(), fixture, policy: policy, requiresUserPresence: requiresUserPresence,
                   trustAnchors: trustAnchors, at: time)
    }

    func verify(_ credential: RegistrationCredential, _ fixture: CeremonyFixture, policy: RelyingPartyPolicy? = nil,
                requiresUserPresence: Bool = true, trustAnchors: [Certificate] = [],
                at time: Date = now) throws(WebAuthnError) -> VerifiedRegistration {
        let expectations = RegistrationExpectations(
            policy: policy ?? fixture.policy, challenge: fixture.challenge, requiresUserPresence: requiresUserPresence,
            trustAnchors: trustAnchors)
        return try RegistrationVerifier.verify(credential, expectations: expectations, at: time)
    }

    /// Re-encodes an attestation object with one top-level member changed.
    func withAttestationMember(_ credential: RegistrationCredential, _ key: String, _ value: CBORValue?) -> RegistrationCredential {
        var entries = try! CBORDecoder().decode(credential.attestationObject).mapEntries!
        entries.removeAll { $0.key == .textString(key) }
        if let value { entries.append(CBORMapEntry(.textString(key), value)) }
        return RegistrationCredential(rawID: credential.rawID, clientDataJSON: credential.clientDataJSON,
                                      attestationObject: CBOREncoder.encode(.map(entries)))
    }

    // MARK: Accepted ceremonies

    @Test("accepts a P-256 credential with none attestation and reports every field")
    func acceptsNone() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
        fixture.signCount = 7
        let result = try verify(fixture)
        #expect(result.credentialID == fixture.credentialID)
        #expect(result.publicKey.cborEncoded == fixture.coseKey)
        #expect(result.publicKey.algorithm == .es256)
        #expect(result.format == "none")
        #expect(result.attestationType == .none)
        #expect(result.aaguid == "00000000-0000-0000-0000-000000000000")
        #expect(result.signCount == 7)
        #expect(result.userVerified && result.backupEligible && result.backedUp)
        #expect(result.transports == ["internal"])
    }

    @Test("accepts an Ed25519 credential with packed self attestation")
    func acceptsEd25519PackedSelf() throws {
        var fixture = CeremonyFixture(keyKind: .ed25519)
        fixture.attestation = .packedSelf
        let result = try verify(fixture)
        #expect(result.publicKey.algorithm == .edDSA)
        #expect(result.format == "packed")
        #expect(result.attestationType == .self)
    }

    @Test("accepts packed full attestation and validates its chain against the trust anchor")
    func acceptsPackedFull() throws {
        var fixture = CeremonyFixture()
        fixture.aaguid = AttestationFixtures.packedAAGUID
        fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                          certificates: [try AttestationFixtures.certificate("attestation-packed")])
        let result = try verify(fixture, trustAnchors: [try AttestationFixtures.certificate("attestation-root")])
        #expect(result.attestationType == .basic)
        #expect(result.attestationTrustPath.count == 1)
        #expect(result.aaguid == "5e5a4e30-0000-4000-8000-000000000001")
    }

    @Test("accepts fido-u2f attestation and validates its chain against the trust anchor")
    func acceptsFIDOU2F() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent]
        fixture.attestation = .fidoU2F(key: try AttestationFixtures.key("attestation-u2f"),
                                       certificate: try AttestationFixtures.certificate("attestation-u2f"))
        let result = try verify(fixture, policy: RelyingPartyPolicy(id: fixture.rpID, origins: [fixture.origin],
                                                                    requiresUserVerification: false),
                                trustAnchors: [try AttestationFixtures.certificate("attestation-root")])
        #expect(result.format == "fido-u2f")
        #expect(result.attestationType == .basic)
        #expect(!result.userVerified)
    }

    @Test("accepts an origin matched by a wildcard and an android:apk-key-hash origin")
    func acceptsOriginPatterns() throws {
        var fixture = CeremonyFixture()
        let policy = RelyingPartyPolicy(id: "example.org",
                                        origins: ["https://*.example.org", "android:apk-key-hash:abc123"])
        fixture.origin = "https://login.example.org"
        _ = try verify(fixture, policy: policy)
        fixture.origin = "android:apk-key-hash:abc123"
        _ = try verify(fixture, policy: policy)
    }

    @Test("accepts a cross-origin ceremony from an allowed top origin")
    func acceptsAllowedTopOrigin() throws {
        var fixture = CeremonyFixture()
        fixture.clientData = ["crossOrigin": .bool(true), "topOrigin": .string("https://shop.example")]
        var policy = fixture.policy
        policy.crossOrigin = .allowed(topOrigins: ["https://shop.example"])
        _ = try verify(fixture, policy: policy)
    }

    @Test("accepts a missing UP flag only when user presence is not required (conditional create)")
    func conditionalCreate() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userVerified]
        #expect(throws: WebAuthnError.code(.userPresenceRequired)) { try verify(fixture) }
        _ = try verify(fixture, requiresUserPresence: false)
    }

    @Test("accepts a missing UV flag when user verification is only preferred")
    func uvPreferred() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent]
        var policy = fixture.policy
        policy.requiresUserVerification = false
        #expect(try verify(fixture, policy: policy).userVerified == false)
    }
}
