/// An ML-DSA public key (FIPS 204) that verifies pure ML-DSA signatures, in Swift (OpenSSL 3.0 has no ML-DSA).
///
/// Creating the key runs pkDecode and precomputes everything that depends on the key alone: tr = H(pk, 64), the
/// matrix Â = ExpandA(ρ) and NTT(t1·2^d). A verification then costs the signature's own work: sigDecode, μ,
/// SampleInBall, l + 1 NTTs, k·(l + 1) pointwise products, k inverse NTTs, UseHint and one more hash.
///
/// Only SHAKE128 and SHAKE256 come from OpenSSL (`EVP_DigestFinalXOF`); the ring arithmetic, the encodings and the
/// sampling are in this folder, each function with its FIPS 204 algorithm number. Nothing here is secret, so
/// nothing needs to run in constant time.
///
/// - SeeAlso: [FIPS 204](https://doi.org/10.6028/NIST.FIPS.204), Algorithms 3 and 8
public struct MLDSAPublicKey: Sendable {
    /// The parameter set the key belongs to.
    public let parameterSet: MLDSAParameterSet
    /// The encoded key, pkEncode(ρ, t1): exactly ``MLDSAParameterSet/publicKeyByteCount`` bytes.
    public let rawRepresentation: [UInt8]
    /// tr = H(pk, 64).
    private let tr: [UInt8]
    /// Â = ExpandA(ρ), k×l entries of T_q, row-major.
    private let matrix: [Int32]
    /// NTT(t1·2^d), k entries of T_q.
    private let t1Hat: [Int32]

    /// Decodes and checks an encoded ML-DSA public key (FIPS 204 Algorithm 23, pkDecode).
    /// - Parameters:
    ///   - rawRepresentation: pkEncode(ρ, t1), the form COSE's AKP `pub` parameter and X.509 carry.
    ///   - parameterSet: The parameter set the key is for.
    /// - Throws: ``CryptoError/invalidKey`` when the length is not the parameter set's public key length (every
    ///   string of that length is a valid encoding).
    public init(rawRepresentation: [UInt8], parameterSet: MLDSAParameterSet) throws(CryptoError) {
        let p = parameterSet.parameters
        let (rho, t1) = try MLDSAEncoding.pkDecode(rawRepresentation, parameters: p)   // Algorithm 8 step 1
        self.parameterSet = parameterSet
        self.rawRepresentation = rawRepresentation
        matrix = MLDSASampling.expandA(rho, parameters: p)                               // Algorithm 8 step 5
        tr = SHAKE.shake256.hash(rawRepresentation, outputByteCount: 64)                // Algorithm 8 step 6
        // Algorithm 8 step 9, the part that depends on the key: NTT(t1·2^d). t1 < 2^10, so t1·2^13 < 2^23 < q.
        var t1Hat = t1.map { $0 << Int32(MLDSARing.d) }
        t1Hat.withUnsafeMutableBufferPointer { all in
            for i in 0..<p.k { MLDSARing.ntt(UnsafeMutableBufferPointer(rebasing: all[(i * MLDSARing.n)..<((i + 1) * MLDSARing.n)])) }
        }
        self.t1Hat = t1Hat
    }

