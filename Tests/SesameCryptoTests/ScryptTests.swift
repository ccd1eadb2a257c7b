import SesameCrypto
import Testing

@Suite struct ScryptTests {
    @Test("RFC 7914 section 12, vector 1: empty password and salt, N=16 r=1 p=1")
    func rfc7914EmptyInputs() throws {
        let key = try Scrypt.derive(password: [], salt: [], parameters: .init(n: 16, r: 1, p: 1), length: 64)
        #expect(key.hex == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
            + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
    }

    @Test("RFC 7914 section 12, vector 2: password/NaCl, N=1024 r=8 p=16")
    func rfc7914Password() throws {
        let key = try Scrypt.derive(password: Array("password".utf8), salt: Array("NaCl".utf8),
                                    parameters: .init(n: 1024, r: 8, p: 16), length: 64)
        #expect(key.hex == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
            + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test("a different salt or password gives a different key")
    func inputsMatter() throws {
        let parameters = Scrypt.Parameters(n: 16, r: 1, p: 1)
        let base = try Scrypt.derive(password: [1], salt: [2], parameters: parameters, length: 32)
        #expect(try Scrypt.derive(password: [1], salt: [3], parameters: parameters, length: 32) != base)
        #expect(try Scrypt.derive(password: [4], salt: [2], parameters: parameters, length: 32) != base)
        #expect(try Scrypt.derive(password: [1], salt: [2], parameters: parameters, length: 32) == base)
    }

    @Test("unusable parameters are refused", arguments: [
        Scrypt.Parameters(n: 0, r: 1, p: 1), Scrypt.Parameters(n: 1, r: 1, p: 1), Scrypt.Parameters(n: 24, r: 1, p: 1),
        Scrypt.Parameters(n: 16, r: 0, p: 1), Scrypt.Parameters(n: 16, r: 1, p: 0), Scrypt.Parameters(n: 1 << 30, r: 8, p: 1),
    ])
    func badParameters(_ parameters: Scrypt.Parameters) {
        #expect(throws: CryptoError.invalidInput) {
            try Scrypt.derive(password: [1], salt: [2], parameters: parameters, length: 32)
        }
    }

    @Test("output lengths outside 1...1024 are refused")
    func badLength() {
        for length in [0, 1025] {
            #expect(throws: CryptoError.invalidInput) {
                try Scrypt.derive(password: [1], salt: [2], parameters: .init(n: 16, r: 1, p: 1), length: length)
            }
        }
    }
}
