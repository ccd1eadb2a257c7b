internal import COpenSSL

/// Keyed message authentication codes.
public enum HMAC {
    /// Computes HMAC-SHA-256.
    /// - Parameters:
    ///   - key: The secret key (any length).
    ///   - message: The bytes to authenticate.
    /// - Returns: The 32-byte tag.
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { out, count in
            var written: UInt32 = 0
            // OpenSSL rejects a NULL key pointer even with length 0, so give it a valid address.
            let dummy: UInt8 = 0
            let result = key.withUnsafeBytes { k in
                message.withUnsafeBytes { m in
                    withUnsafePointer(to: dummy) { d in
                        COpenSSL.HMAC(EVP_sha256(), k.baseAddress ?? UnsafeRawPointer(d), Int32(k.count),
                                      m.baseAddress?.assumingMemoryBound(to: UInt8.self), m.count,
                                      out.baseAddress, &written)
                    }
                }
            }
            precondition(result != nil && written == 32, "HMAC failed: \(OpenSSLErrors.drain())")
            count = 32
        }
    }
}
