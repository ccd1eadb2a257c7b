import SesameCrypto
import Testing

@Suite struct ECDSASignatureTests {
    @Test func aSmallDERSignatureBecomesZeroPaddedRaw() throws {
        let raw = try ECDSASignature.rawRepresentation(derEncoded: [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02], curve: .p256)
        #expect(raw == [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2])
    }

    @Test func highBitIntegersGetALeadingZeroInDER() throws {
        let raw = [0x80] + [UInt8](repeating: 0, count: 31) + [UInt8](repeating: 0, count: 31) + [0x7f]
        let der = try ECDSASignature.derRepresentation(raw: raw, curve: .p256)
        #expect(der == [0x30, 0x26, 0x02, 0x21, 0x00, 0x80] + [UInt8](repeating: 0, count: 31) + [0x02, 0x01, 0x7f])
        #expect(try ECDSASignature.rawRepresentation(derEncoded: der, curve: .p256) == raw)
    }

    @Test func generatedSignaturesRoundTripAndStillVerify() throws {
        let key = PrivateKey.generate(.p256)
        let message = Array("jws signing input".utf8)
        for _ in 0..<20 {
            let der = key.signature(for: message)
            let raw = try ECDSASignature.rawRepresentation(derEncoded: der, curve: .p256)
            #expect(raw.count == 64)
            let back = try ECDSASignature.derRepresentation(raw: raw, curve: .p256)
            #expect(back == der)
            #expect(key.publicKey.isValidSignature(back, for: message, algorithm: .ecdsaSHA256))
        }
    }

    @Test func p521FixtureRoundTrips() throws {
        let der = try Fixture.bytes("es512.sig")
        let raw = try ECDSASignature.rawRepresentation(derEncoded: der, curve: .p521)
        #expect(raw.count == 132)
        #expect(try ECDSASignature.derRepresentation(raw: raw, curve: .p521) == der)
    }

    @Test func rawSignaturesOfTheWrongLengthAreRejected() {
        #expect(throws: CryptoError.invalidSignatureEncoding) {
            try ECDSASignature.derRepresentation(raw: [UInt8](repeating: 1, count: 63), curve: .p256)
        }
        #expect(throws: CryptoError.invalidSignatureEncoding) {
            try ECDSASignature.derRepresentation(raw: [UInt8](repeating: 1, count: 64), curve: .p384)
        }
        #expect(throws: CryptoError.invalidSignatureEncoding) {
            try ECDSASignature.derRepresentation(raw: [UInt8](repeating: 0, count: 64), curve: .p256)
        }
    }

    @Test func malformedDERIsRejected() throws {
        let good: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02]
        #expect(throws: CryptoError.invalidSignatureEncoding) { try ECDSASignature.rawRepresentation(derEncoded: good + [0], curve: .p256) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try ECDSASignature.rawRepresentation(derEncoded: Array(good.dropLast()), curve: .p256) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try ECDSASignature.rawRepresentation(derEncoded: [], curve: .p256) }
        // Non-minimal INTEGER (redundant leading zero).
        #expect(throws: CryptoError.invalidSignatureEncoding) {
            try ECDSASignature.rawRepresentation(derEncoded: [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x02], curve: .p256)
        }
        // An integer wider than the curve.
        let wide: [UInt8] = [0x30, 0x25, 0x02, 0x21, 0x01] + [UInt8](repeating: 0, count: 32) + [0x02, 0x01, 0x02]
        #expect(throws: CryptoError.invalidSignatureEncoding) { try ECDSASignature.rawRepresentation(derEncoded: wide, curve: .p256) }
        // A negative integer.
        #expect(throws: CryptoError.invalidSignatureEncoding) {
            try ECDSASignature.rawRepresentation(derEncoded: [0x30, 0x06, 0x02, 0x01, 0xff, 0x02, 0x01, 0x02], curve: .p256)
        }
    }
}
