/// Arithmetic in R_q = Z_q[X]/(X^256 + 1), q = 8380417, and its number-theoretic transform (FIPS 204 §7.5, App. A).
///
/// Coefficients are `Int32`. Multiplication uses Montgomery reduction (FIPS 204 Algorithm 49, in the signed form
/// of the reference implementation) rather than Barrett or `%`: one 64-bit product, one 32-bit product and a shift,
/// with no division and no branch. The price is a factor 2^32 that rides along with every product; the tables
/// below carry it (the NTT's ζ powers are stored times 2^32 mod q, the inverse NTT's final scale is 2^64/256 mod q),
/// so each product made with them lands back in the plain domain. That is the reference implementation's scheme:
/// `ntt` keeps plain values plain, `pointwise` leaves a factor 2^-32, and `inverseNTT` multiplies it away.
///
/// Bounds (what keeps every intermediate inside `Int32` and every Montgomery input inside ±2^31·q):
/// - `ntt` takes coefficients of magnitude below q and returns them below 9q (each of its 8 layers adds at most q);
/// - `pointwise` needs |a·b| < 2^31·q, true for factors below 9q each (81q² < 2^31·q);
/// - `inverseNTT` takes coefficients below q in magnitude (its 8 layers grow them to at most 256q < 2^31) and
///   returns them below q;
/// - `reduce32` takes anything up to 2^31 − 2^22 and returns a representative of magnitude at most 6283008 < q.
///
/// All arithmetic is written with wrapping operators, so no input can make it trap; the bounds above are what make
/// the wrapping never happen. Inputs from outside reach this code only as bit-unpacked values (10-bit t1, z in
/// (−γ1, γ1], challenge coefficients in {−1, 0, 1}) and SHAKE output reduced below q, all within those bounds.
enum MLDSARing {
    /// The modulus q = 2^23 − 2^13 + 1.
    static let q: Int32 = 8380417
    /// Coefficients per polynomial.
    static let n = 256
    /// Dropped bits of t (t = t1·2^d + t0).
    static let d = 13
    /// q^-1 mod 2^32.
    static let qInverse: Int32 = 58728449
    /// 2^64/256 mod q, centred: the inverse NTT's scale by 256^-1, in Montgomery form twice over.
    static let inverseNTTScale: Int32 = 41978

    /// ζ^BitRev8(m) · 2^32 mod q for m = 0..<256, centred in (−q/2, q/2], with ζ = 1753 the 512th root of unity.
    ///
    /// Computed once rather than copied from the standard's table; tests compare entries with the reference values.
    static let zetas: [Int32] = {
        let q64 = Int64(q)
        func power(_ base: Int64, _ exponent: Int) -> Int64 {
            var result: Int64 = 1, base = base % q64, exponent = exponent
            while exponent > 0 {
                if exponent & 1 == 1 { result = result * base % q64 }
                base = base * base % q64
                exponent >>= 1
            }
            return result
        }
        return (0..<256).map { m in
            // FIPS 204 Algorithm 43 (BitRev8) and Appendix B: zetas[m] = ζ^BitRev8(m) mod q.
            let reversed = Int(UInt8(m).bitReversed)
            var value = (power(1753, reversed) << 32) % q64
            if value > q64 / 2 { value -= q64 }
            return Int32(value)   // trap-safe: |value| ≤ q/2
        }
    }()

    /// FIPS 204 Algorithm 49 (MontgomeryReduce): a·2^-32 mod q, for |a| < 2^31·q, with magnitude below q.
    @inline(__always)
    static func montgomeryReduce(_ a: Int64) -> Int32 {
        // Step 1-2: t ← ((a mod 2^32)·QINV) mod 2^32, as a signed 32-bit value.
        let t = Int32(truncatingIfNeeded: a) &* qInverse
        // Step 3: r ← (a − t·q)/2^32; the low 32 bits cancel exactly.
        return Int32(truncatingIfNeeded: (a &- Int64(t) &* Int64(q)) >> 32)
    }

    /// A representative of a mod q of magnitude at most 6283008, for a ≤ 2^31 − 2^22 − 1.
    @inline(__always)
    static func reduce32(_ a: Int32) -> Int32 {
        let t = (a &+ (1 << 22)) >> 23
        return a &- t &* q
    }

    /// a + q when a is negative: maps (−q, q) onto [0, q).
    @inline(__always)
    static func addQIfNegative(_ a: Int32) -> Int32 { a &+ ((a >> 31) & q) }

