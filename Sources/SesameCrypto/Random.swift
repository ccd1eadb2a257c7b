internal import COpenSSL

/// Cryptographically secure random bytes: on Linux the kernel's CSPRNG (`getrandom(2)`), elsewhere OpenSSL's DRBG.
///
/// On Linux the kernel is asked directly: it is the source OpenSSL seeds from, and a 16-32-byte draw (a challenge, an
/// identifier, a secret) costs about a quarter of OpenSSL 3.0's `RAND_bytes` there (0.45 µs against 1.6 µs on the
/// benchmark machine); `RAND_bytes` remains the fallback should the kernel refuse.
public enum SecureRandom {
    /// Returns `count` random bytes.
    /// - Parameter count: The number of bytes; must not be negative.
    /// - Returns: The random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "SecureRandom.bytes: invalid count \(count)")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 {
                #if os(Linux)
                let fromKernel = copenssl_system_random(buffer.baseAddress, count) == 1
                #else
                let fromKernel = false
                #endif
                if !fromKernel {
                    let ok = RAND_bytes(buffer.baseAddress, Int32(count))
                    precondition(ok == 1, "RAND_bytes failed: \(OpenSSLErrors.drain())")
                }
            }
            initialized = count
        }
    }
}