    /// Whether `signature` is a valid ML-DSA signature of `message` with `context` (FIPS 204 Algorithm 3, ML-DSA.Verify).
    ///
    /// Never throws and never traps: a signature of the wrong length, a malformed hint or a context longer than
    /// 255 bytes all answer `false`. COSE (RFC 9964) and so WebAuthn use the empty context.
    /// - Parameters:
    ///   - signature: sigEncode(c̃, z, h), exactly ``MLDSAParameterSet/signatureByteCount`` bytes.
    ///   - message: The signed bytes M.
    ///   - context: The context string ctx, at most 255 bytes; empty by default.
    /// - Returns: `true` only when the signature verifies.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], context: [UInt8] = []) -> Bool {
        guard context.count <= 255 else { return false }                                 // steps 1-3
        // Step 5: M′ ← BytesToBits(IntegerToBytes(0, 1) || IntegerToBytes(|ctx|, 1) || ctx) || M.
        let prefix: [UInt8] = [0, UInt8(truncatingIfNeeded: context.count)]
        do {
            return try verifyInternal(signature, formattedMessage: [prefix, context, message])   // step 6
        } catch {
            return false
        }
    }

    /// FIPS 204 Algorithm 8 (ML-DSA.Verify_internal): verifies σ over M′, the concatenation of `formattedMessage`.
    ///
    /// For known-answer tests that give M′ directly (internal; tests reach it with `@testable import`); the API is
    /// ``isValidSignature(_:for:context:)``.
    /// - Returns: Whether the signature verifies.
    /// - Throws: ``CryptoError/invalidSignatureEncoding`` when σ does not decode (wrong length, malformed hint):
    ///   the standard's `false` at steps 2-4, told apart for tests.
    func verifyInternal(_ signature: [UInt8], formattedMessage: [[UInt8]]) throws(CryptoError) -> Bool {
        let p = parameterSet.parameters
        let n = MLDSARing.n
        let sigma = try MLDSASignature(signature, parameters: p)                        // steps 2-4
        // Step 12's first test, made first because it is cheap: ‖z‖∞ < γ1 − β.
        let bound = UInt32(truncatingIfNeeded: p.gamma1 - p.beta)
        guard sigma.z.allSatisfy({ $0.magnitude < bound }) else { return false }
        let mu = SHAKE.shake256.hash(parts: [tr] + formattedMessage, outputByteCount: 64)     // step 7
        var cHat = MLDSASampling.sampleInBall(sigma.commitmentHash, tau: p.tau)         // step 8

        // Step 9: w′Approx ← NTT^-1(Â∘NTT(z) − NTT(c)∘NTT(t1·2^d)).
        var zHat = sigma.z
        var w = [Int32](repeating: 0, count: p.k * n)
        cHat.withUnsafeMutableBufferPointer { cHat in
            zHat.withUnsafeMutableBufferPointer { zHat in
                MLDSARing.ntt(cHat)
                for s in 0..<p.l { MLDSARing.ntt(UnsafeMutableBufferPointer(rebasing: zHat[(s * n)..<((s + 1) * n)])) }
                matrix.withUnsafeBufferPointer { a in
                    t1Hat.withUnsafeBufferPointer { t1Hat in
                        w.withUnsafeMutableBufferPointer { w in
                            for r in 0..<p.k {
                                let row = UnsafeMutableBufferPointer(rebasing: w[(r * n)..<((r + 1) * n)])
                                for s in 0..<p.l {
                                    let entry = (r * p.l + s) * n
                                    MLDSARing.pointwise(UnsafeBufferPointer(rebasing: a[entry..<(entry + n)]),
                                                        UnsafeBufferPointer(rebasing: zHat[(s * n)..<((s + 1) * n)]),
                                                        accumulatingInto: row)
                                }
                                MLDSARing.pointwise(UnsafeBufferPointer(cHat), UnsafeBufferPointer(rebasing: t1Hat[(r * n)..<((r + 1) * n)]),
                                                    accumulatingInto: row, subtract: true)
                                // |row| < (l + 1)·q ≤ 8q here; reduce below q for the inverse NTT, then to [0, q).
                                for j in 0..<n { row[j] = MLDSARing.reduce32(row[j]) }
                                MLDSARing.inverseNTT(row)
                                for j in 0..<n { row[j] = MLDSARing.addQIfNegative(row[j]) }
                            }
                        }
                    }
                }
            }
        }

        // Step 10: w1′ ← UseHint(h, w′Approx).
        for i in 0..<(p.k * n) { w[i] = MLDSARing.useHint(sigma.hint[i], w[i], gamma2: p.gamma2) }
        // Step 11: c̃′ ← H(μ || w1Encode(w1′), λ/4).
        let commitmentHash = SHAKE.shake256.hash(parts: [mu, MLDSAEncoding.w1Encode(w, parameters: p)],
                                                 outputByteCount: p.commitmentHashByteCount)
        // Step 12: the norm test passed above; c̃ = c̃′.
        return commitmentHash == sigma.commitmentHash
    }
}
