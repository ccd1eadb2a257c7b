import SesameCrypto
import Testing

@Suite struct DigestTests {
    let abc = Array("abc".utf8)

    @Test func sha1MatchesTheFIPSVectors() {
        #expect(Digest.sha1(abc).hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Digest.sha1([]).hex == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test func sha256MatchesTheFIPSVectors() {
        #expect(Digest.sha256(abc).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Two blocks, and a million bytes.
        #expect(Digest.sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(Digest.sha256([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)).hex
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha384MatchesTheFIPSVectors() {
        #expect(Digest.sha384(abc).hex == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        #expect(Digest.sha384([]).hex == "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b")
    }

    @Test func sha512MatchesTheFIPSVectors() {
        #expect(Digest.sha512(abc).hex == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(Digest.sha512([]).hex == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
    }
}

@Suite struct HMACTests {
    @Test func rfc4231TestCase1() {
        let tag = HMAC.sha256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(tag.hex == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func rfc4231TestCase2() {
        let tag = HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(tag.hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func rfc4231TestCases3And4() {
        #expect(HMAC.sha256(key: [UInt8](repeating: 0xAA, count: 20), message: [UInt8](repeating: 0xDD, count: 50)).hex
            == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
        #expect(HMAC.sha256(key: Array(1...25), message: [UInt8](repeating: 0xCD, count: 50)).hex
            == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    @Test("RFC 4231 test cases 6 and 7: a key longer than a block is hashed first")
    func rfc4231LongKeys() {
        let key = [UInt8](repeating: 0xAA, count: 131)
        #expect(HMAC.sha256(key: key, message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)).hex
            == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        let message = "This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm."
        #expect(HMAC.sha256(key: key, message: Array(message.utf8)).hex == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test("a key of exactly one block is used as it is; one byte more is hashed (tags from Python's hmac module)")
    func blockBoundary() {
        #expect(HMAC.sha256(key: [UInt8](repeating: 1, count: 64), message: Array("exactly one block of key".utf8)).hex
            == "fb5b5afa853e4a8e91501334c3bf88af75dbbc2a651167f696e158d807ef06ea")
        #expect(HMAC.sha256(key: [UInt8](repeating: 1, count: 65), message: Array("one byte over a block".utf8)).hex
            == "d1d48f737fe7e44bc6c979c691906c6c52e60f03b68d3c8965701c8e86aac7be")
    }

    @Test func emptyKeyAndMessageGiveTheKnownTag() {
        // HMAC-SHA256("", "") as computed by `openssl dgst -sha256 -hmac ''`.
        #expect(HMAC.sha256(key: [], message: []).hex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}

@Suite struct ConstantTimeEqualsTests {
    @Test func equalArraysCompareEqual() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(constantTimeEquals([], []))
    }

    @Test func anyDifferingByteMakesThemUnequal() {
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([0, 2, 3], [1, 2, 3]))
    }

    @Test func differentLengthsAreUnequal() {
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!constantTimeEquals([], [0]))
    }
}

@Suite struct SecureRandomTests {
    @Test(arguments: [0, 1, 16, 32, 1000])
    func returnsTheRequestedNumberOfBytes(count: Int) {
        #expect(SecureRandom.bytes(count: count).count == count)
    }

    @Test func successiveCallsDiffer() {
        let samples = (0..<100).map { _ in SecureRandom.bytes(count: 16) }
        #expect(Set(samples).count == samples.count)
        #expect(!samples.contains([UInt8](repeating: 0, count: 16)))
    }

    /// A large draw is random to its last byte (a loop over short reads that stopped early would leave zeros): its bits
    /// are balanced to within 1% (14 standard deviations for 2^20 bits), and its last 32 bytes are not all zero.
    @Test func aLargeDrawIsFilledToTheEnd() {
        let bytes = SecureRandom.bytes(count: 1 << 17)
        let ones = bytes.reduce(0) { $0 + $1.nonzeroBitCount }
        let half = bytes.count * 4
        #expect(abs(ones - half) < half / 100, "\(ones) bits set of \(bytes.count * 8)")
        #expect(bytes.suffix(32).contains { $0 != 0 })
    }
}
