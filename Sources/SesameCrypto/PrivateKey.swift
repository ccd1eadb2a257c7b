internal import COpenSSL

/// A signing key (P-256 ECDSA or Ed25519), used for tests, tokens and server-side signatures.
///
/// `@unchecked Sendable` is safe because the wrapped `EVP_PKEY` is immutable after `init` and each
/// signature uses its own `EVP_MD_CTX`.
public final class PrivateKey: @unchecked Sendable {
    /// The supported private key types.
    public enum Kind: Sendable, Hashable {
        /// ECDSA on NIST P-256; signs with ECDSA-SHA-256 (ES256).
        case p256
        /// Ed25519 (EdDSA).
        case ed25519
    }

    /// The key type.
    public let kind: Kind
    /// The matching public key.
    public let publicKey: PublicKey
    /// The owned `EVP_PKEY *`; freed in `deinit`.
    private let pointer: OpaquePointer

    /// Takes ownership of `pointer` after deriving its public key.
    private init(owning pointer: OpaquePointer, kind: Kind) throws(CryptoError) {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw .openSSL(.invalidKey, "i2d_PUBKEY") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { throw .openSSL(.invalidKey, "i2d_PUBKEY") }
        self.publicKey = try PublicKey(derEncodedSubjectPublicKeyInfo: der)
        self.pointer = pointer
        self.kind = kind
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Generates a new random key.
    /// - Parameter kind: The key type.
    /// - Returns: The new key.
    public static func generate(_ kind: Kind) -> PrivateKey {
        let ctx: OpaquePointer?
        switch kind {
        case .p256: ctx = EVP_PKEY_CTX_new_from_name(nil, copenssl_name_ec(), nil)
        case .ed25519: ctx = EVP_PKEY_CTX_new_from_name(nil, copenssl_name_ed25519(), nil)
        }
        guard let ctx else { preconditionFailure("EVP_PKEY_CTX_new_from_name failed: \(OpenSSLErrors.drain())") }
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_keygen_init(ctx) == 1, "EVP_PKEY_keygen_init failed: \(OpenSSLErrors.drain())")
        if kind == .p256 {
            precondition(EVP_PKEY_CTX_set_group_name(ctx, copenssl_group_p256()) == 1, "set_group_name failed: \(OpenSSLErrors.drain())")
        }
        var pkey: OpaquePointer? = nil
        precondition(EVP_PKEY_generate(ctx, &pkey) == 1 && pkey != nil, "EVP_PKEY_generate failed: \(OpenSSLErrors.drain())")
        do {
            return try PrivateKey(owning: pkey!, kind: kind)
        } catch {
            EVP_PKEY_free(pkey)
            preconditionFailure("fresh key unusable: \(error.debugDescription)")
        }
    }

    /// Parses a PEM private key: PKCS#8 ("PRIVATE KEY") or SEC1 ("EC PRIVATE KEY").
    /// - Parameter pemEncoded: The PEM text (unencrypted).
    /// - Throws: ``CryptoError/invalidKey`` when the text is not a P-256 or Ed25519 private key.
    public convenience init(pemEncoded: String) throws(CryptoError) {
        let bio = try MemoryBIO(reading: pemEncoded)
        guard let pkey = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw .openSSL(.invalidKey, "PEM_read_bio_PrivateKey")
        }
        let kind: Kind
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_ED25519:
            kind = .ed25519
        case EVP_PKEY_EC where Self.isP256(pkey):
            kind = .p256
        default:
            EVP_PKEY_free(pkey)
            OpenSSLErrors.clear()
            throw CryptoError(.invalidKey, "private key is neither P-256 nor Ed25519")
        }
        do {
            try self.init(owning: pkey, kind: kind)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    /// Whether an EC key is on P-256.
    private static func isP256(_ pkey: OpaquePointer) -> Bool {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard name.withUnsafeMutableBufferPointer({ EVP_PKEY_get_group_name(pkey, $0.baseAddress, $0.count, &length) }) == 1 else {
            return false
        }
        return OBJ_sn2nid(name) == NID_X9_62_prime256v1
    }

    /// The key as unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    public var pemRepresentation: String {
        let bio = MemoryBIO()
        let ok = PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil)
        precondition(ok == 1, "PEM_write_bio_PKCS8PrivateKey failed: \(OpenSSLErrors.drain())")
        return bio.readAll()
    }

    /// Signs a message.
    /// - Parameter message: The bytes to sign (not a digest).
    /// - Returns: For P-256 a DER ECDSA-SHA-256 signature; for Ed25519 the raw 64-byte signature.
    public func signature(for message: [UInt8]) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        let md = kind == .p256 ? FetchedDigest.sha256.pointer : nil
        precondition(EVP_DigestSignInit(ctx, nil, md, nil, pointer) == 1, "EVP_DigestSignInit failed: \(OpenSSLErrors.drain())")
        return message.withUnsafeBytes { msg in
            let input = msg.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var length = 0
            precondition(EVP_DigestSign(ctx, nil, &length, input, msg.count) == 1, "EVP_DigestSign failed: \(OpenSSLErrors.drain())")
            return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
                var written = length
                precondition(EVP_DigestSign(ctx, buffer.baseAddress, &written, input, msg.count) == 1,
                             "EVP_DigestSign failed: \(OpenSSLErrors.drain())")
                count = written
            }
        }
    }
}
