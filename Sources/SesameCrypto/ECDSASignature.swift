internal import COpenSSL

/// Conversions between DER (X9.62 / WebAuthn) and raw `r || s` (JWS, RFC 7518) ECDSA signatures.
public enum ECDSASignature {
    /// Converts a DER `ECDSA-Sig-Value` to fixed-width `r || s`.
    /// - Parameters:
    ///   - derEncoded: The DER signature; it must be canonical and have no trailing bytes.
    ///   - curve: The curve, which fixes the width of `r` and `s`.
    /// - Returns: `2 * curve.coordinateByteCount` bytes.
    /// - Throws: ``CryptoError/invalidSignatureEncoding`` for malformed DER or out-of-range integers.
    public static func rawRepresentation(derEncoded: [UInt8], curve: EllipticCurve) throws(CryptoError) -> [UInt8] {
        guard !derEncoded.isEmpty, derEncoded.count <= 160 else {
            throw CryptoError(.invalidSignatureEncoding, "DER ECDSA signature has \(derEncoded.count) bytes")
        }
        var consumed = 0
        let parsed: OpaquePointer? = derEncoded.withUnsafeBytes { buffer in
            let start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var cursor: UnsafePointer<UInt8>? = start
            let sig = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            consumed = cursor.map { $0 - start } ?? 0
            return sig
        }
        guard let sig = parsed else { throw .openSSL(.invalidSignatureEncoding, "d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(sig) }
        guard consumed == derEncoded.count else {
            throw CryptoError(.invalidSignatureEncoding, "\(derEncoded.count - consumed) trailing bytes")
        }
        // Reject BER or non-minimal encodings: the canonical re-encoding must match the input.
        guard try derBytes(sig) == derEncoded else {
            throw CryptoError(.invalidSignatureEncoding, "non-canonical DER")
        }
        let size = curve.coordinateByteCount
        var raw = [UInt8](repeating: 0, count: 2 * size)
        guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig),
              BN_is_negative(r) == 0, BN_is_negative(s) == 0,
              raw.withUnsafeMutableBufferPointer({ buffer in
                  BN_bn2binpad(r, buffer.baseAddress, Int32(size)) == Int32(size)
                      && BN_bn2binpad(s, buffer.baseAddress! + size, Int32(size)) == Int32(size)
              })
        else {
            OpenSSLErrors.clear()
            throw CryptoError(.invalidSignatureEncoding, "r or s does not fit \(size) bytes")
        }
        return raw
    }

    /// Converts fixed-width `r || s` to a DER `ECDSA-Sig-Value`.
    /// - Parameters:
    ///   - raw: Exactly `2 * curve.coordinateByteCount` bytes.
    ///   - curve: The curve, which fixes the width of `r` and `s`.
    /// - Returns: The DER signature.
    /// - Throws: ``CryptoError/invalidSignatureEncoding`` for a wrong length or a zero `r` or `s`.
    public static func derRepresentation(raw: [UInt8], curve: EllipticCurve) throws(CryptoError) -> [UInt8] {
        let size = curve.coordinateByteCount
        guard raw.count == 2 * size else {
            throw CryptoError(.invalidSignatureEncoding, "raw ECDSA signature must be \(2 * size) bytes, got \(raw.count)")
        }
        let r = try BigNumber(Array(raw[..<size]))
        let s = try BigNumber(Array(raw[size...]))
        guard BN_is_zero(r.pointer) == 0, BN_is_zero(s.pointer) == 0 else {
            throw CryptoError(.invalidSignatureEncoding, "r or s is zero")
        }
        guard let sig = ECDSA_SIG_new() else { throw .openSSL(.internalFailure, "ECDSA_SIG_new") }
        defer { ECDSA_SIG_free(sig) }
        // ECDSA_SIG_set0 takes ownership of the BIGNUMs, so hand it duplicates.
        guard let rCopy = BN_dup(r.pointer) else { throw .openSSL(.internalFailure, "BN_dup") }
        guard let sCopy = BN_dup(s.pointer) else {
            BN_free(rCopy)
            throw .openSSL(.internalFailure, "BN_dup")
        }
        guard ECDSA_SIG_set0(sig, rCopy, sCopy) == 1 else {
            BN_free(rCopy)
            BN_free(sCopy)
            throw .openSSL(.internalFailure, "ECDSA_SIG_set0")
        }
        return try derBytes(sig)
    }

    /// DER-encodes an `ECDSA_SIG`.
    private static func derBytes(_ sig: OpaquePointer) throws(CryptoError) -> [UInt8] {
        let length = i2d_ECDSA_SIG(sig, nil)
        guard length > 0 else { throw .openSSL(.internalFailure, "i2d_ECDSA_SIG") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        guard written == length else { throw .openSSL(.internalFailure, "i2d_ECDSA_SIG") }
        return out
    }
}
