import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// Builds an `apple` attestation: credCert for the credential key with the nonce extension, under the test PKI.
struct AppleBuilder: Sendable {
    /// The key credCert certifies; nil: the credential key.
    var certifiedKey: PublicKey? = nil
    /// The extension value; nil: the correct `SEQUENCE { [1] { OCTET STRING nonce } }`.
    var nonceExtension: (@Sendable (_ nonce: [UInt8]) -> [UInt8]?)? = nil
    var includeIntermediate = true

    static func extensionValue(_ nonce: [UInt8]) -> [UInt8] { DER.sequence(DER.context(1, DER.octetString(nonce))) }

    func attestation(_ fixture: CeremonyFixture) -> CeremonyFixture.Attestation {
        let key = certifiedKey ?? fixture.credentialKey.publicKey
        let build = self
        return .built(format: "apple") { authData, clientDataHash in
            let nonce = Digest.sha256(authData + clientDataHash)
            let value = build.nonceExtension.map { $0(nonce) } ?? Self.extensionValue(nonce)
            var extensions: [TestCertificateExtension] = [.basicConstraints(ca: false)]
            if let value { extensions.append(TestCertificateExtension(oid: "1.2.840.113635.100.8.2", value: value)) }
            let credCert = TestPKI.intermediate.issue(subject: DER.name([("2.5.4.3", "credCert")]), key: key, extensions: extensions)
            let chain = build.includeIntermediate ? [credCert, TestPKI.intermediate.certificate] : [credCert]
            return .textMap([("x5c", .array(chain.map { .byteString($0.derRepresentation) }))])
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

/// §8.8: the apple format, accepted, then broken one step at a time.
@Suite struct AppleAttestationTests {
    @Test("accepts credCert with the nonce and the credential key as anonymization CA, chain judged at ceremony time")
    func accepts() throws {
        let check = AppleBuilder().check { $0.anchors = ["apple": [TestPKI.root.certificate]] }
        let result = try check.verify()
        #expect(result.format == "apple")
        #expect(result.attestationType == .anonCA)
        #expect(result.attestationTrustPath.count == 2)
        #expect(result.attestationTrustPath.last == TestPKI.intermediate.certificate)
    }

    @Test("trust: another format's anchors do not judge apple, an unrelated root or an expired chain fail")
    func trust() throws {
        _ = try AppleBuilder().check { $0.anchors = ["tpm": [TestPKI.otherRoot.certificate]] }.verify()
        AppleBuilder().check { $0.anchors = ["apple": [TestPKI.otherRoot.certificate]] }
            .expectRejection(.untrustedAttestation, "§7.1 step 23")
        AppleBuilder().check {
            $0.anchors = ["apple": [TestPKI.root.certificate]]
            $0.time = TestCertificateAuthority.defaultNotAfter.addingTimeInterval(86_400)
        }.expectRejection(.untrustedAttestation, "§7.1 step 23")
        AppleBuilder(includeIntermediate: false).check { $0.anchors = ["apple": [TestPKI.root.certificate]] }
            .expectRejection(.untrustedAttestation, "§7.1 step 23")
    }

    @Test("step 1: x5c missing, empty or not certificates")
    func syntax() {
        for x5c: CBORValue? in [nil, .array([]), .array([.byteString([0x30, 0x00])]), .textString("x")] {
            var fixture = CeremonyFixture()
            fixture.attestation = .custom(format: "apple", statement: .textMap(x5c.map { [("x5c", $0)] } ?? []))
            let error = #expect(throws: WebAuthnError.self) { try AttestationCheck(fixture: fixture).verify() }
            #expect([.malformedAttestationStatement, .invalidAttestationCertificate].contains(error?.code))
        }
    }

    @Test("step 4: the nonce extension missing, malformed, or holding another nonce")
    func nonce() {
        AppleBuilder(nonceExtension: { _ in nil }).check().expectRejection(.invalidAttestationCertificate, "§8.8 step 4")
        AppleBuilder(nonceExtension: { DER.octetString($0) }).check().expectRejection(.invalidAttestationCertificate, "§8.8 step 4")
        AppleBuilder(nonceExtension: { DER.sequence(DER.context(2, DER.octetString($0))) }).check()
            .expectRejection(.invalidAttestationCertificate, "§8.8 step 4")
        AppleBuilder(nonceExtension: { AppleBuilder.extensionValue(Digest.sha256($0)) }).check()
            .expectRejection(.attestationNonceMismatch, "§8.8 step 4")
        AppleBuilder(nonceExtension: { AppleBuilder.extensionValue(Array($0.dropLast())) }).check()
            .expectRejection(.attestationNonceMismatch, "§8.8 step 4")
    }

    @Test("steps 2-3: the nonce covers authenticator data and client data (a changed challenge is caught)")
    func nonceCoversTheCeremony() throws {
        var fixture = CeremonyFixture()
        fixture.attestation = AppleBuilder().attestation(fixture)
        let good = fixture.registration()
        // Swap in the attestation object of a ceremony with other client data: the nonce no longer matches.
        var other = fixture
        other.clientData["extra"] = .string("x")
        let mixed = RegistrationCredential(rawID: good.rawID, clientDataJSON: good.clientDataJSON,
                                           attestationObject: other.registration().attestationObject)
        let error = #expect(throws: WebAuthnError.self) {
            try RegistrationVerifier.verify(mixed, expectations: RegistrationExpectations(policy: fixture.policy, challenge: fixture.challenge),
                                            at: RegistrationTests.now)
        }
        #expect(error?.code == .attestationNonceMismatch)
    }

    @Test("step 5: credCert certifies another key")
    func otherKey() {
        AppleBuilder(certifiedKey: PrivateKey.generate(.p256).publicKey).check()
            .expectRejection(.attestationKeyMismatch, "§8.8 step 5")
    }
}
