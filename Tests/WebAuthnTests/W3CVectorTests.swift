import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// One vector of the WebAuthn Level 3 "Test Vectors" section (see Vectors/w3c-webauthn-l3/SOURCE.md).
struct W3CVector: Decodable, CustomTestStringConvertible, Sendable {
    struct Expected: Decodable, Sendable {
        let fmt: String?
        let alg: Int
        let attestationType: String?
        let aaguid: String?
        let signCount: UInt32
        let userVerified: Bool
        let backupEligible: Bool
        let backedUp: Bool
        let crossOrigin: Bool?
    }

    let file: String?
    let name: String
    let ceremony: String
    let rpId: String
    let origin: String
    let topOrigin: String?
    let challenge: String
    let credentialId: String
    let clientDataJSON: String
    let attestationObject: String?
    let authenticatorData: String?
    let signature: String?
    let credentialPublicKey: String
    let userHandle: String?
    let attestationRootCertificate: String?
    let expected: Expected

    var testDescription: String { file ?? name }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors/w3c-webauthn-l3")

    static func load(_ ceremony: String, subfolder: String = "") -> [W3CVector] {
        let folder = subfolder.isEmpty ? directory : directory.appendingPathComponent(subfolder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasPrefix(ceremony) && $0.hasSuffix(".json") }.sorted().map { name in
            var object = try! JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) as! [String: Any]
            object["file"] = name
            return try! JSONDecoder().decode(W3CVector.self, from: JSONSerialization.data(withJSONObject: object))
        }
    }

    func bytes(_ value: String?) -> [UInt8] { try! Base64URL.decode(value!) }

    /// The policy under which the spec's vector is valid: its RP ID and origin, UV not demanded, and
    /// cross-origin calls allowed from its top origin when the vector is a cross-origin one.
    var policy: RelyingPartyPolicy {
        RelyingPartyPolicy(id: rpId, origins: [origin], requiresUserVerification: false,
                           crossOrigin: expected.crossOrigin == true ? .allowed(topOrigins: topOrigin.map { [$0] } ?? []) : .forbidden)
    }

    /// Algorithms WebAuthn defines that Sesame does not verify (Ed448).
    var isUnsupportedAlgorithm: Bool { expected.alg == -53 }
}

@Suite struct W3CVectorTests {
    static let registrations = W3CVector.load("registration")
    static let authentications = W3CVector.load("authentication")
    static let laterRegistrations = W3CVector.load("registration", subfolder: "later")
    static let laterAuthentications = W3CVector.load("authentication", subfolder: "later")
    static let now = ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z")!

    func register(_ vector: W3CVector, policy: RelyingPartyPolicy? = nil, challenge: [UInt8]? = nil) throws(WebAuthnError) -> VerifiedRegistration {
        let credential = RegistrationCredential(rawID: vector.bytes(vector.credentialId), clientDataJSON: vector.bytes(vector.clientDataJSON),
                                                attestationObject: vector.bytes(vector.attestationObject))
        let anchors = vector.attestationRootCertificate.map { [try! Certificate(derEncoded: vector.bytes($0))] } ?? []
        let expectations = RegistrationExpectations(policy: policy ?? vector.policy, challenge: challenge ?? vector.bytes(vector.challenge),
                                                    trustAnchors: anchors)
        return try RegistrationVerifier.verify(credential, expectations: expectations, at: Self.now)
    }

    func authenticate(_ vector: W3CVector, policy: RelyingPartyPolicy? = nil, signature: [UInt8]? = nil) throws(WebAuthnError) -> VerifiedAuthentication {
        let credential = AuthenticationCredential(
            rawID: vector.bytes(vector.credentialId), clientDataJSON: vector.bytes(vector.clientDataJSON),
            authenticatorData: vector.bytes(vector.authenticatorData), signature: signature ?? vector.bytes(vector.signature),
            userHandle: vector.userHandle.map { vector.bytes($0) })
        // The spec's assertions carry no userHandle: the user is identified before the ceremony.
        let owner = Array("vector-user".utf8)
        let record = CredentialRecord(id: vector.bytes(vector.credentialId), publicKey: try COSEKey(cborEncoded: vector.bytes(vector.credentialPublicKey)),
                                      signCount: 0, backupEligible: vector.expected.backupEligible, userHandle: owner)
        let expectations = AuthenticationExpectations(policy: policy ?? vector.policy, challenge: vector.bytes(vector.challenge),
                                                      identification: .identified(expectedUserHandle: owner))
        return try AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
    }

    @Test("the vector files are all there")
    func present() {
        #expect(Self.registrations.count == 14 && Self.authentications.count == 14)
        #expect(Self.laterRegistrations.count == 1 && Self.laterAuthentications.count == 1)
    }

