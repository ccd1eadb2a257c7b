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
}
