import Foundation
import SesameCrypto
import Testing

@Suite struct ES256Tests {
    let message = Array("webauthn authenticatorData || clientDataHash".utf8)

    @Test func aSignatureFromAGeneratedKeyVerifies() {
        let key = PrivateKey.generate(.p256)
        #expect(key.kind == .p256)
        #expect(key.publicKey.kind == .ellipticCurve(.p256))
        let signature = key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
    }

    @Test func aTamperedMessageIsRejected() {
        let key = PrivateKey.generate(.p256)
        let signature = key.signature(for: message)
        var tampered = message
        tampered[0] ^= 1
        #expect(!key.publicKey.isValidSignature(signature, for: tampered, algorithm: .ecdsaSHA256))
        #expect(!key.publicKey.isValidSignature(signature, for: [], algorithm: .ecdsaSHA256))
    }

    @Test func aTamperedSignatureIsRejected() {
        let key = PrivateKey.generate(.p256)
        let signature = key.signature(for: message)
        var flipped = signature
        flipped[flipped.count - 1] ^= 1
        #expect(!key.publicKey.isValidSignature(flipped, for: message, algorithm: .ecdsaSHA256))
        #expect(!key.publicKey.isValidSignature(signature + [0], for: message, algorithm: .ecdsaSHA256))
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: message, algorithm: .ecdsaSHA256))
        #expect(!key.publicKey.isValidSignature([], for: message, algorithm: .ecdsaSHA256))
        #expect(!key.publicKey.isValidSignature([UInt8](repeating: 0x30, count: 5000), for: message, algorithm: .ecdsaSHA256))
    }

    @Test func aSignatureNotInMinimalDERIsRejected() throws {
        let key = PrivateKey.generate(.p256)
        // Signatures until r's first byte leaves room for a needless 0x00 (its high bit clear): the same values, padded.
        var signature = key.signature(for: message)
        while signature[4] >= 0x80 || signature[4] == 0 { signature = key.signature(for: message) }
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
        let rLength = Int(signature[3])
        let padded = [0x30, signature[1] + 1, 0x02, signature[3] + 1, 0x00] + signature[4..<(4 + rLength)] + signature[(4 + rLength)...]
        #expect(!key.publicKey.isValidSignature(padded, for: message, algorithm: .ecdsaSHA256))
        // A long-form length where the short form fits.
        let longForm = [0x30, 0x81] + signature[1...]
        #expect(!key.publicKey.isValidSignature(longForm, for: message, algorithm: .ecdsaSHA256))
    }

    @Test func anotherKeysSignatureIsRejected() {
        let signature = PrivateKey.generate(.p256).signature(for: message)
        #expect(!PrivateKey.generate(.p256).publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
    }

    @Test func mismatchedAlgorithmsAreRejectedWithoutTrapping() {
        let key = PrivateKey.generate(.p256)
        let signature = key.signature(for: message)
        #expect(!key.publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA384))
        #expect(!key.publicKey.isValidSignature(signature, for: message, algorithm: .ed25519))
        #expect(!key.publicKey.isValidSignature(signature, for: message, algorithm: .rsaPKCS1v15SHA256))
        #expect(!key.publicKey.isValidSignature(signature, for: message, algorithm: .rsaPSSSHA256))
        #expect(!key.publicKey.isValidSignature(signature, for: message, algorithm: .rsaPKCS1v15SHA1))
        // The wrong-algorithm attempts leave nothing behind that breaks the next verification.
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
    }

    @Test func oneSharedKeyVerifiesConcurrently() async {
        let key = PrivateKey.generate(.p256)
        let message = self.message
        let signature = key.signature(for: message)
        let publicKey = key.publicKey
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    // Odd tasks check a tampered message, so failures interleave with successes.
                    index % 2 == 0
                        ? publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256)
                        : !publicKey.isValidSignature(signature, for: message + [1], algorithm: .ecdsaSHA256)
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }

    @Test func theKeyRoundTripsThroughCoordinatesAndSPKI() throws {
        let key = PrivateKey.generate(.p256)
        let point = try #require(key.publicKey.ellipticCurvePoint)
        #expect(point.x.count == 32 && point.y.count == 32)
        let fromPoint = try PublicKey(ellipticCurve: .p256, x: point.x, y: point.y)
        let fromSPKI = try PublicKey(derEncodedSubjectPublicKeyInfo: key.publicKey.derEncodedSubjectPublicKeyInfo)
        #expect(fromPoint.derEncodedSubjectPublicKeyInfo == key.publicKey.derEncodedSubjectPublicKeyInfo)
        #expect(fromSPKI.kind == .ellipticCurve(.p256))
        let signature = key.signature(for: message)
        #expect(fromPoint.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
    }

    @Test func thePrivateKeyRoundTripsThroughPKCS8PEM() throws {
        let key = PrivateKey.generate(.p256)
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let parsed = try PrivateKey(pemEncoded: pem)
        #expect(parsed.kind == .p256)
        #expect(parsed.publicKey.derEncodedSubjectPublicKeyInfo == key.publicKey.derEncodedSubjectPublicKeyInfo)
        #expect(key.publicKey.isValidSignature(parsed.signature(for: message), for: message, algorithm: .ecdsaSHA256))
    }

    @Test func aSEC1PrivateKeyIsAccepted() throws {
        let key = try PrivateKey(pemEncoded: Fixture.text("p256-sec1.pem"))
        #expect(key.kind == .p256)
        #expect(key.publicKey.isValidSignature(key.signature(for: message), for: message, algorithm: .ecdsaSHA256))
    }

    @Test func unsupportedOrBrokenPrivateKeysAreRejected() throws {
        #expect(throws: CryptoError.invalidKey) { try PrivateKey(pemEncoded: Fixture.text("es384-key.pem")) }
        #expect(throws: CryptoError.invalidKey) { try PrivateKey(pemEncoded: Fixture.text("rsa2048-key.pem")) }
        #expect(throws: CryptoError.invalidKey) { try PrivateKey(pemEncoded: "") }
        #expect(throws: CryptoError.invalidKey) { try PrivateKey(pemEncoded: Fixture.text("root.pem")) }
    }
}

