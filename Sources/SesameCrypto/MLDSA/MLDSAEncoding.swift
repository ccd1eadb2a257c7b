/// The byte encodings of FIPS 204 §7.1-7.2 that verification reads: public keys, signatures, hints and w1.
///
/// Bits are packed little-endian throughout (FIPS 204 Algorithms 9-13): coefficient i takes the bits after those of
/// coefficient i − 1, least significant first, and bytes fill from their least significant bit.
enum MLDSAEncoding {
    /// FIPS 204 Algorithm 18 (SimpleBitUnpack) for 256 coefficients of `bits` bits each, read from
    /// `bytes[offset ..< offset + 32·bits]` into `out` (256 entries).
    ///
    /// The caller has checked that the bytes exist; every `bits`-bit value is a valid output, so nothing here can fail.
    static func simpleBitUnpack(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int, bits: Int, into out: UnsafeMutableBufferPointer<Int32>) {
        precondition(bits >= 1 && bits <= 24 && out.count == MLDSARing.n && offset >= 0 && offset + 32 * bits <= bytes.count)
        let mask: UInt64 = (1 << UInt64(bits)) - 1
        var accumulator: UInt64 = 0, available = 0, next = offset
        for i in 0..<MLDSARing.n {
            while available < bits {
                accumulator |= UInt64(bytes[next]) << UInt64(available)
                next += 1
                available += 8
            }
            out[i] = Int32(truncatingIfNeeded: accumulator & mask)
            accumulator >>= UInt64(bits)
            available -= bits
        }
    }

    /// FIPS 204 Algorithm 16 (SimpleBitPack) of 256 coefficients in [0, 2^bits), appended to `out` (32·bits bytes).
    static func simpleBitPack(_ w: UnsafeBufferPointer<Int32>, bits: Int, into out: inout [UInt8]) {
        precondition(bits >= 1 && bits <= 24 && w.count == MLDSARing.n)
        var accumulator: UInt64 = 0, filled = 0
        for coefficient in w {
            accumulator |= UInt64(truncatingIfNeeded: coefficient) << UInt64(filled)
            filled += bits
            while filled >= 8 {
                out.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator >>= 8
                filled -= 8
            }
        }
    }

    /// FIPS 204 Algorithm 28 (w1Encode): the k polynomials of w1, each SimpleBitPack'ed with (q − 1)/(2γ2) − 1.
    static func w1Encode(_ w1: [Int32], parameters: MLDSAParameters) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32 * parameters.k * parameters.w1Bits)
        w1.withUnsafeBufferPointer { all in
            for i in 0..<parameters.k {                                     // step 2
                let polynomial = UnsafeBufferPointer(rebasing: all[(i * MLDSARing.n)..<((i + 1) * MLDSARing.n)])
                simpleBitPack(polynomial, bits: parameters.w1Bits, into: &out)   // step 3
            }
        }
        return out
    }

    /// FIPS 204 Algorithm 23 (pkDecode): ρ and t1 from an encoded public key.
    /// - Throws: ``CryptoError/invalidKey`` when the key is not exactly pkEncode's length. Every string of that
    ///   length decodes (t1's 10-bit coefficients take all their values), so there is nothing else to refuse.
    static func pkDecode(_ pk: [UInt8], parameters: MLDSAParameters) throws(CryptoError) -> (rho: [UInt8], t1: [Int32]) {
        guard pk.count == parameters.publicKeyByteCount else {
            throw CryptoError(.invalidKey, "ML-DSA public key must be \(parameters.publicKeyByteCount) bytes, got \(pk.count)")
        }
        let rho = Array(pk[0..<32])                                         // step 1
        var t1 = [Int32](repeating: 0, count: parameters.k * MLDSARing.n)
        pk.withUnsafeBufferPointer { bytes in
            t1.withUnsafeMutableBufferPointer { t1 in
                for i in 0..<parameters.k {                                 // steps 2-4
                    let polynomial = UnsafeMutableBufferPointer(rebasing: t1[(i * MLDSARing.n)..<((i + 1) * MLDSARing.n)])
                    simpleBitUnpack(bytes, offset: 32 + 32 * MLDSAParameters.t1Bits * i, bits: MLDSAParameters.t1Bits,
                                    into: polynomial)
                }
            }
        }
        return (rho, t1)
    }
}

