/// The NIST prime curves supported for ECDSA keys.
public enum EllipticCurve: Sendable, Hashable {
    /// NIST P-256 (secp256r1), used by COSE ES256.
    case p256
    /// NIST P-384 (secp384r1), used by COSE ES384.
    case p384
    /// NIST P-521 (secp521r1), used by COSE ES512.
    case p521

    /// The byte length of one affine coordinate: 32, 48 or 66.
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }
}

/// A signature scheme for ``PublicKey/isValidSignature(_:for:algorithm:)``.
public enum SignatureAlgorithm: Sendable, Hashable {
    /// ECDSA with SHA-256; DER-encoded signature (COSE ES256 as WebAuthn sends it).
    case ecdsaSHA256
    /// ECDSA with SHA-384; DER-encoded signature.
    case ecdsaSHA384
    /// ECDSA with SHA-512; DER-encoded signature.
    case ecdsaSHA512
    /// Ed25519 (pure EdDSA); raw 64-byte signature.
    case ed25519
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RS256).
    case rsaPKCS1v15SHA256
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt (PS256, RFC 8230).
    case rsaPSSSHA256
    /// RSASSA-PSS with SHA-384, MGF1-SHA-384 and a 48-byte salt (PS384, RFC 8230).
    case rsaPSSSHA384
    /// RSASSA-PSS with SHA-512, MGF1-SHA-512 and a 64-byte salt (PS512, RFC 8230).
    case rsaPSSSHA512
    /// RSASSA-PKCS1-v1_5 with SHA-1 (RS1; legacy Windows Hello attestation).
    case rsaPKCS1v15SHA1
}
