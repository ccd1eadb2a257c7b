internal import COpenSSL

/// Owns one `BIGNUM *`.
final class BigNumber {
    let pointer: OpaquePointer

    /// Parses big-endian bytes.
    init(_ bytes: [UInt8]) throws(CryptoError) {
        let bn = bytes.withUnsafeBytes {
            BN_bin2bn($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32($0.count), nil)
        }
        guard let bn else { throw .openSSL(.internalFailure, "BN_bin2bn") }
        pointer = bn
    }

    deinit { BN_free(pointer) }
}
