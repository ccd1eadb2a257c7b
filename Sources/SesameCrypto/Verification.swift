internal import COpenSSL

extension PublicKey {
    /// Checks a signature over a message.
    ///
    /// Never throws and never traps on hostile input: a key type that does not match the algorithm
    /// (for example ``SignatureAlgorithm/ed25519`` with an EC key), malformed DER, or a wrong length
    /// all give `false`. ECDSA digests are not tied to the curve (ES384 over a P-256 key is allowed).
    /// The OpenSSL error queue is left empty.
    /// - Parameters:
    ///   - signature: DER for ECDSA, 64 raw bytes for Ed25519, modulus-sized bytes for RSA.
    ///   - message: The signed bytes (not a digest).
    ///   - algorithm: The signature scheme.
    /// - Returns: `true` only when the signature is valid.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        let md: OpaquePointer?
        // RSASSA-PSS: MGF1 uses the message digest and the salt is as long as the digest (RFC 8230 §2).
        var pssSaltLength: Int32? = nil
        switch (algorithm, kind) {
        case (.ecdsaSHA256, .ellipticCurve): md = FetchedDigest.sha256.pointer
        case (.ecdsaSHA384, .ellipticCurve): md = FetchedDigest.sha384.pointer
        case (.ecdsaSHA512, .ellipticCurve): md = FetchedDigest.sha512.pointer
        case (.ed25519, .ed25519):
            guard signature.count == 64 else { return false }
            md = nil
        case (.rsaPKCS1v15SHA256, .rsa(let bits)), (.rsaPKCS1v15SHA1, .rsa(let bits)), (.rsaPSSSHA256, .rsa(let bits)),
             (.rsaPSSSHA384, .rsa(let bits)), (.rsaPSSSHA512, .rsa(let bits)):
            guard signature.count == (bits + 7) / 8 else { return false }
            switch algorithm {
            case .rsaPKCS1v15SHA1: md = FetchedDigest.sha1.pointer
            case .rsaPSSSHA256: (md, pssSaltLength) = (FetchedDigest.sha256.pointer, 32)
            case .rsaPSSSHA384: (md, pssSaltLength) = (FetchedDigest.sha384.pointer, 48)
            case .rsaPSSSHA512: (md, pssSaltLength) = (FetchedDigest.sha512.pointer, 64)
            default: md = FetchedDigest.sha256.pointer
            }
        default:
            return false
        }
        // ECDSA-Sig-Value for P-521 is at most 139 bytes; anything far larger is not a signature.
        if case .ellipticCurve = kind, signature.isEmpty || signature.count > 160 { return false }
        if let ecKey {
            let digest = switch algorithm {
            case .ecdsaSHA384: Digest.sha384(message)
            case .ecdsaSHA512: Digest.sha512(message)
            default: Digest.sha256(message)
            }
            let result = copenssl_ecdsa_verify(digest, Int32(digest.count), signature, Int32(signature.count), ecKey)
            if result != 1 { OpenSSLErrors.clear() }
            return result == 1
        }

        guard let ctx = EVP_MD_CTX_new() else {
            OpenSSLErrors.clear()
            return false
        }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer? = nil
        guard EVP_DigestVerifyInit(ctx, &pctx, md, nil, pointer) == 1 else {
            OpenSSLErrors.clear()
            return false
        }
        if let pssSaltLength {
            guard let pctx,
                  EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, md) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, pssSaltLength) == 1
            else {
                OpenSSLErrors.clear()
                return false
            }
        }
        let result = signature.withUnsafeBytes { sig in
            message.withUnsafeBytes { msg in
                EVP_DigestVerify(
                    ctx,
                    sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count,
                    msg.baseAddress?.assumingMemoryBound(to: UInt8.self), msg.count)
            }
        }
        if result != 1 { OpenSSLErrors.clear() }
        return result == 1
    }
}
