import SesameCrypto
import Testing

@Suite struct AESGCMTests {
    private func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    @Test("the GCM specification's test case 16 (AES-256, 96-bit IV, associated data)")
    func knownAnswer() throws {
        let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = hex("cafebabefacedbaddecaf888")
        let plaintext = hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, associatedData: aad)
        let expected = nonce
            + hex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
            + hex("76fc6ece0f4e1768cddf8853bb2d551b")
        #expect(sealed == expected)
        #expect(try AESGCM.open(sealed, key: key, associatedData: aad) == plaintext)
    }

    @Test("round trip with a fresh random nonce each time; empty plaintext and empty associated data work")
    func roundTrip() throws {
        let key = SecureRandom.bytes(count: 32)
        let first = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: Array("row".utf8))
        let second = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: Array("row".utf8))
        #expect(first != second, "random nonces")
        #expect(first.count == 12 + 6 + 16)
        #expect(try AESGCM.open(first, key: key, associatedData: Array("row".utf8)) == Array("secret".utf8))
        #expect(try AESGCM.open(try AESGCM.seal([], key: key, associatedData: []), key: key, associatedData: []) == [])
    }

    @Test("authenticationFailed for another key, other associated data, or any altered byte")
    func authenticationFailed() throws {
        let key = SecureRandom.bytes(count: 32)
        let sealed = try AESGCM.seal(Array("secret".utf8), key: key, associatedData: Array("jwt_secret/p1".utf8))
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: SecureRandom.bytes(count: 32), associatedData: Array("jwt_secret/p1".utf8))
        }
        #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(sealed, key: key, associatedData: Array("jwt_secret/p2".utf8)) }
        for index in sealed.indices {
            var altered = sealed
            altered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) { try AESGCM.open(altered, key: key, associatedData: Array("jwt_secret/p1".utf8)) }
        }
    }

    @Test("invalidInput for a key or nonce of the wrong size, or input shorter than a nonce and a tag")
    func invalidInput() {
        #expect(throws: CryptoError.invalidInput) { try AESGCM.seal([1], key: SecureRandom.bytes(count: 16), associatedData: []) }
        #expect(throws: CryptoError.invalidInput) { try AESGCM.seal([1], key: SecureRandom.bytes(count: 32), nonce: [0, 1], associatedData: []) }
        #expect(throws: CryptoError.invalidInput) { try AESGCM.open(Array(repeating: 0, count: 27), key: SecureRandom.bytes(count: 32), associatedData: []) }
        #expect(throws: CryptoError.invalidInput) { try AESGCM.open(Array(repeating: 0, count: 40), key: [1, 2, 3], associatedData: []) }
    }
}
