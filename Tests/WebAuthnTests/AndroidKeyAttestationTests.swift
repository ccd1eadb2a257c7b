import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// Builds an `android-key` attestation: a credential certificate with the key description extension.
struct AndroidKeyBuilder: Sendable {
    /// An AuthorizationList's checked fields.
    struct List: Sendable {
        var purposes: [Int64]? = nil
        var allApplications = false
        var origin: Int64? = nil

        /// The DER AuthorizationList, fields in tag order, with an unrelated field ([2] algorithm EC) among them.
        var der: [UInt8] {
            var fields: [[UInt8]] = []
            if let purposes { fields.append(DER.context(1, DER.set(purposes.map { DER.integer($0) }))) }
            fields.append(DER.context(2, DER.integer(3)))
            if allApplications { fields.append(DER.context(600, DER.null)) }
            if let origin { fields.append(DER.context(702, DER.integer(origin))) }
            return DER.sequence(fields)
        }
    }

    var software = List()
    var tee = List(purposes: [2], origin: 0)
    /// nil: attestationChallenge is the client data hash.
    var challenge: [UInt8]? = nil
    /// Replaces the whole extension value; `.some(nil)` leaves the extension out.
    var extensionValue: [UInt8]?? = nil
    /// The key of the credential certificate, which signs; nil: the credential key.
    var certificateKey: PrivateKey? = nil
    var alg: Int64 = -7
    /// Signs this instead of authenticatorData ‖ clientDataHash.
    var signsOtherData = false

    func keyDescription(challenge: [UInt8]) -> [UInt8] {
        DER.sequence(DER.integer(300), DER.integer(1, tag: 0x0A), DER.integer(300), DER.integer(1, tag: 0x0A),
                     DER.octetString(challenge), DER.octetString([]), software.der, tee.der)
    }

    func attestation(_ fixture: CeremonyFixture) -> CeremonyFixture.Attestation {
        let key = certificateKey ?? fixture.credentialKey
        let build = self
        return .built(format: "android-key") { authData, clientDataHash in
            var extensions: [TestCertificateExtension] = [.basicConstraints(ca: false)]
            let value = build.extensionValue ?? build.keyDescription(challenge: build.challenge ?? clientDataHash)
            if let value { extensions.append(TestCertificateExtension(oid: "1.3.6.1.4.1.11129.2.1.17", value: value)) }
            let credCert = TestPKI.intermediate.issue(subject: DER.name([("2.5.4.3", "Android Keystore Key")]),
                                                      key: key.publicKey, extensions: extensions)
            let signed = build.signsOtherData ? authData : authData + clientDataHash
            return .textMap([
                ("alg", .integer(build.alg)), ("sig", .byteString(key.signature(for: signed))),
                ("x5c", .array([.byteString(credCert.derRepresentation), .byteString(TestPKI.intermediate.certificate.derRepresentation)])),
            ])
        }
    }

    func check(_ change: (inout AttestationCheck) -> Void = { _ in }) -> AttestationCheck {
        var fixture = CeremonyFixture()
        fixture.attestation = attestation(fixture)
        var check = AttestationCheck(fixture: fixture)
        change(&check)
        return check
    }
}

/// §8.4: the android-key format, accepted, then broken one step at a time.
@Suite struct AndroidKeyAttestationTests {
    let softwareOnly: (inout AttestationCheck) -> Void = { $0.options.androidKeyAcceptsSoftwareEnforced = true }

    @Test("accepts a TEE-enforced generated signing key as basic attestation, chain judged at ceremony time")
    func accepts() throws {
        let result = try AndroidKeyBuilder().check { $0.anchors = ["android-key": [TestPKI.root.certificate]] }.verify()
        #expect(result.format == "android-key")
        #expect(result.attestationType == .basic)
        #expect(result.attestationTrustPath.count == 2)
        AndroidKeyBuilder().check { $0.anchors = ["android-key": [TestPKI.otherRoot.certificate]] }
            .expectRejection(.untrustedAttestation, "§7.1 step 23")
    }

    @Test("step 1: alg or sig missing")
    func syntax() {
        var fixture = CeremonyFixture()
        for missing in ["alg", "sig"] {
            let base = AndroidKeyBuilder().attestation(fixture)
            guard case .built(_, let build) = base else { return }
            fixture.attestation = .built(format: "android-key") { authData, hash in
                .map((build(authData, hash).mapEntries ?? []).filter { $0.key != .textString(missing) })
            }
            AttestationCheck(fixture: fixture).expectRejection(.malformedAttestationStatement, "§8.4 step 1")
        }
    }