@Suite struct EllipticCurveKeyTests {
    @Test func coordinatesOfTheWrongLengthAreRejected() {
        let good = PrivateKey.generate(.p256).publicKey.ellipticCurvePoint!
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p256, x: Array(good.x.dropFirst()), y: good.y) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p256, x: good.x, y: good.y + [0]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p384, x: good.x, y: good.y) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p256, x: [], y: []) }
    }

    @Test(arguments: [EllipticCurve.p256, .p384, .p521])
    func aPointOffTheCurveIsRejected(curve: EllipticCurve) {
        var x = [UInt8](repeating: 0, count: curve.coordinateByteCount)
        var y = x
        x[x.count - 1] = 1
        y[y.count - 1] = 1
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: curve, x: x, y: y) }
    }

    @Test func aValidPointWithOneCoordinateChangedIsRejected() {
        let good = PrivateKey.generate(.p256).publicKey.ellipticCurvePoint!
        var y = good.y
        y[31] ^= 1
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p256, x: good.x, y: y) }
    }

    @Test func anSPKIHoldingThePointAtInfinityIsRejected() {
        // SubjectPublicKeyInfo { id-ecPublicKey, prime256v1 } with subjectPublicKey = 0x00 (infinity):
        // accepting it would let anyone forge ECDSA signatures.
        let der = [UInt8](hex: "3019301306072a8648ce3d020106082a8648ce3d030107030200" + "00")
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: der) }
    }

    @Test func aCompressedPointSPKIIsAcceptedAndReportsItsCoordinates() throws {
        let key = PrivateKey.generate(.p256)
        let point = try #require(key.publicKey.ellipticCurvePoint)
        let prefix: UInt8 = point.y[31] & 1 == 0 ? 0x02 : 0x03
        let der = [UInt8](hex: "3039301306072a8648ce3d020106082a8648ce3d030107032200") + [prefix] + point.x
        let compressed = try PublicKey(derEncodedSubjectPublicKeyInfo: der)
        #expect(compressed.kind == .ellipticCurve(.p256))
        #expect(compressed.ellipticCurvePoint?.x == point.x)
        #expect(compressed.ellipticCurvePoint?.y == point.y)
        let message: [UInt8] = [1, 2, 3]
        #expect(compressed.isValidSignature(key.signature(for: message), for: message, algorithm: .ecdsaSHA256))
    }

    @Test func spkiEncodingsRoundTripExactly() throws {
        let encodings = [
            try Fixture.bytes("es384-pub.der"), try Fixture.bytes("es512-pub.der"), try Fixture.bytes("rsa2048-pub.der"),
            PrivateKey.generate(.p256).publicKey.derEncodedSubjectPublicKeyInfo,
            PrivateKey.generate(.ed25519).publicKey.derEncodedSubjectPublicKeyInfo,
        ]
        for der in encodings {
            #expect(try PublicKey(derEncodedSubjectPublicKeyInfo: der).derEncodedSubjectPublicKeyInfo == der)
        }
        #expect(try PublicKey(derEncodedSubjectPublicKeyInfo: encodings[4]).kind == .ed25519)
    }

    @Test func anOffCurvePointInsideAnSPKIIsRejected() {
        var der = PrivateKey.generate(.p256).publicKey.derEncodedSubjectPublicKeyInfo
        der[der.count - 1] ^= 1
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: der) }
    }

    @Test func coordinatesOutsideTheFieldAreRejected() {
        let ones = [UInt8](repeating: 0xff, count: 32)
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ellipticCurve: .p256, x: ones, y: ones) }
    }

    @Test func coordinateByteCountsMatchTheCurves() {
        #expect(EllipticCurve.p256.coordinateByteCount == 32)
        #expect(EllipticCurve.p384.coordinateByteCount == 48)
        #expect(EllipticCurve.p521.coordinateByteCount == 66)
    }

    @Test func nonECKeysHaveNoPoint() throws {
        #expect(PrivateKey.generate(.ed25519).publicKey.ellipticCurvePoint == nil)
        #expect(try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("rsa2048-pub.der")).ellipticCurvePoint == nil)
    }
}