/// A decoded ML-DSA signature σ = (c̃, z, h): FIPS 204 Algorithm 27 (sigDecode) with Algorithm 21 (HintBitUnpack).
///
/// Decoding refuses a wrong length and every malformed hint; it does not bound z, which Verify_internal checks
/// (‖z‖∞ < γ1 − β) as its last step does: an encoding may carry z = γ1, which decodes but never verifies.
struct MLDSASignature: Sendable {
    /// The commitment hash c̃, λ/4 bytes.
    let commitmentHash: [UInt8]
    /// z: l polynomials of 256 coefficients each, in [−γ1 + 1, γ1], flattened.
    let z: [Int32]
    /// h: k polynomials of 256 coefficients in {0, 1}, flattened; at most ω of them are 1.
    let hint: [Bool]

    /// Decodes `signature` for `parameterSet`.
    /// - Throws: ``CryptoError/invalidSignatureEncoding`` for a wrong length or a malformed hint (HintBitUnpack's ⊥).
    init(rawRepresentation signature: [UInt8], parameterSet: MLDSAParameterSet) throws(CryptoError) {
        try self.init(signature, parameters: parameterSet.parameters)
    }

    init(_ sigma: [UInt8], parameters p: MLDSAParameters) throws(CryptoError) {
        guard sigma.count == p.signatureByteCount else {
            throw CryptoError(.invalidSignatureEncoding, "ML-DSA signature must be \(p.signatureByteCount) bytes, got \(sigma.count)")
        }
        let zStart = p.commitmentHashByteCount, zPolynomialBytes = 32 * p.zBits
        let hintStart = zStart + p.l * zPolynomialBytes
        // Step 1: (c̃, x, y) ← σ split at λ/4 and at λ/4 + 32·l·(1 + bitlen(γ1 − 1)).
        commitmentHash = Array(sigma[0..<zStart])
        var z = [Int32](repeating: 0, count: p.l * MLDSARing.n)
        sigma.withUnsafeBufferPointer { bytes in
            z.withUnsafeMutableBufferPointer { z in
                for i in 0..<p.l {                                          // steps 2-4
                    let polynomial = UnsafeMutableBufferPointer(rebasing: z[(i * MLDSARing.n)..<((i + 1) * MLDSARing.n)])
                    // Algorithm 19 (BitUnpack) with a = γ1 − 1, b = γ1: z_j = b − SimpleBitUnpack value.
                    MLDSAEncoding.simpleBitUnpack(bytes, offset: zStart + i * zPolynomialBytes, bits: p.zBits, into: polynomial)
                    for j in 0..<MLDSARing.n { polynomial[j] = p.gamma1 &- polynomial[j] }
                }
            }
        }
        self.z = z
        // Step 5: h ← HintBitUnpack(y), which may be ⊥ (Algorithm 8 step 3 then returns false).
        hint = try Self.hintBitUnpack(sigma[hintStart...], parameters: p)
    }

    /// FIPS 204 Algorithm 21 (HintBitUnpack): y holds the positions of the 1s (ω bytes, zero-padded), then for each
    /// polynomial i the running count of positions so far (k bytes).
    ///
    /// Returns ⊥ (throws) unless the encoding is the unique one HintBitPack makes: the counts never decrease and
    /// never pass ω, the positions within one polynomial strictly increase, and the unused bytes are zero. Without
    /// this, one signature would have several encodings (strong unforgeability).
    static func hintBitUnpack(_ y: ArraySlice<UInt8>, parameters p: MLDSAParameters) throws(CryptoError) -> [Bool] {
        precondition(y.count == p.omega + p.k)
        let y = Array(y)                                                    // index from 0 as the standard does
        var h = [Bool](repeating: false, count: p.k * MLDSARing.n)          // step 1
        var index = 0                                                       // step 2
        for i in 0..<p.k {                                                  // step 3
            let count = Int(y[p.omega + i])
            guard count >= index, count <= p.omega else {                   // step 4
                throw CryptoError(.invalidSignatureEncoding, "ML-DSA hint count \(count) of polynomial \(i) is out of order or above ω")
            }
            let first = index                                               // step 5
            while index < count {                                           // step 6
                if index > first, y[index - 1] >= y[index] {                // steps 7-8
                    throw CryptoError(.invalidSignatureEncoding, "ML-DSA hint positions of polynomial \(i) do not increase")
                }
                h[i * MLDSARing.n + Int(y[index])] = true                   // step 9 (a byte is always < 256)
                index += 1                                                  // step 10
            }
        }
        for i in index..<p.omega where y[i] != 0 {                          // steps 11-12
            throw CryptoError(.invalidSignatureEncoding, "ML-DSA hint padding byte \(i) is not zero")
        }
        return h
    }
}
