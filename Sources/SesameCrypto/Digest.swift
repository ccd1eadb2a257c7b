internal import COpenSSL

/// One-shot message digests.
public enum Digest {
    /// Computes SHA-1 (only for legacy attestation formats; not collision resistant).
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 20-byte digest.
    public static func sha1(_ data: [UInt8]) -> [UInt8] { compute(data, FetchedDigest.sha1, 20) }

    /// Computes SHA-256.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 32-byte digest.
    public static func sha256(_ data: [UInt8]) -> [UInt8] { compute(data, FetchedDigest.sha256, 32) }

    /// Computes SHA-384.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 48-byte digest.
    public static func sha384(_ data: [UInt8]) -> [UInt8] { compute(data, FetchedDigest.sha384, 48) }

    /// Computes SHA-512.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 64-byte digest.
    public static func sha512(_ data: [UInt8]) -> [UInt8] { compute(data, FetchedDigest.sha512, 64) }

    /// Runs `EVP_Digest`; it cannot fail for the built-in digests, so failure is a precondition violation.
    private static func compute(_ data: [UInt8], _ digest: FetchedDigest, _ size: Int) -> [UInt8] {
        let md = digest.pointer
        return [UInt8](unsafeUninitializedCapacity: size) { out, count in
            var written: UInt32 = 0
            let ok = data.withUnsafeBytes { input in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &written, md, nil)
            }
            precondition(ok == 1 && Int(written) == size, "EVP_Digest failed: \(OpenSSLErrors.drain())")
            count = size
        }
    }
}