@Suite struct Ed25519Tests {
    // RFC 8032 section 7.1, TEST 1 (empty message).
    let secret = [UInt8](hex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    let publicKey = [UInt8](hex: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    let signature = [UInt8](hex: """
        e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b
        """)

    @Test func rfc8032Test1Verifies() throws {
        let key = try PublicKey(ed25519RawRepresentation: publicKey)
        #expect(key.kind == .ed25519)
        #expect(key.isValidSignature(signature, for: [], algorithm: .ed25519))
    }

    @Test func rfc8032Test1RejectsTampering() throws {
        let key = try PublicKey(ed25519RawRepresentation: publicKey)
        var flipped = signature
        flipped[10] ^= 0x80
        #expect(!key.isValidSignature(flipped, for: [], algorithm: .ed25519))
        #expect(!key.isValidSignature(signature, for: [0], algorithm: .ed25519))
        #expect(!key.isValidSignature(Array(signature.dropLast()), for: [], algorithm: .ed25519))
        #expect(!key.isValidSignature(signature + [0], for: [], algorithm: .ed25519))
        #expect(!key.isValidSignature(signature, for: [], algorithm: .ecdsaSHA256))
    }

    @Test func rfc8032Test1SigningIsReproducedFromAPKCS8Key() throws {
        // PKCS#8 wrapping of the RFC secret: SEQUENCE { 0, { id-Ed25519 }, OCTET STRING { OCTET STRING seed } }.
        let der = [UInt8](hex: "302e020100300506032b657004220420") + secret
        let pem = "-----BEGIN PRIVATE KEY-----\n\(Data(der).base64EncodedString())\n-----END PRIVATE KEY-----\n"
        let key = try PrivateKey(pemEncoded: pem)
        #expect(key.kind == .ed25519)
        #expect(key.signature(for: []) == signature)
        #expect(key.publicKey.derEncodedSubjectPublicKeyInfo == [UInt8](hex: "302a300506032b6570032100") + publicKey)
    }

    @Test func generatedKeysSignAndVerify() throws {
        let key = PrivateKey.generate(.ed25519)
        let message = Array("hello".utf8)
        let signature = key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message, algorithm: .ed25519))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("hellO".utf8), algorithm: .ed25519))
        let reparsed = try PrivateKey(pemEncoded: key.pemRepresentation)
        #expect(reparsed.signature(for: message) == signature)  // Ed25519 is deterministic
    }

    @Test func rawKeysOfTheWrongLengthAreRejected() {
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ed25519RawRepresentation: Array(publicKey.dropLast())) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ed25519RawRepresentation: publicKey + [0]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(ed25519RawRepresentation: []) }
    }
}

