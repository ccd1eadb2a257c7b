/// The pseudorandom sampling of FIPS 204 §7.3 that verification needs: the challenge c and the matrix Â.
enum MLDSASampling {
    /// How much SHAKE128 output RejNTTPoly asks for first: 5 blocks, 280 candidates for 256 coefficients (each
    /// candidate is refused with probability 2^13/2^23, so needing more is rarer than 2^-100; it still works).
    static let rejectionSamplingInitialBytes = 5 * SHAKE.shake128.blockByteCount
    /// How much SHAKE256 output SampleInBall asks for first: one block, 8 sign bytes and 128 candidate positions.
    static let challengeInitialBytes = SHAKE.shake256.blockByteCount

    /// FIPS 204 Algorithm 29 (SampleInBall): the challenge c with τ coefficients ±1 and the rest 0, from c̃.
    /// - Parameters:
    ///   - seed: ρ, the whole commitment hash c̃ (λ/4 bytes).
    ///   - tau: τ, at most 64.
    ///   - initialByteCount: The first output length to ask SHAKE256 for (only tests change it).
    /// - Returns: 256 coefficients in {−1, 0, 1}.
    static func sampleInBall(_ seed: [UInt8], tau: Int, initialByteCount: Int = challengeInitialBytes) -> [Int32] {
        precondition(tau >= 1 && tau <= 64)
        var c = [Int32](repeating: 0, count: MLDSARing.n)                  // step 1
        var stream = XOFReader(.shake256, input: seed, initialByteCount: initialByteCount)   // steps 2-3
        var signs: UInt64 = 0                                               // steps 4-5: h, the first 64 bits
        for byte in 0..<8 { signs |= UInt64(stream.readByte()) << UInt64(8 * byte) }
        for i in (MLDSARing.n - tau)..<MLDSARing.n {                        // step 6
            var j = Int(stream.readByte())                                  // step 7
            while j > i { j = Int(stream.readByte()) }                      // steps 8-10
            c[i] = c[j]                                                     // step 11
            c[j] = signs & 1 == 0 ? 1 : -1                                  // step 12: (−1)^h[i+τ−256]
            signs >>= 1
        }
        return c
    }

    /// FIPS 204 Algorithm 30 (RejNTTPoly): a polynomial of T_q with uniform coefficients in [0, q), from a 34-byte seed.
    /// - Parameters:
    ///   - seed: ρ′ = ρ || s || r.
    ///   - out: Where the 256 coefficients go.
    ///   - initialByteCount: The first output length to ask SHAKE128 for (only tests change it).
    static func rejectionSampleNTT(_ seed: [UInt8], into out: UnsafeMutableBufferPointer<Int32>,
                                   initialByteCount: Int = rejectionSamplingInitialBytes) {
        precondition(seed.count == 34 && out.count == MLDSARing.n)
        var stream = XOFReader(.shake128, input: seed, initialByteCount: initialByteCount)   // steps 2-3
        var j = 0                                                           // step 1
        while j < MLDSARing.n {                                             // step 4
            let b0 = stream.readByte(), b1 = stream.readByte(), b2 = stream.readByte()   // step 5
            // Algorithm 14 (CoeffFromThreeBytes): drop the top bit of b2, refuse values ≥ q.
            let candidate = Int32(b2 & 0x7f) << 16 | Int32(b1) << 8 | Int32(b0)
            if candidate < MLDSARing.q {                                    // steps 6-7
                out[j] = candidate
                j += 1                                                      // step 8
            }
        }
    }

    /// FIPS 204 Algorithm 32 (ExpandA): the k×l matrix Â ∈ T_q^(k×l) from ρ, row-major, 256 coefficients per entry.
    static func expandA(_ rho: [UInt8], parameters p: MLDSAParameters) -> [Int32] {
        precondition(rho.count == 32)
        var a = [Int32](repeating: 0, count: p.k * p.l * MLDSARing.n)
        a.withUnsafeMutableBufferPointer { a in
            for r in 0..<p.k {                                              // step 1
                for s in 0..<p.l {                                          // step 2
                    // Step 3: ρ′ ← ρ || IntegerToBytes(s, 1) || IntegerToBytes(r, 1).
                    let seed = rho + [UInt8(truncatingIfNeeded: s), UInt8(truncatingIfNeeded: r)]
                    let entry = (r * p.l + s) * MLDSARing.n
                    rejectionSampleNTT(seed, into: UnsafeMutableBufferPointer(rebasing: a[entry..<(entry + MLDSARing.n)]))   // step 4
                }
            }
        }
        return a
    }
}
