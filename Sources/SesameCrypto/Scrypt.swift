internal import COpenSSL

/// The scrypt memory-hard key derivation function (RFC 7914), through OpenSSL's `EVP_KDF` "SCRYPT".
public enum Scrypt {
    /// The cost parameters: memory use is about `128 * r * n` bytes.
    public struct Parameters: Sendable, Hashable {
        /// The CPU/memory cost; a power of two greater than 1.
        public var n: UInt64
        /// The block size.
        public var r: UInt64
        /// The parallelization factor.
        public var p: UInt64

        /// Creates parameters; ``Scrypt/derive(password:salt:parameters:length:)`` checks them.
        public init(n: UInt64, r: UInt64, p: UInt64) {
            self.n = n
            self.r = r
            self.p = p
        }

        /// For interactive password checks: N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds).
        public static let interactive = Parameters(n: 1 << 15, r: 8, p: 1)
    }

    /// Derives `length` bytes from `password` and `salt`.
    /// - Parameters:
    ///   - password: The password bytes (may be empty).
    ///   - salt: The salt bytes (may be empty).
    ///   - parameters: The cost; `n` must be a power of two above 1, `r` and `p` positive, memory at most 1 GiB.
    ///   - length: The output length, 1 to 1024 bytes.
    /// - Returns: The derived key.
    /// - Throws: ``CryptoError/invalidInput`` for unusable parameters, ``CryptoError/internalFailure`` if OpenSSL fails.
    public static func derive(password: [UInt8], salt: [UInt8], parameters: Parameters, length: Int) throws(CryptoError) -> [UInt8] {
        let n = parameters.n, r = parameters.r, p = parameters.p
        guard n > 1, n & (n - 1) == 0, r > 0, p > 0, (1...1024).contains(length),
              r <= 1 << 10, p <= 1 << 10, n <= 1 << 24, 128 * r * n <= 1 << 30
        else { throw CryptoError(.invalidInput, "scrypt parameters out of range") }
        guard let kdf = EVP_KDF_fetch(nil, copenssl_kdf_name_scrypt(), nil) else {
            throw CryptoError(.internalFailure, "EVP_KDF_fetch(SCRYPT): \(OpenSSLErrors.drain())")
        }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw CryptoError(.internalFailure, "EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }

        // OSSL_PARAM keeps pointers to the values, so they live in one allocation until derive returns.
        let values = UnsafeMutablePointer<UInt64>.allocate(capacity: 4)
        defer { values.deallocate() }
        values[0] = n
        values[1] = r
        values[2] = p
        values[3] = 128 * r * n + 128 * r * p + (1 << 20)  // maxmem: what these parameters need, plus slack
        // OpenSSL wants a non-NULL buffer even for empty inputs.
        let passwordBytes = password.isEmpty ? [0] : password
        let saltBytes = salt.isEmpty ? [0] : salt
        var output = [UInt8](repeating: 0, count: length)
        let status = passwordBytes.withUnsafeBytes { pw in
            saltBytes.withUnsafeBytes { s in
                output.withUnsafeMutableBytes { out in
                    var params = [
                        OSSL_PARAM_construct_octet_string(copenssl_kdf_param_password(), UnsafeMutableRawPointer(mutating: pw.baseAddress), password.count),
                        OSSL_PARAM_construct_octet_string(copenssl_kdf_param_salt(), UnsafeMutableRawPointer(mutating: s.baseAddress), salt.count),
                        OSSL_PARAM_construct_uint64(copenssl_kdf_param_scrypt_n(), values),
                        OSSL_PARAM_construct_uint64(copenssl_kdf_param_scrypt_r(), values + 1),
                        OSSL_PARAM_construct_uint64(copenssl_kdf_param_scrypt_p(), values + 2),
                        OSSL_PARAM_construct_uint64(copenssl_kdf_param_scrypt_maxmem(), values + 3),
                        OSSL_PARAM_construct_end(),
                    ]
                    return EVP_KDF_derive(context, out.baseAddress?.assumingMemoryBound(to: UInt8.self), length, &params)
                }
            }
        }
        guard status == 1 else { throw CryptoError(.internalFailure, "EVP_KDF_derive(SCRYPT): \(OpenSSLErrors.drain())") }
        return output
    }
}