    @Test("registration vectors verify with the spec's results", arguments: registrations)
    func registration(_ vector: W3CVector) throws {
        if vector.isUnsupportedAlgorithm {
            #expect(throws: WebAuthnError.code(.unsupportedAlgorithm)) { try register(vector) }
            return
        }
        let result = try register(vector)
        #expect(result.credentialID == vector.bytes(vector.credentialId))
        #expect(result.publicKey.cborEncoded == vector.bytes(vector.credentialPublicKey))
        #expect(result.publicKey.algorithm.rawValue == vector.expected.alg)
        #expect(result.format == vector.expected.fmt)
        #expect(result.attestationType.rawValue == vector.expected.attestationType)
        #expect(result.aaguid == vector.expected.aaguid)
        #expect(result.signCount == vector.expected.signCount)
        #expect(result.userVerified == vector.expected.userVerified)
        #expect(result.backupEligible == vector.expected.backupEligible)
        #expect(result.backedUp == vector.expected.backedUp)
    }

    @Test("registration vectors fail under a changed expectation", arguments: registrations.filter { !$0.isUnsupportedAlgorithm })
    func registrationMutations(_ vector: W3CVector) throws {
        var strict = vector.policy
        strict.requiresUserVerification = true
        if !vector.expected.userVerified {
            #expect(throws: WebAuthnError.code(.userVerificationRequired)) { try register(vector, policy: strict) }
        }
        var otherRP = vector.policy
        otherRP.id = "example.com"
        #expect(throws: WebAuthnError.code(.rpIDHashMismatch)) { try register(vector, policy: otherRP) }
        #expect(throws: WebAuthnError.code(.challengeMismatch)) { try register(vector, challenge: Array(repeating: 0, count: 32)) }
        var sameOrigin = vector.policy
        sameOrigin.crossOrigin = .forbidden
        if vector.expected.crossOrigin == true {
            #expect(throws: WebAuthnError.code(.crossOriginNotAllowed)) { try register(vector, policy: sameOrigin) }
        }
        if vector.topOrigin != nil {
            var otherTop = vector.policy
            otherTop.crossOrigin = .allowed(topOrigins: ["https://elsewhere.example"])
            #expect(throws: WebAuthnError.code(.topOriginMismatch)) { try register(vector, policy: otherTop) }
        }
    }

    @Test("authentication vectors verify with the spec's results", arguments: authentications + laterAuthentications)
    func authentication(_ vector: W3CVector) throws {
        if vector.isUnsupportedAlgorithm {
            #expect(throws: WebAuthnError.code(.unsupportedAlgorithm)) { try authenticate(vector) }
            return
        }
        let result = try authenticate(vector)
        #expect(result.newSignCount == vector.expected.signCount)
        #expect(result.userVerified == vector.expected.userVerified)
        #expect(result.backedUp == vector.expected.backedUp)
    }

    @Test("authentication vectors fail with a flipped signature bit", arguments: authentications.filter { !$0.isUnsupportedAlgorithm })
    func authenticationTampered(_ vector: W3CVector) throws {
        var signature = vector.bytes(vector.signature)
        signature[signature.count / 2] ^= 0x01
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, signature: signature) }
        var otherOrigin = vector.policy
        otherOrigin.origins = ["https://example.com"]
        #expect(throws: WebAuthnError.code(.originMismatch)) { try authenticate(vector, policy: otherOrigin) }
    }

    @Test("the tpm and apple vectors chain to the spec's root, and fail under another root or outside its validity")
    func attestationTrust() throws {
        for vector in Self.registrations where ["tpm", "apple"].contains(vector.expected.fmt) {
            let credential = RegistrationCredential(rawID: vector.bytes(vector.credentialId), clientDataJSON: vector.bytes(vector.clientDataJSON),
                                                    attestationObject: vector.bytes(vector.attestationObject))
            let root = try Certificate(derEncoded: vector.bytes(vector.attestationRootCertificate))
            let otherRoot = try Certificate(pemEncoded: String(contentsOf: AttestationFixtures.directory.appendingPathComponent("other-root.pem"),
                                                               encoding: .utf8))
            func verify(_ anchors: [Certificate], at time: Date = Self.now) throws(WebAuthnError) -> VerifiedRegistration {
                try RegistrationVerifier.verify(credential, expectations: RegistrationExpectations(
                    policy: vector.policy, challenge: vector.bytes(vector.challenge), trustAnchorsByFormat: [vector.expected.fmt ?? "": anchors]),
                    at: time)
            }
            #expect(try verify([root]).attestationTrustPath.count == 1)
            #expect(throws: WebAuthnError.code(.untrustedAttestation)) { try verify([otherRoot]) }
            #expect(throws: WebAuthnError.code(.untrustedAttestation)) { try verify([root], at: Date(timeIntervalSince1970: 1_600_000_000)) }
        }
    }

    @Test("the pre-fix android-key vector passes steps 2-4 and is refused at step 5: its authorization lists are empty",
          arguments: laterRegistrations)
    func androidKeyVectorWithEmptyLists(_ vector: W3CVector) throws {
        let error = #expect(throws: WebAuthnError.self) { try register(vector) }
        #expect(error?.code == .invalidAndroidKeyAuthorization)
        #expect(error?.detail.contains("§8.4 step 5: origin") == true, "\(String(reflecting: error))")
        var other = vector.policy
        other.id = "example.com"
        #expect(throws: WebAuthnError.code(.rpIDHashMismatch)) { try register(vector, policy: other) }
    }
}