@Suite struct FixtureSignatureTests {
    @Test func es384FromOpenSSLVerifies() throws {
        let key = try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("es384-pub.der"))
        #expect(key.kind == .ellipticCurve(.p384))
        let message = try Fixture.bytes("message.txt")
        let signature = try Fixture.bytes("es384.sig")
        #expect(key.isValidSignature(signature, for: message, algorithm: .ecdsaSHA384))
        #expect(!key.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256))
        #expect(!key.isValidSignature(signature, for: message + [0], algorithm: .ecdsaSHA384))
    }

    @Test func es512FromOpenSSLVerifies() throws {
        let key = try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("es512-pub.der"))
        #expect(key.kind == .ellipticCurve(.p521))
        #expect(key.ellipticCurvePoint?.x.count == 66)
        let message = try Fixture.bytes("message.txt")
        let signature = try Fixture.bytes("es512.sig")
        #expect(key.isValidSignature(signature, for: message, algorithm: .ecdsaSHA512))
        #expect(!key.isValidSignature(signature, for: message, algorithm: .ecdsaSHA384))
        let point = try #require(key.ellipticCurvePoint)
        let rebuilt = try PublicKey(ellipticCurve: .p521, x: point.x, y: point.y)
        #expect(rebuilt.isValidSignature(signature, for: message, algorithm: .ecdsaSHA512))
    }

    @Test func rsaSignaturesFromOpenSSLVerifyOnlyUnderTheirOwnScheme() throws {
        let key = try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("rsa2048-pub.der"))
        #expect(key.kind == .rsa(modulusBits: 2048))
        let message = try Fixture.bytes("message.txt")
        let rs256 = try Fixture.bytes("rs256.sig")
        let ps256 = try Fixture.bytes("ps256.sig")
        let rs1 = try Fixture.bytes("rs1.sig")
        #expect(key.isValidSignature(rs256, for: message, algorithm: .rsaPKCS1v15SHA256))
        #expect(key.isValidSignature(ps256, for: message, algorithm: .rsaPSSSHA256))
        #expect(key.isValidSignature(rs1, for: message, algorithm: .rsaPKCS1v15SHA1))

        #expect(!key.isValidSignature(rs256, for: message, algorithm: .rsaPSSSHA256))
        #expect(!key.isValidSignature(ps256, for: message, algorithm: .rsaPKCS1v15SHA256))
        #expect(!key.isValidSignature(rs1, for: message, algorithm: .rsaPKCS1v15SHA256))
        #expect(!key.isValidSignature(rs256, for: message, algorithm: .ecdsaSHA256))
        #expect(!key.isValidSignature(rs256, for: message + [0], algorithm: .rsaPKCS1v15SHA256))
        #expect(!key.isValidSignature(Array(rs256.dropFirst()), for: message, algorithm: .rsaPKCS1v15SHA256))
        var flipped = ps256
        flipped[100] ^= 1
        #expect(!key.isValidSignature(flipped, for: message, algorithm: .rsaPSSSHA256))
    }

    @Test("PS384 and PS512 signatures from OpenSSL verify only with their own digest, MGF1 and salt length")
    func rsaPSSWithLargerDigests() throws {
        let key = try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("rsa2048-pub.der"))
        let message = try Fixture.bytes("message.txt")
        let ps256 = try Fixture.bytes("ps256.sig")
        let ps384 = try Fixture.bytes("ps384.sig")
        let ps512 = try Fixture.bytes("ps512.sig")
        #expect(key.isValidSignature(ps384, for: message, algorithm: .rsaPSSSHA384))
        #expect(key.isValidSignature(ps512, for: message, algorithm: .rsaPSSSHA512))
        let all: [([UInt8], SignatureAlgorithm)] = [(ps256, .rsaPSSSHA256), (ps384, .rsaPSSSHA384), (ps512, .rsaPSSSHA512)]
        for (signature, own) in all {
            for other: SignatureAlgorithm in [.rsaPSSSHA256, .rsaPSSSHA384, .rsaPSSSHA512, .rsaPKCS1v15SHA256] where other != own {
                #expect(!key.isValidSignature(signature, for: message, algorithm: other), "\(own) verified as \(other)")
            }
            var flipped = signature
            flipped[7] ^= 0x40
            #expect(!key.isValidSignature(flipped, for: message, algorithm: own))
            #expect(!key.isValidSignature(signature, for: message + [0x0A], algorithm: own))
        }
        let ec = try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("es384-pub.der"))
        #expect(!ec.isValidSignature(ps384, for: message, algorithm: .rsaPSSSHA384))
    }

    @Test func rsaKeyFromModulusAndExponentVerifies() throws {
        let modulus = try [UInt8](hex: Fixture.text("rsa2048-modulus.hex"))
        let key = try PublicKey(rsaModulus: modulus, publicExponent: [0x01, 0x00, 0x01])
        #expect(key.kind == .rsa(modulusBits: 2048))
        #expect(try key.derEncodedSubjectPublicKeyInfo == Fixture.bytes("rsa2048-pub.der"))
        #expect(try key.isValidSignature(Fixture.bytes("rs256.sig"), for: Fixture.bytes("message.txt"), algorithm: .rsaPKCS1v15SHA256))
        // A leading zero byte does not change the modulus.
        #expect(try PublicKey(rsaModulus: [0] + modulus, publicExponent: [1, 0, 1]).kind == .rsa(modulusBits: 2048))
    }

    @Test func weakOrMalformedRSAKeysAreRejected() throws {
        let modulus = try [UInt8](hex: Fixture.text("rsa2048-modulus.hex"))
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: Fixture.bytes("rsa1024-pub.der")) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: Array(modulus.prefix(128)), publicExponent: [1, 0, 1]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: [0] + Array(modulus.prefix(255)), publicExponent: [1, 0, 1]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: modulus, publicExponent: [1, 0, 0]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: modulus, publicExponent: [1]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: modulus, publicExponent: []) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(rsaModulus: [], publicExponent: [3]) }
    }

    @Test func spkiWithTrailingOrMissingBytesIsRejected() throws {
        let der = try Fixture.bytes("es384-pub.der")
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: der + [0]) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: Array(der.dropLast())) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: []) }
        #expect(throws: CryptoError.invalidKey) { try PublicKey(derEncodedSubjectPublicKeyInfo: [0x30, 0x00]) }
    }
}
