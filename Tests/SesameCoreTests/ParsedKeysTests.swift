import SesameCrypto
import SesameTestSupport
import Testing
import WebAuthn
@testable import SesameCore

/// The process's memo of parsed passkey keys: the key its bytes parse to, kept once, a failure never kept, bounded.
@Suite struct ParsedKeysTests {
    @Test("a stored key's bytes give the key they parse to, parsed once; the memo verifies the passkey's signatures")
    func parsedOnce() throws {
        let keys = ParsedKeys(), fixture = CeremonyFixture()
        let first = try keys.key(fixture.coseKey), again = try keys.key(fixture.coseKey)
        #expect(keys.count == 1)
        #expect(first.cborEncoded == fixture.coseKey && again.cborEncoded == fixture.coseKey)
        #expect(first.publicKey === again.publicKey, "the second use is the same OpenSSL key")
        let message: [UInt8] = Array("signed".utf8)
        let signature = fixture.credentialKey.signature(for: message)
        #expect(again.publicKey?.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256) == true)
        #expect(again.publicKey?.isValidSignature(signature, for: message + [0], algorithm: .ecdsaSHA256) == false)
        // Another passkey's bytes are another key.
        let other = CeremonyFixture()
        #expect(try keys.key(other.coseKey).publicKey?.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256) == false)
        #expect(keys.count == 2)
    }

    @Test("bytes that are no COSE key throw what the parser throws, and are not kept")
    func refusalsNotKept() {
        let keys = ParsedKeys()
        #expect(throws: WebAuthnError.self) { try keys.key([0xA1, 0x01]) }
        #expect(keys.count == 0)
    }

    @Test("at capacity the memo starts over, so its size stays bounded under churn")
    func bounded() throws {
        let keys = ParsedKeys(capacity: 8)
        for _ in 0..<8 { _ = try keys.key(CeremonyFixture().coseKey) }
        #expect(keys.count == 8)
        let last = CeremonyFixture().coseKey
        _ = try keys.key(last)
        #expect(keys.count == 1)
        #expect(try keys.key(last).cborEncoded == last)
        #expect(keys.count == 1)
    }
}
