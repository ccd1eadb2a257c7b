/// An ML-DSA parameter set of FIPS 204 (Table 1), which fixes key and signature sizes and security strength.
///
/// - SeeAlso: [FIPS 204 §4](https://doi.org/10.6028/NIST.FIPS.204)
public enum MLDSAParameterSet: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ML-DSA-44: NIST security category 2.
    case mlDSA44
    /// ML-DSA-65: NIST security category 3.
    case mlDSA65
    /// ML-DSA-87: NIST security category 5.
    case mlDSA87

    /// The length of an encoded public key (FIPS 204 Table 2): 1312, 1952 or 2592 bytes.
    public var publicKeyByteCount: Int { parameters.publicKeyByteCount }

    /// The length of an encoded signature (FIPS 204 Table 2): 2420, 3309 or 4627 bytes.
    public var signatureByteCount: Int { parameters.signatureByteCount }

    /// The standard's name, such as `ML-DSA-65`.
    public var description: String {
        switch self {
        case .mlDSA44: "ML-DSA-44"
        case .mlDSA65: "ML-DSA-65"
        case .mlDSA87: "ML-DSA-87"
        }
    }

    /// The numbers FIPS 204 Table 1 gives this parameter set.
    var parameters: MLDSAParameters {
        switch self {
        case .mlDSA44: .mlDSA44
        case .mlDSA65: .mlDSA65
        case .mlDSA87: .mlDSA87
        }
    }
}

/// The constants of one ML-DSA parameter set (FIPS 204 Table 1) and the sizes that follow from them.
struct MLDSAParameters: Sendable {
    /// Rows of the matrix A (and length of t1, w and h).
    let k: Int
    /// Columns of A (and length of z).
    let l: Int
    /// Number of ±1 coefficients in the challenge c.
    let tau: Int
    /// Collision strength of c̃, in bits.
    let lambda: Int
    /// Range of the coefficients of y, and so of z.
    let gamma1: Int32
    /// Low-order rounding range.
    let gamma2: Int32
    /// Bound of the secret coefficients.
    let eta: Int32
    /// Maximum number of 1s in the hint h.
    let omega: Int

    static let mlDSA44 = MLDSAParameters(k: 4, l: 4, tau: 39, lambda: 128, gamma1: 1 << 17, gamma2: (MLDSARing.q - 1) / 88,
                                         eta: 2, omega: 80)
    static let mlDSA65 = MLDSAParameters(k: 6, l: 5, tau: 49, lambda: 192, gamma1: 1 << 19, gamma2: (MLDSARing.q - 1) / 32,
                                         eta: 4, omega: 55)
    static let mlDSA87 = MLDSAParameters(k: 8, l: 7, tau: 60, lambda: 256, gamma1: 1 << 19, gamma2: (MLDSARing.q - 1) / 32,
                                         eta: 2, omega: 75)

    /// β = τ·η, the bound that ‖z‖∞ must stay below γ1 − β of.
    var beta: Int32 { Int32(tau) * eta }   // trap-safe: τ ≤ 60 and η ≤ 4 are the constants above
    /// The length of c̃: λ/4 bytes.
    var commitmentHashByteCount: Int { lambda / 4 }
    /// Bits per coefficient of z: bitlen(2γ1 − 1), 18 or 20.
    var zBits: Int { gamma1 == 1 << 17 ? 18 : 20 }
    /// Bits per coefficient of w1: bitlen((q − 1)/(2γ2) − 1), 6 or 4.
    var w1Bits: Int { gamma2 == (MLDSARing.q - 1) / 88 ? 6 : 4 }
    /// Bits per coefficient of t1: bitlen(q − 1) − d = 10.
    static let t1Bits = 10
    /// pkEncode's length: 32 + 32·k·(bitlen(q − 1) − d) bytes.
    var publicKeyByteCount: Int { 32 + 32 * k * Self.t1Bits }
    /// sigEncode's length: λ/4 + 32·l·(1 + bitlen(γ1 − 1)) + ω + k bytes.
    var signatureByteCount: Int { commitmentHashByteCount + 32 * l * zBits + omega + k }
}
