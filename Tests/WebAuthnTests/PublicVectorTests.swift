import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// A registration captured from a real authenticator, taken from another relying-party library's tests
/// (see Vectors/py_webauthn/SOURCE.md).
struct CapturedRegistration: Decodable, CustomTestStringConvertible, Sendable {
    struct Expected: Decodable, Sendable {
        let fmt: String
        let attestationType: String
        let alg: Int
    }

    let file: String?
    let name: String
    let origin: String
    let rpId: String
    let challenge: String
    let credentialId: String
    let clientDataJSON: String
    let attestationObject: String
    let ceremonyTime: String
    let expected: Expected

    var testDescription: String { file ?? name }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/py_webauthn")

    static func load() -> [CapturedRegistration] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { name in
            var object = try! JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(name))) as! [String: Any]
            object["file"] = name
            return try! JSONDecoder().decode(CapturedRegistration.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }

    static func named(_ prefix: String) -> CapturedRegistration? { load().first { $0.file?.hasPrefix(prefix) == true } }

    func bytes(_ value: String) -> [UInt8] { try! Base64URL.decode(value) }

    var time: Date { ISO8601DateFormatter().date(from: ceremonyTime)! }

    var credential: RegistrationCredential {
        RegistrationCredential(rawID: bytes(credentialId), clientDataJSON: bytes(clientDataJSON), attestationObject: bytes(attestationObject))
    }

    /// The x5c of the attestation statement (for SafetyNet, of its JWS header), leaf first.
    func trustPath() throws -> [Certificate] {
        try RegistrationVerifier.verify(credential, expectations: expectations(), at: time).attestationTrustPath
    }

    func expectations(anchors: [Certificate] = [], options: AttestationOptions = AttestationOptions(),
                      challenge: [UInt8]? = nil) -> RegistrationExpectations {
        RegistrationExpectations(policy: RelyingPartyPolicy(id: rpId, origins: [origin], requiresUserVerification: false),
                                 challenge: challenge ?? bytes(self.challenge), trustAnchorsByFormat: [expected.fmt: anchors],
                                 attestationOptions: options)
    }

    func verify(anchors: [Certificate] = [], at time: Date? = nil, options: AttestationOptions = AttestationOptions(),
                challenge: [UInt8]? = nil) throws(WebAuthnError) -> VerifiedRegistration {
        try RegistrationVerifier.verify(credential, expectations: expectations(anchors: anchors, options: options, challenge: challenge),
                                        at: time ?? self.time)
    }
}

@Suite struct PublicVectorTests {
    static let vectors = CapturedRegistration.load()

    @Test("the captured vectors are all there")
    func present() { #expect(Self.vectors.count == 3) }

    @Test("captured registrations verify with their format, attestation type and algorithm", arguments: vectors)
    func verifies(_ vector: CapturedRegistration) throws {
        let result = try vector.verify()
        #expect(result.format == vector.expected.fmt)
        #expect(result.attestationType.rawValue == vector.expected.attestationType)
        #expect(result.publicKey.algorithm.rawValue == vector.expected.alg)
        #expect(result.credentialID == vector.bytes(vector.credentialId))
        #expect(!result.attestationTrustPath.isEmpty)
        #expect(throws: WebAuthnError.code(.challengeMismatch)) { try vector.verify(challenge: [1, 2, 3]) }
    }

    @Test("captured chains validate at the ceremony time up to their last certificate, and not after the leaf expired",
          arguments: vectors)
    func chains(_ vector: CapturedRegistration) throws {
        let path = try vector.trustPath()
        let anchor = try #require(path.last)
        #expect(throws: Never.self) { try vector.verify(anchors: [anchor]) }
        #expect(throws: WebAuthnError.code(.untrustedAttestation)) {
            try vector.verify(anchors: [anchor], at: path[0].notAfter.addingTimeInterval(86_400), options: AttestationOptions(
                safetyNetTimestampTolerance: .greatestFiniteMagnitude))
        }
        #expect(throws: WebAuthnError.code(.untrustedAttestation)) { try vector.verify(anchors: [TestPKI.otherRoot.certificate]) }
    }

    @Test("the real SafetyNet response is refused a minute after its timestamp unless the tolerance allows it")
    func safetyNetTimestamp() throws {
        let vector = try #require(CapturedRegistration.named("registration-android-safetynet"))
        let late = vector.time.addingTimeInterval(61)
        #expect(throws: WebAuthnError.code(.safetyNetTimestampOutOfRange)) { try vector.verify(at: late) }
        #expect(throws: Never.self) { try vector.verify(at: late, options: AttestationOptions(safetyNetTimestampTolerance: 120)) }
    }

    @Test("the conformance android-key vector is TEE-enforced, so both policies accept it")
    func androidKeyPolicies() throws {
        let vector = try #require(CapturedRegistration.named("registration-android-key"))
        #expect(try vector.verify(options: AttestationOptions(androidKeyAcceptsSoftwareEnforced: true)).attestationType == .basic)
    }
}
