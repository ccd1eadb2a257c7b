import COpenSSL

/// The ceiling: one signature verification straight through OpenSSL's EVP API, with the key already parsed,
/// exactly what any verifier must do at the least.
final class RawVerifier {
    private let key: OpaquePointer
    private let digest: OpaquePointer?

    /// Wraps a DER SubjectPublicKeyInfo; `digest` is nil for Ed25519 (one-shot, no digest).
    init(subjectPublicKeyInfo der: [UInt8], digest: OpaquePointer?) {
        var pointer: UnsafePointer<UInt8>? = nil
        key = der.withUnsafeBufferPointer { buffer in
            pointer = buffer.baseAddress
            return d2i_PUBKEY(nil, &pointer, buffer.count)!
        }
        self.digest = digest
    }

    deinit { EVP_PKEY_free(key) }

    /// Verifies; traps on a failed verification, since the benchmark data is always valid.
    func verify(_ signature: [UInt8], _ message: [UInt8]) {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        let ok = EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        precondition(ok, "ceiling verification failed")
    }
}

/// RSA keys for the RS256 benchmark, made with OpenSSL directly (Sesame itself never signs with RSA).
final class RawRSAKey {
    let key: OpaquePointer

    init(bits: Int32) {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil)
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer? = nil
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits) == 1
                     && EVP_PKEY_keygen(context, &key) == 1)
        self.key = key!
    }

    deinit { EVP_PKEY_free(key) }

    /// Big-endian bytes of the parameter `name` ("n" or "e").
    func parameter(_ name: String) -> [UInt8] {
        var bn: OpaquePointer? = nil
        precondition(EVP_PKEY_get_bn_param(key, name, &bn) == 1)
        defer { BN_free(bn) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        BN_bn2bin(bn, &bytes)
        return bytes
    }

    var subjectPublicKeyInfo: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(key, &out)
        defer { copenssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256.
    func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1
                     && EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        return Array(signature.prefix(length))
    }
}
