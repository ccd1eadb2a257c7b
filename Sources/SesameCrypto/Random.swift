internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes from `RAND_bytes`.
    /// - Parameter count: The number of bytes; must not be negative.
    /// - Returns: The random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "SecureRandom.bytes: invalid count \(count)")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                let ok = RAND_bytes(buffer.baseAddress, Int32(count))
                precondition(ok == 1, "RAND_bytes failed: \(OpenSSLErrors.drain())")
            }
            initialized = count
        }
    }
}
