internal import COpenSSL

/// One-shot message digests.
public enum Digest {
    /// Computes SHA-1 (only for legacy attestation formats; not collision resistant).
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 20-byte digest.
    public static func sha1(_ data: [UInt8]) -> [UInt8] { compute(data, 20, copenssl_sha1) }

    /// Computes SHA-256.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 32-byte digest.
    public static func sha256(_ data: [UInt8]) -> [UInt8] { compute(data, 32, copenssl_sha256) }

    /// Computes SHA-384.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 48-byte digest.
    public static func sha384(_ data: [UInt8]) -> [UInt8] { compute(data, 48, copenssl_sha384) }

    /// Computes SHA-512.
    /// - Parameter data: The bytes to hash.
    /// - Returns: The 64-byte digest.
    public static func sha512(_ data: [UInt8]) -> [UInt8] { compute(data, 64, copenssl_sha512) }

    /// Runs one of the shim's one-shot digests (see `COpenSSL/shim.h`), which cannot fail.
    private static func compute(_ data: [UInt8], _ size: Int, _ digest: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { out, count in
            data.withUnsafeBytes { input in digest(input.baseAddress, input.count, out.baseAddress) }
            count = size
        }
    }
}
