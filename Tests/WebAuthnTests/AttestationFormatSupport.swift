import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// The test PKI every format's fixtures are issued under: a root and an intermediate, made once per test run.
enum TestPKI {
    static let root = TestCertificateAuthority.root()
    static let intermediate = root.intermediate()
    /// A root that issued none of the fixtures.
    static let otherRoot = TestCertificateAuthority.root(commonName: "Unrelated Root")
}

/// Verifies fixtures of the attestation formats and checks rejections by code and spec step.
struct AttestationCheck {
    var fixture: CeremonyFixture
    var anchors: [String: [Certificate]] = [:]
    var options = AttestationOptions()
    var time = RegistrationTests.now

    func verify() throws(WebAuthnError) -> VerifiedRegistration {
        let expectations = RegistrationExpectations(policy: fixture.policy, challenge: fixture.challenge,
                                                    trustAnchorsByFormat: anchors, attestationOptions: options)
        return try RegistrationVerifier.verify(fixture.registration(), expectations: expectations, at: time)
    }

    /// Expects a rejection with `code` whose detail names `step` (for example "§8.3 step 5").
    func expectRejection(_ code: WebAuthnError.Code, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try verify() }
        let shown = error.map(String.init(reflecting:)) ?? "no error"
        #expect(error?.code == code, "\(shown)", sourceLocation: sourceLocation)
        #expect(error?.detail.contains(step) == true, "\(shown)", sourceLocation: sourceLocation)
    }
}

extension CeremonyFixture {
    /// The credential key's uncompressed P-256 point.
    var credentialPoint: (x: [UInt8], y: [UInt8]) {
        credentialKey.publicKey.ellipticCurvePoint ?? ([], [])
    }
}

extension CBORValue {
    /// A text-keyed map.
    static func textMap(_ entries: [(String, CBORValue)]) -> CBORValue {
        .map(entries.map { CBORMapEntry(.textString($0.0), $0.1) })
    }
}
