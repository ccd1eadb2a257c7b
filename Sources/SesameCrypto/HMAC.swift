/// Keyed message authentication codes.
public enum HMAC {
    /// The block size of SHA-256 in bytes, HMAC's `B`.
    private static let blockSize = 64

    /// Computes HMAC-SHA-256 (RFC 2104): `H((K0 ^ opad) || H((K0 ^ ipad) || message))`, where `K0` is the key (first
    /// hashed when longer than a block) padded with zeros to the block size.
    ///
    /// Built from two SHA-256 digests of the fetched digest (``Digest/sha256(_:)``) rather than OpenSSL 3.0's one-shot
    /// `HMAC()`, which fetches the MAC and the digest by name on every call: a quarter of the cost for the short
    /// inputs Sesame authenticates (token hashes, JWT signatures, derived keys). RFC 4231's test cases check it.
    /// - Parameters:
    ///   - key: The secret key (any length).
    ///   - message: The bytes to authenticate.
    /// - Returns: The 32-byte tag.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > blockSize ? Digest.sha256(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = Digest.sha256(block.map { $0 ^ 0x36 } + message)
        return Digest.sha256(block.map { $0 ^ 0x5C } + inner)
    }
}
