import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// Post-quantum passkeys: ML-DSA credentials (COSE AKP keys, RFC 9964) through the registration and authentication
/// verifiers, from vectors dilithium-py made (Vectors/mldsa/generate.py), and every way an AKP key can be malformed.
@Suite struct MLDSAWebAuthnTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors/mldsa")

    static func load(_ ceremony: String) -> [W3CVector] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasPrefix(ceremony) && $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                  var object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            object["file"] = name
            guard let patched = try? JSONSerialization.data(withJSONObject: object) else { return nil }
            return try? JSONDecoder().decode(W3CVector.self, from: patched)
        }
    }

    static let registrations = load("registration")
    static let authentications = load("authentication")
    static let now = ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z")!

    func register(_ vector: W3CVector, policy: RelyingPartyPolicy? = nil, attestationObject: [UInt8]? = nil) throws(WebAuthnError)
        -> VerifiedRegistration
    {
        let credential = RegistrationCredential(rawID: vector.bytes(vector.credentialId), clientDataJSON: vector.bytes(vector.clientDataJSON),
                                                attestationObject: attestationObject ?? vector.bytes(vector.attestationObject))
        let expectations = RegistrationExpectations(policy: policy ?? vector.policy, challenge: vector.bytes(vector.challenge))
        return try RegistrationVerifier.verify(credential, expectations: expectations, at: Self.now)
    }

    func authenticate(_ vector: W3CVector, publicKey: [UInt8]? = nil, signature: [UInt8]? = nil, authenticatorData: [UInt8]? = nil)
        throws(WebAuthnError) -> VerifiedAuthentication
    {
        let credential = AuthenticationCredential(
            rawID: vector.bytes(vector.credentialId), clientDataJSON: vector.bytes(vector.clientDataJSON),
            authenticatorData: authenticatorData ?? vector.bytes(vector.authenticatorData), signature: signature ?? vector.bytes(vector.signature),
            userHandle: nil)
        let owner = Array("mldsa-user".utf8)
        let record = CredentialRecord(id: vector.bytes(vector.credentialId),
                                      publicKey: try COSEKey(cborEncoded: publicKey ?? vector.bytes(vector.credentialPublicKey)),
                                      signCount: 0, backupEligible: false, userHandle: owner)
        let expectations = AuthenticationExpectations(policy: vector.policy, challenge: vector.bytes(vector.challenge),
                                                      identification: .identified(expectedUserHandle: owner))
        return try AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
    }

    static func vector(_ list: [W3CVector], _ file: String) throws -> W3CVector {
        try #require(list.first { $0.file == file }, "missing vector \(file)")
    }

    @Test("the vectors are all there: packed self attestation for each parameter set, and fmt none for ML-DSA-65")
    func present() {
        #expect(Self.registrations.compactMap(\.file) == [
            "registration-mldsa44-packed.json", "registration-mldsa65-none.json", "registration-mldsa65-packed.json",
            "registration-mldsa87-packed.json",
        ])
        #expect(Self.authentications.count == 4)
    }

    @Test("an ML-DSA registration verifies end to end, with its AKP key, format and attestation type", arguments: registrations)
    func registration(_ vector: W3CVector) throws {
        let result = try register(vector)
        #expect(result.credentialID == vector.bytes(vector.credentialId))
        #expect(result.publicKey.cborEncoded == vector.bytes(vector.credentialPublicKey))
        #expect(result.publicKey.algorithm.rawValue == vector.expected.alg)
        #expect(result.publicKey.publicKey == nil)
        let key = try #require(result.publicKey.mlDSAPublicKey)
        #expect(key.parameterSet == result.publicKey.algorithm.mlDSAParameterSet)
        #expect(result.format == vector.expected.fmt)
        #expect(result.attestationType.rawValue == vector.expected.attestationType)
        #expect(result.aaguid == vector.expected.aaguid)
        #expect(result.signCount == 0 && result.userVerified && !result.backupEligible && !result.backedUp)
    }

    @Test("an ML-DSA assertion verifies against the key stored at registration", arguments: authentications)
    func authentication(_ vector: W3CVector) throws {
        // The stored key is the registration's: same credential, same COSE_Key bytes.
        let registration = try register(try Self.vector(Self.registrations, vector.file!.replacingOccurrences(of: "authentication", with: "registration")))
        #expect(registration.publicKey.cborEncoded == vector.bytes(vector.credentialPublicKey))
        let result = try authenticate(vector, publicKey: registration.publicKey.cborEncoded)
        #expect(result.newSignCount == vector.expected.signCount)
        #expect(result.userVerified == vector.expected.userVerified)
    }

    @Test("a changed self-attestation signature, or a changed signed byte, is refused", arguments: [
        "registration-mldsa44-packed.json", "registration-mldsa65-packed.json", "registration-mldsa87-packed.json",
    ])
    func tamperedRegistration(_ file: String) throws {
        let vector = try Self.vector(Self.registrations, file)
        let object = try CBORDecoder().decode(vector.bytes(vector.attestationObject))
        let statement = try #require(object["attStmt"])
        let signature = try #require(statement["sig"]?.bytes)
        let alg = try #require(statement["alg"])
        func attestation(sig: [UInt8], alg: CBORValue = alg, authData: [UInt8]? = nil) throws -> [UInt8] {
            CBOREncoder.encode(.map([
                CBORMapEntry(.textString("fmt"), .textString("packed")),
                CBORMapEntry(.textString("attStmt"), .map([CBORMapEntry(.textString("alg"), alg), CBORMapEntry(.textString("sig"), .byteString(sig))])),
                CBORMapEntry(.textString("authData"), .byteString(try authData ?? #require(object["authData"]?.bytes))),
            ]))
        }
        #expect(throws: Never.self) { try register(vector, attestationObject: try attestation(sig: signature)) }
        var flipped = signature
        flipped[flipped.count / 2] ^= 0x10
        #expect(throws: WebAuthnError.code(.invalidAttestationSignature)) { try register(vector, attestationObject: try attestation(sig: flipped)) }
        #expect(throws: WebAuthnError.code(.invalidAttestationSignature)) {
            try register(vector, attestationObject: try attestation(sig: Array(signature.dropLast())))
        }
        #expect(throws: WebAuthnError.code(.invalidAttestationSignature)) { try register(vector, attestationObject: try attestation(sig: [])) }
        // §8.2.2 step 3: the statement's alg must be the credential's.
        #expect(throws: WebAuthnError.code(.malformedAttestationStatement)) {
            try register(vector, attestationObject: try attestation(sig: signature, alg: .integer(-7)))
        }
    }

    @Test("a changed assertion signature, signature length or signed byte is refused", arguments: authentications)
    func tamperedAuthentication(_ vector: W3CVector) throws {
        let signature = vector.bytes(vector.signature)
        var flipped = signature
        flipped[7] ^= 0x01
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, signature: flipped) }
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, signature: signature + [0]) }
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, signature: []) }
        // Another parameter set's signature length.
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, signature: [UInt8](repeating: 0, count: 2420)) }
        var authData = vector.bytes(vector.authenticatorData)
        authData[36] ^= 0x01   // the sign count's last byte: still valid authenticator data, no longer what was signed
        #expect(throws: WebAuthnError.code(.invalidSignature)) { try authenticate(vector, authenticatorData: authData) }
    }

    @Test("a relying party that does not offer ML-DSA refuses the registration (§7.1 step 18)")
    func notOffered() throws {
        let vector = try Self.vector(Self.registrations, "registration-mldsa65-packed.json")
        var policy = vector.policy
        policy.allowedAlgorithms = [.es256, .rs256]
        #expect(throws: WebAuthnError.code(.algorithmNotAllowed)) { try register(vector, policy: policy) }
        policy.allowedAlgorithms = [.mlDSA65]
        #expect(throws: Never.self) { try register(vector, policy: policy) }
    }

    // MARK: COSE AKP keys

    static func akp(_ entries: [(Int64, CBORValue)]) -> [UInt8] {
        CBOREncoder.encode(.map(entries.map { CBORMapEntry(.integer($0.0), $0.1) }))
    }

    func expectCode(_ code: WebAuthnError.Code, _ key: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try COSEKey(cborEncoded: key) }
        #expect(error?.code == code, "\(error.map { String(reflecting: $0) } ?? "")", sourceLocation: sourceLocation)
    }

    @Test("parses AKP keys of each parameter set and maps the algorithms")
    func parsesAKP() throws {
        for (alg, set) in [(COSEAlgorithmIdentifier.mlDSA44, MLDSAParameterSet.mlDSA44), (.mlDSA65, .mlDSA65), (.mlDSA87, .mlDSA87)] {
            let pub = [UInt8](repeating: 0x5a, count: set.publicKeyByteCount)
            let key = try COSEKey(cborEncoded: Self.akp([(1, .integer(7)), (3, .integer(Int64(alg.rawValue))), (-1, .byteString(pub))]))
            #expect(key.algorithm == alg && key.mlDSAPublicKey?.parameterSet == set && key.publicKey == nil)
            #expect(key.mlDSAPublicKey?.rawRepresentation == pub)
            #expect(alg.signatureAlgorithm == nil && alg.isSupported)
            #expect(COSEAlgorithmIdentifier.supported.contains(alg))
        }
        #expect(COSEAlgorithmIdentifier.mlDSA65.description == "ML-DSA-65")
        #expect(COSEAlgorithmIdentifier.es256.mlDSAParameterSet == nil)
    }

    @Test("refuses AKP keys with a wrong alg, a missing, mistyped or wrong-length pub, or private parts")
    func malformedAKP() {
        let pub65: CBORValue = .byteString([UInt8](repeating: 1, count: 1952))
        // kty 7 with an algorithm of another key type, or one Sesame does not know.
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-7)), (-1, pub65)]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-8)), (-1, pub65)]))
        expectCode(.unsupportedAlgorithm, Self.akp([(1, .integer(7)), (3, .integer(-51)), (-1, pub65)]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (-1, pub65)]))
        // ML-DSA algorithms under other key types.
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(2)), (3, .integer(-49)), (-1, .integer(1)), (-2, pub65), (-3, pub65)]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(1)), (3, .integer(-49)), (-1, .integer(6)), (-2, pub65)]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(3)), (3, .integer(-48)), (-1, pub65), (-2, .byteString([1, 0, 1]))]))
        // pub: missing, not a byte string, empty, one byte short or long, another parameter set's length.
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-49))]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-49)), (-1, .textString("pub"))]))
        for length in [0, 1951, 1953, 1312, 2592] {
            expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-49)), (-1, .byteString([UInt8](repeating: 1, count: length)))]))
        }
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-48)), (-1, pub65)]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-50)), (-1, pub65)]))
        // A private key (priv, priv_exp) must never be in a credential public key.
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-49)), (-1, pub65), (-2, .byteString([UInt8](repeating: 2, count: 32)))]))
        expectCode(.invalidCOSEKey, Self.akp([(1, .integer(7)), (3, .integer(-49)), (-1, pub65), (-3, .byteString([2]))]))
        // kty as text, as in JOSE.
        expectCode(.invalidCOSEKey, CBOREncoder.encode(.map([
            CBORMapEntry(.integer(1), .textString("AKP")), CBORMapEntry(.integer(3), .integer(-49)), CBORMapEntry(.integer(-1), pub65),
        ])))
    }

    @Test("the fido-u2f format refuses an ML-DSA credential, and a COSE ML-DSA key verifies nothing with a wrong-length signature")
    func otherPaths() throws {
        let vector = try Self.vector(Self.registrations, "registration-mldsa44-packed.json")
        let key = try COSEKey(cborEncoded: vector.bytes(vector.credentialPublicKey))
        #expect(!key.isValidSignature([], for: []))
        #expect(!key.isValidSignature([UInt8](repeating: 0, count: 2420), for: [1, 2, 3]))
        // A real P-256 attestation certificate, so the format reaches §8.6 step 4, the credential key's type.
        let certificate = try AttestationFixtures.certificate("attestation-u2f").derRepresentation
        let statement = CBORValue.map([
            CBORMapEntry(.textString("sig"), .byteString([0x30, 0x00])),
            CBORMapEntry(.textString("x5c"), .array([.byteString(certificate)])),
        ])
        let object = try CBORDecoder().decode(vector.bytes(vector.attestationObject))
        let u2f = CBOREncoder.encode(.map([
            CBORMapEntry(.textString("fmt"), .textString("fido-u2f")), CBORMapEntry(.textString("attStmt"), statement),
            CBORMapEntry(.textString("authData"), try #require(object["authData"])),
        ]))
        #expect(throws: WebAuthnError.code(.malformedAttestationStatement)) { try register(vector, attestationObject: u2f) }
    }
}
