internal import COpenSSL

/// Compares two byte strings in time that depends only on their length.
/// - Parameters:
///   - a: The first byte string.
///   - b: The second byte string.
/// - Returns: `true` when both have the same length and contents; `false` for different lengths.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 }
    }
}