    @Test("step 2: sig over other data, or an alg Sesame does not verify")
    func signature() {
        AndroidKeyBuilder(signsOtherData: true).check().expectRejection(.invalidAttestationSignature, "§8.4 step 2")
        AndroidKeyBuilder(alg: -8).check().expectRejection(.invalidAttestationSignature, "§8.4 step 2")
        AndroidKeyBuilder(alg: -53).check().expectRejection(.unsupportedAlgorithm, "§8.4 step 2")
    }

    @Test("step 3: the certificate (which signed) holds another key than the credential's")
    func otherKey() {
        AndroidKeyBuilder(certificateKey: PrivateKey.generate(.p256)).check().expectRejection(.attestationKeyMismatch, "§8.4 step 3")
    }

    @Test("step 4: attestationChallenge is not the client data hash; the extension missing or malformed")
    func challenge() {
        AndroidKeyBuilder(challenge: Array(repeating: 7, count: 32)).check().expectRejection(.attestationNonceMismatch, "§8.4 step 4")
        AndroidKeyBuilder(challenge: []).check().expectRejection(.attestationNonceMismatch, "§8.4 step 4")
        AndroidKeyBuilder(extensionValue: .some(nil)).check().expectRejection(.invalidAttestationCertificate, "§8.4 step 4")
        let truncated = DER.sequence(DER.integer(300), DER.integer(1), DER.integer(300), DER.integer(1), DER.octetString([1]))
        AndroidKeyBuilder(extensionValue: truncated).check().expectRejection(.invalidAttestationCertificate, "§8.4 step 4")
        // The same tag twice in an authorization list.
        var builder = AndroidKeyBuilder()
        let duplicated = DER.sequence(DER.context(702, DER.integer(0)), DER.context(702, DER.integer(0)))
        builder.extensionValue = DER.sequence(DER.integer(300), DER.integer(1, tag: 0x0A), DER.integer(300), DER.integer(1, tag: 0x0A),
                                              DER.octetString([]), DER.octetString([]), DER.sequence(), duplicated)
        builder.check().expectRejection(.invalidAttestationCertificate, "§8.4 step 4")
    }

    @Test("step 5: allApplications on either list")
    func allApplications() {
        AndroidKeyBuilder(software: .init(allApplications: true)).check().expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(tee: .init(purposes: [2], allApplications: true, origin: 0)).check()
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(software: .init(allApplications: true)).check(softwareOnly)
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
    }

    @Test("step 5: origin not KM_ORIGIN_GENERATED, or missing from teeEnforced")
    func origin() {
        AndroidKeyBuilder(tee: .init(purposes: [2], origin: 2)).check().expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(tee: .init(purposes: [2])).check().expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(software: .init(origin: 0), tee: .init(purposes: [2])).check()
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(software: .init(origin: 3), tee: .init(purposes: [2], origin: 0)).check(softwareOnly)
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
    }

    @Test("step 5: purpose not exactly KM_PURPOSE_SIGN, or missing from teeEnforced")
    func purpose() {
        for purposes: [Int64]? in [nil, [], [3], [2, 3], [0, 2]] {
            AndroidKeyBuilder(tee: .init(purposes: purposes, origin: 0)).check()
                .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        }
        AndroidKeyBuilder(software: .init(purposes: [2]), tee: .init(origin: 0)).check()
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        AndroidKeyBuilder(software: .init(purposes: [1]), tee: .init(purposes: [2], origin: 0)).check(softwareOnly)
            .expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
    }

    @Test("step 5: a relying party that accepts software-enforced lists takes origin and purpose from either")
    func softwareEnforced() throws {
        let software = AndroidKeyBuilder(software: .init(purposes: [2], origin: 0), tee: .init())
        software.check().expectRejection(.invalidAndroidKeyAuthorization, "§8.4 step 5")
        #expect(try software.check(softwareOnly).verify().attestationType == .basic)
        let split = AndroidKeyBuilder(software: .init(origin: 0), tee: .init(purposes: [2]))
        #expect(try split.check(softwareOnly).verify().attestationType == .basic)
    }
}
