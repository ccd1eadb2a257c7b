import SesameCrypto

/// A COSE algorithm identifier, as registered with IANA and used in `pubKeyCredParams` and COSE keys.
///
/// - SeeAlso: [IANA COSE Algorithms](https://www.iana.org/assignments/cose/cose.xhtml#algorithms)
public struct COSEAlgorithmIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int

    /// Wraps a raw identifier, supported or not.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ECDSA with SHA-256 on P-256.
    public static let es256 = COSEAlgorithmIdentifier(rawValue: -7)
    /// ECDSA with SHA-384 on P-384.
    public static let es384 = COSEAlgorithmIdentifier(rawValue: -35)
    /// ECDSA with SHA-512 on P-521.
    public static let es512 = COSEAlgorithmIdentifier(rawValue: -36)
    /// EdDSA; WebAuthn allows it with Ed25519 only.
    public static let edDSA = COSEAlgorithmIdentifier(rawValue: -8)
    /// Ed25519, the fully specified identifier of RFC 9864.
    public static let ed25519 = COSEAlgorithmIdentifier(rawValue: -19)
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    public static let rs256 = COSEAlgorithmIdentifier(rawValue: -257)
    /// RSASSA-PSS with SHA-256.
    public static let ps256 = COSEAlgorithmIdentifier(rawValue: -37)
    /// RSASSA-PSS with SHA-384.
    public static let ps384 = COSEAlgorithmIdentifier(rawValue: -38)
    /// RSASSA-PSS with SHA-512.
    public static let ps512 = COSEAlgorithmIdentifier(rawValue: -39)
    /// RSASSA-PKCS1-v1_5 with SHA-1, kept for legacy TPM attestation only.
    public static let rs1 = COSEAlgorithmIdentifier(rawValue: -65535)
    /// ML-DSA-44 (FIPS 204, pure, empty context), in an AKP key (RFC 9964).
    public static let mlDSA44 = COSEAlgorithmIdentifier(rawValue: -48)
    /// ML-DSA-65 (FIPS 204, pure, empty context), in an AKP key (RFC 9964).
    public static let mlDSA65 = COSEAlgorithmIdentifier(rawValue: -49)
    /// ML-DSA-87 (FIPS 204, pure, empty context), in an AKP key (RFC 9964).
    public static let mlDSA87 = COSEAlgorithmIdentifier(rawValue: -50)

    /// Every algorithm Sesame can verify: those OpenSSL verifies, then ML-DSA, which Sesame verifies in Swift.
    public static let supported: [COSEAlgorithmIdentifier] = [.es256, .es384, .es512, .edDSA, .ed25519, .rs256, .ps256, .ps384, .ps512, .rs1]
        + [.mlDSA44, .mlDSA65, .mlDSA87]

    public var description: String {
        switch self {
        case .es256: "ES256"
        case .es384: "ES384"
        case .es512: "ES512"
        case .edDSA: "EdDSA"
        case .ed25519: "Ed25519"
        case .rs256: "RS256"
        case .ps256: "PS256"
        case .ps384: "PS384"
        case .ps512: "PS512"
        case .rs1: "RS1"
        case .mlDSA44: "ML-DSA-44"
        case .mlDSA65: "ML-DSA-65"
        case .mlDSA87: "ML-DSA-87"
        default: "COSE(\(rawValue))"
        }
    }

    /// The signature scheme this identifier stands for, or nil when Sesame does not support it.
    var signatureAlgorithm: SignatureAlgorithm? {
        switch self {
        case .es256: .ecdsaSHA256
        case .es384: .ecdsaSHA384
        case .es512: .ecdsaSHA512
        case .edDSA, .ed25519: .ed25519
        case .rs256: .rsaPKCS1v15SHA256
        case .ps256: .rsaPSSSHA256
        case .ps384: .rsaPSSSHA384
        case .ps512: .rsaPSSSHA512
        case .rs1: .rsaPKCS1v15SHA1
        default: nil
        }
    }

    /// The ML-DSA parameter set this identifier stands for, or nil for any other algorithm.
    ///
    /// ML-DSA is verified in Swift (``MLDSAPublicKey``), not through OpenSSL, so it has no ``signatureAlgorithm``.
    var mlDSAParameterSet: MLDSAParameterSet? {
        switch self {
        case .mlDSA44: .mlDSA44
        case .mlDSA65: .mlDSA65
        case .mlDSA87: .mlDSA87
        default: nil
        }
    }

    /// Whether Sesame verifies signatures of this algorithm.
    var isSupported: Bool { signatureAlgorithm != nil || mlDSAParameterSet != nil }
}
