import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// COSE_Key parsing: key types, curves, algorithm consistency, and every way a key can be malformed.
@Suite struct COSEKeyTests {
    /// Credential keys of the W3C vectors, one per key type and curve Sesame verifies.
    static func vectorKey(_ file: String) -> [UInt8] {
        let vector = W3CVectorTests.registrations.first { $0.file == "registration-\(file).json" }!
        return vector.bytes(vector.credentialPublicKey)
    }

    func entries(_ key: [UInt8]) -> [CBORMapEntry] { try! CBORDecoder().decode(key).mapEntries! }

    func replacing(_ key: [UInt8], _ label: Int64, _ value: CBORValue?) -> [UInt8] {
        var entries = entries(key).filter { $0.key != .integer(label) }
        if let value { entries.append(CBORMapEntry(.integer(label), value)) }
        return CBOREncoder.encode(.map(entries))
    }

    func expectCode(_ code: WebAuthnError.Code, _ key: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try COSEKey(cborEncoded: key) }
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    @Test("parses EC2 P-256/P-384/P-521, OKP Ed25519 and RSA keys with their algorithms")
    func parses() throws {
        let cases: [(String, COSEAlgorithmIdentifier, PublicKey.Kind)] = [
            ("es256-none", .es256, .ellipticCurve(.p256)), ("es384-packed", .es384, .ellipticCurve(.p384)),
            ("es512-packed", .es512, .ellipticCurve(.p521)), ("ed25519-packed", .edDSA, .ed25519),
        ]
        for (file, algorithm, kind) in cases {
            let key = try COSEKey(cborEncoded: Self.vectorKey(file))
            #expect(key.algorithm == algorithm)
            #expect(key.publicKey?.kind == kind)
            #expect(key.cborEncoded == Self.vectorKey(file))
        }
        let rsa = try COSEKey(cborEncoded: Self.vectorKey("rs256-packed"))
        #expect(rsa.algorithm == .rs256)
        guard case .rsa = rsa.publicKey?.kind else { Issue.record("not RSA"); return }
    }

    @Test("accepts the RSA key under PS256, PS384, PS512 and RS1 too, and Ed25519 under its fully specified identifier")
    func alternativeAlgorithms() throws {
        let rsa = Self.vectorKey("rs256-packed")
        #expect(try COSEKey(cborEncoded: replacing(rsa, 3, .integer(-37))).algorithm == .ps256)
        #expect(try COSEKey(cborEncoded: replacing(rsa, 3, .integer(-38))).algorithm == .ps384)
        #expect(try COSEKey(cborEncoded: replacing(rsa, 3, .integer(-39))).algorithm == .ps512)
        #expect(try COSEKey(cborEncoded: replacing(rsa, 3, .integer(-65535))).algorithm == .rs1)
        #expect(try COSEKey(cborEncoded: replacing(Self.vectorKey("ed25519-packed"), 3, .integer(-19))).algorithm == .ed25519)
    }

    @Test("maps every supported algorithm to its signature scheme")
    func mapping() {
        let expected: [(COSEAlgorithmIdentifier, SignatureAlgorithm)] = [
            (.es256, .ecdsaSHA256), (.es384, .ecdsaSHA384), (.es512, .ecdsaSHA512), (.edDSA, .ed25519),
            (.ed25519, .ed25519), (.rs256, .rsaPKCS1v15SHA256), (.ps256, .rsaPSSSHA256), (.ps384, .rsaPSSSHA384),
            (.ps512, .rsaPSSSHA512), (.rs1, .rsaPKCS1v15SHA1),
        ]
        for (identifier, scheme) in expected { #expect(identifier.signatureAlgorithm == scheme) }
        #expect(COSEAlgorithmIdentifier(rawValue: -53).signatureAlgorithm == nil)
        #expect(COSEAlgorithmIdentifier.supported == expected.map(\.0) + [.mlDSA44, .mlDSA65, .mlDSA87])
    }

    @Test("rejects keys that are not maps or lack kty or alg")
    func structure() {
        let p256 = Self.vectorKey("es256-none")
        expectCode(.invalidCOSEKey, CBOREncoder.encode(.array([])))
        expectCode(.invalidCOSEKey, replacing(p256, 1, nil))
        expectCode(.invalidCOSEKey, replacing(p256, 1, .integer(4)))          // Symmetric
        expectCode(.invalidCOSEKey, replacing(p256, 1, .textString("EC2")))
        expectCode(.invalidCOSEKey, replacing(p256, 3, nil))
        expectCode(.unsupportedAlgorithm, replacing(p256, 3, .integer(-53)))   // Ed448
        expectCode(.cborTrailingBytes, p256 + [0])
        expectCode(.cborTruncated, Array(p256.dropLast()))
    }

    @Test("rejects an alg inconsistent with the key type or curve")
    func inconsistent() {
        expectCode(.invalidCOSEKey, replacing(Self.vectorKey("es256-none"), 3, .integer(-36)))       // ES512 on P-256
        expectCode(.invalidCOSEKey, replacing(Self.vectorKey("es384-packed"), 3, .integer(-7)))      // ES256 on P-384
        expectCode(.invalidCOSEKey, replacing(Self.vectorKey("es256-none"), 3, .integer(-8)))        // EdDSA on EC2
        expectCode(.invalidCOSEKey, replacing(Self.vectorKey("ed25519-packed"), 3, .integer(-7)))    // ES256 on OKP
        expectCode(.invalidCOSEKey, replacing(Self.vectorKey("rs256-packed"), 3, .integer(-7)))      // ES256 on RSA
    }

    @Test("rejects missing, malformed or off-curve coordinates and weak RSA keys")
    func badMaterial() {
        let p256 = Self.vectorKey("es256-none")
        expectCode(.invalidCOSEKey, replacing(p256, -1, .integer(2)))                         // P-384 curve, 32-byte x
        expectCode(.invalidCOSEKey, replacing(p256, -1, nil))
        expectCode(.invalidCOSEKey, replacing(p256, -2, nil))
        expectCode(.invalidCOSEKey, replacing(p256, -3, .boolean(true)))                      // compressed point
        expectCode(.invalidCOSEKey, replacing(p256, -2, .byteString(Array(repeating: 1, count: 31))))
        expectCode(.invalidCOSEKey, replacing(p256, -3, .byteString(Array(repeating: 1, count: 32))))   // off curve
        let ed = Self.vectorKey("ed25519-packed")
        expectCode(.invalidCOSEKey, replacing(ed, -1, .integer(7)))                           // Ed448 curve
        expectCode(.invalidCOSEKey, replacing(ed, -2, .byteString(Array(repeating: 1, count: 31))))
        let rsa = Self.vectorKey("rs256-packed")
        expectCode(.invalidCOSEKey, replacing(rsa, -1, .byteString([0xC3] + Array(repeating: 0x01, count: 127))))  // 1024-bit n
        expectCode(.invalidCOSEKey, replacing(rsa, -2, nil))
        expectCode(.invalidCOSEKey, replacing(rsa, -2, .byteString([0x02])))                  // even exponent
    }
}