    /// FIPS 204 Algorithm 41 (NTT), in place, on the 256 coefficients at `w` (steps 1-3, the copy, are not needed).
    static func ntt(_ w: UnsafeMutableBufferPointer<Int32>) {
        precondition(w.count == n)
        var m = 0                                       // step 4
        var length = 128                                // step 5
        while length >= 1 {                             // step 6
            var start = 0                               // step 7
            while start < n {                           // step 8
                m += 1                                  // step 9
                let z = Int64(zetas[m])                 // step 10
                for j in start..<(start + length) {     // step 11
                    let t = montgomeryReduce(z &* Int64(w[j + length]))   // step 12
                    w[j + length] = w[j] &- t           // step 13
                    w[j] = w[j] &+ t                    // step 14
                }
                start += 2 * length                     // step 16
            }
            length /= 2                                 // step 18
        }
    }

    /// FIPS 204 Algorithm 42 (NTT^-1), in place, on the 256 coefficients at `w`; also removes one factor 2^-32.
    static func inverseNTT(_ w: UnsafeMutableBufferPointer<Int32>) {
        precondition(w.count == n)
        var m = 256                                     // step 4
        var length = 1                                  // step 5
        while length < n {                              // step 6
            var start = 0                               // step 7
            while start < n {                           // step 8
                m -= 1                                  // step 9
                let z = -Int64(zetas[m])                // step 10
                for j in start..<(start + length) {     // step 11
                    let t = w[j]                        // step 12
                    w[j] = t &+ w[j + length]           // step 13 (reduced later, see the bounds above)
                    w[j + length] = montgomeryReduce(z &* Int64(t &- w[j + length]))   // steps 14-15
                }
                start += 2 * length                     // step 17
            }
            length *= 2                                 // step 19
        }
        // Steps 21-24: multiply by f = 256^-1 mod q, here in its Montgomery form 2^64/256 mod q.
        let f = Int64(inverseNTTScale)
        for j in 0..<n { w[j] = montgomeryReduce(f &* Int64(w[j])) }
    }

    /// FIPS 204 Algorithm 45 (MultiplyNTT) with Montgomery reduction: a∘b·2^-32, added to (or stored in) `into`.
    @inline(__always)
    static func pointwise(_ a: UnsafeBufferPointer<Int32>, _ b: UnsafeBufferPointer<Int32>,
                          accumulatingInto out: UnsafeMutableBufferPointer<Int32>, subtract: Bool = false) {
        precondition(a.count == n && b.count == n && out.count == n)
        if subtract {
            for i in 0..<n { out[i] = out[i] &- montgomeryReduce(Int64(a[i]) &* Int64(b[i])) }
        } else {
            for i in 0..<n { out[i] = out[i] &+ montgomeryReduce(Int64(a[i]) &* Int64(b[i])) }
        }
    }

    /// FIPS 204 Algorithm 36 (Decompose) of r ∈ [0, q): r = r1·2γ2 + r0 with r0 in (−γ2, γ2], except at the top.
    @inline(__always)
    static func decompose(_ r: Int32, gamma2: Int32) -> (r1: Int32, r0: Int32) {
        let twoGamma2 = 2 * gamma2
        var r0 = r % twoGamma2                          // step 1 (r is already r mod q), then step 2
        if r0 > gamma2 { r0 -= twoGamma2 }              // step 2: r0 ← r+ mod± 2γ2
        if r - r0 == q - 1 { return (0, r0 - 1) }       // steps 3-5
        return ((r - r0) / twoGamma2, r0)               // step 6
    }

    /// FIPS 204 Algorithm 40 (UseHint) of r ∈ [0, q): the corrected high bits, in [0, (q − 1)/(2γ2)).
    @inline(__always)
    static func useHint(_ hint: Bool, _ r: Int32, gamma2: Int32) -> Int32 {
        let m = (q - 1) / (2 * gamma2)                  // step 1
        let (r1, r0) = decompose(r, gamma2: gamma2)     // step 2
        guard hint else { return r1 }                   // step 5
        return r0 > 0 ? (r1 + 1) % m : (r1 - 1 + m) % m // steps 3-4
    }
}

extension UInt8 {
    /// The byte with its bit order reversed (FIPS 204 Algorithm 43, BitRev8).
    var bitReversed: UInt8 {
        var value = self, result: UInt8 = 0
        for _ in 0..<8 {
            result = (result << 1) | (value & 1)
            value >>= 1
        }
        return result
    }
}
