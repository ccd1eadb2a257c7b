internal import COpenSSL

/// AES-256-GCM authenticated encryption (NIST SP 800-38D) over OpenSSL's EVP cipher API.
///
/// Keys are 32 bytes, nonces 12 bytes (96 bits, random per message: never reuse one under a key) and tags 16
/// bytes. Associated data is authenticated but not encrypted: bind each ciphertext to where it is stored with it.
public enum AESGCM {
    /// The key size in bytes.
    public static let keySize = 32
    /// The nonce size in bytes.
    public static let nonceSize = 12
    /// The tag size in bytes.
    public static let tagSize = 16

    /// Encrypts `plaintext` under `key` with a fresh random nonce.
    /// - Parameters:
    ///   - plaintext: the bytes to encrypt.
    ///   - key: 32 bytes.
    ///   - associatedData: bytes authenticated with the ciphertext (the same must be given to ``open(_:key:associatedData:)``).
    /// - Returns: nonce (12 bytes), ciphertext (as long as the plaintext) and tag (16 bytes), concatenated.
    /// - Throws: ``CryptoError/Code/invalidInput`` for a key of the wrong size.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try seal(plaintext, key: key, nonce: SecureRandom.bytes(count: nonceSize), associatedData: associatedData)
    }

    /// Encrypts with a caller-chosen nonce, for known-answer tests; production code uses the random-nonce variant.
    /// - Throws: ``CryptoError/Code/invalidInput`` for a key or nonce of the wrong size.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keySize else { throw CryptoError(.invalidInput, "AES-256-GCM key must be 32 bytes") }
        guard nonce.count == nonceSize else { throw CryptoError(.invalidInput, "AES-GCM nonce must be 12 bytes") }
        guard plaintext.count < Int(Int32.max) - 64, associatedData.count < Int(Int32.max) else {
            throw CryptoError(.invalidInput, "AES-GCM input too long")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError(.internalFailure, "EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: tagSize)
        var written: Int32 = 0
        var total = 0
        let ok: Bool = key.withUnsafeBufferPointer { k in
            nonce.withUnsafeBufferPointer { n in
                guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1,
                      EVP_EncryptInit_ex(context, nil, nil, k.baseAddress, n.baseAddress) == 1
                else { return false }
                if !associatedData.isEmpty {
                    let aadOK = associatedData.withUnsafeBufferPointer { a in
                        EVP_EncryptUpdate(context, nil, &written, a.baseAddress, Int32(a.count)) == 1
                    }
                    guard aadOK else { return false }
                }
                let updateOK = plaintext.withUnsafeBufferPointer { p in
                    ciphertext.withUnsafeMutableBufferPointer { c in
                        plaintext.isEmpty || EVP_EncryptUpdate(context, c.baseAddress, &written, p.baseAddress, Int32(p.count)) == 1
                    }
                }
                guard updateOK else { return false }
                total = plaintext.isEmpty ? 0 : Int(written)
                let finalOK = ciphertext.withUnsafeMutableBufferPointer { c in
                    EVP_EncryptFinal_ex(context, c.baseAddress.map { $0 + total }, &written) == 1
                }
                guard finalOK else { return false }
                total += Int(written)
                return tag.withUnsafeMutableBytes { t in
                    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), t.baseAddress) == 1
                }
            }
        }
        guard ok, total == plaintext.count else { throw CryptoError(.internalFailure, "AES-GCM encryption: \(OpenSSLErrors.drain())") }
        return nonce + ciphertext.prefix(total) + tag
    }

    /// Decrypts and authenticates what ``seal(_:key:associatedData:)`` returned.
    /// - Parameters:
    ///   - sealed: nonce, ciphertext and tag.
    ///   - key: 32 bytes.
    ///   - associatedData: the same bytes given when sealing.
    /// - Returns: the plaintext.
    /// - Throws: ``CryptoError/Code/authenticationFailed`` when the key, the associated data or any byte is wrong;
    ///   ``CryptoError/Code/invalidInput`` for a wrong key size or input shorter than a nonce and a tag.
    public static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keySize else { throw CryptoError(.invalidInput, "AES-256-GCM key must be 32 bytes") }
        guard sealed.count >= nonceSize + tagSize, sealed.count < Int(Int32.max), associatedData.count < Int(Int32.max) else {
            throw CryptoError(.invalidInput, "sealed data too short")
        }
        let nonce = Array(sealed.prefix(nonceSize))
        let ciphertext = Array(sealed.dropFirst(nonceSize).dropLast(tagSize))
        var tag = Array(sealed.suffix(tagSize))
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError(.internalFailure, "EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var total = 0
        var setupFailed = false
        let authentic: Bool = key.withUnsafeBufferPointer { k in
            nonce.withUnsafeBufferPointer { n in
                guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                      EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1,
                      EVP_DecryptInit_ex(context, nil, nil, k.baseAddress, n.baseAddress) == 1
                else { setupFailed = true; return false }
                if !associatedData.isEmpty {
                    let aadOK = associatedData.withUnsafeBufferPointer { a in
                        EVP_DecryptUpdate(context, nil, &written, a.baseAddress, Int32(a.count)) == 1
                    }
                    guard aadOK else { setupFailed = true; return false }
                }
                let updateOK = ciphertext.withUnsafeBufferPointer { c in
                    plaintext.withUnsafeMutableBufferPointer { p in
                        ciphertext.isEmpty || EVP_DecryptUpdate(context, p.baseAddress, &written, c.baseAddress, Int32(c.count)) == 1
                    }
                }
                guard updateOK else { setupFailed = true; return false }
                total = ciphertext.isEmpty ? 0 : Int(written)
                let tagOK = tag.withUnsafeMutableBytes { t in
                    EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), t.baseAddress) == 1
                }
                guard tagOK else { setupFailed = true; return false }
                // The tag check happens here: a wrong key, associated data, nonce, ciphertext or tag fails it.
                let finalOK = plaintext.withUnsafeMutableBufferPointer { p in
                    EVP_DecryptFinal_ex(context, p.baseAddress.map { $0 + total }, &written) == 1
                }
                if finalOK { total += Int(written) }
                return finalOK
            }
        }
        guard authentic, total == ciphertext.count else {
            for index in plaintext.indices { plaintext[index] = 0 }
            if setupFailed { throw CryptoError(.internalFailure, "AES-GCM decryption: \(OpenSSLErrors.drain())") }
            _ = OpenSSLErrors.drain()
            throw CryptoError(.authenticationFailed, "AES-GCM tag mismatch")
        }
        return Array(plaintext.prefix(total))
    }
}
