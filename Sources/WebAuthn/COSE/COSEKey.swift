import SesameCrypto

/// A credential public key in COSE_Key form, checked and ready to verify signatures.
///
/// Parsing accepts EC2 keys on P-256, P-384 and P-521, OKP keys on Ed25519 and RSA keys, each with an `alg`
/// consistent with its key type and curve; EC points must lie on their curve. It also accepts AKP keys (RFC 9964)
/// for ML-DSA-44, -65 and -87, whose `pub` must be exactly the parameter set's public key length.
///
/// - SeeAlso: [RFC 9052 §7](https://www.rfc-editor.org/rfc/rfc9052#section-7),
///   [WebAuthn §5.8.5](https://www.w3.org/TR/webauthn-3/#sctn-alg-identifier),
///   [RFC 9964 §4](https://www.rfc-editor.org/rfc/rfc9964) (the AKP key type)
public struct COSEKey: Sendable {
    /// The algorithm the key signs with.
    public let algorithm: COSEAlgorithmIdentifier
    /// The key as OpenSSL holds it; nil for an ML-DSA key, which OpenSSL 3.0 cannot hold (see ``mlDSAPublicKey``).
    public let publicKey: PublicKey?
    /// The ML-DSA key of an AKP COSE_Key; nil for every other key type.
    public let mlDSAPublicKey: MLDSAPublicKey?
    /// The exact COSE_Key bytes this key was parsed from (what a relying party stores).
    public let cborEncoded: [UInt8]

    private enum KeyType: Int64 { case okp = 1, ec2 = 2, rsa = 3, akp = 7 }
    private enum Label {
        static let kty: Int64 = 1, alg: Int64 = 3
        static let crv: Int64 = -1, x: Int64 = -2, y: Int64 = -3   // EC2 and OKP
        static let n: Int64 = -1, e: Int64 = -2                    // RSA
        static let pub: Int64 = -1, priv: Int64 = -2, privExpanded: Int64 = -3   // AKP (RFC 9964)
    }

    /// Parses and checks a COSE_Key that fills `cborEncoded`.
    /// - Throws: ``WebAuthnError`` `cbor_*` for bad CBOR, `unsupported_algorithm` for an algorithm Sesame does
    ///   not verify, `invalid_cose_key` for a missing or inconsistent parameter or a key off its curve.
    public init(cborEncoded: some Collection<UInt8>) throws(WebAuthnError) {
        let bytes = Array(cborEncoded)
        try self.init(try CBORDecoder().decode(bytes), cborEncoded: bytes)
    }

    /// Checks an already decoded COSE_Key whose encoding is `cborEncoded`.
    init(_ value: CBORValue, cborEncoded: [UInt8]) throws(WebAuthnError) {
        guard value.mapEntries != nil else { throw WebAuthnError(.invalidCOSEKey, "COSE_Key is not a map") }
        guard let ktyValue = value[Label.kty]?.integerValue, let kty = KeyType(rawValue: ktyValue) else {
            throw WebAuthnError(.invalidCOSEKey, "missing or unknown kty")
        }
        guard let algValue = value[Label.alg]?.integerValue, let alg = Int(exactly: algValue) else {
            throw WebAuthnError(.invalidCOSEKey, "missing alg")
        }
        let algorithm = COSEAlgorithmIdentifier(rawValue: alg)
        guard algorithm.isSupported else {
            throw WebAuthnError(.unsupportedAlgorithm, "algorithm \(alg) is not supported")
        }
        self.algorithm = algorithm
        self.cborEncoded = cborEncoded

        func bytes(_ label: Int64, _ name: String) throws(WebAuthnError) -> [UInt8] {
            guard let b = value[label]?.bytes else { throw WebAuthnError(.invalidCOSEKey, "missing \(name)") }
            return b
        }
        func makeKey<Key>(_ make: () throws(CryptoError) -> Key) throws(WebAuthnError) -> Key {
            do { return try make() } catch { throw WebAuthnError(.invalidCOSEKey, "\(kty) key rejected: \(error.debugDescription)") }
        }

        switch kty {
        case .ec2:
            let curves: [Int64: (EllipticCurve, COSEAlgorithmIdentifier)] = [1: (.p256, .es256), 2: (.p384, .es384), 3: (.p521, .es512)]
            guard let crv = value[Label.crv]?.integerValue, let (curve, expected) = curves[crv] else {
                throw WebAuthnError(.invalidCOSEKey, "missing or unsupported EC2 curve")
            }
            guard algorithm == expected else {
                throw WebAuthnError(.invalidCOSEKey, "alg \(algorithm) does not match curve \(curve)")
            }
            let x = try bytes(Label.x, "x"), y = try bytes(Label.y, "y")
            publicKey = try makeKey { () throws(CryptoError) in try PublicKey(ellipticCurve: curve, x: x, y: y) }
            mlDSAPublicKey = nil
        case .okp:
            guard value[Label.crv]?.integerValue == 6 else { throw WebAuthnError(.invalidCOSEKey, "OKP curve is not Ed25519") }
            guard algorithm == .edDSA || algorithm == .ed25519 else {
                throw WebAuthnError(.invalidCOSEKey, "alg \(algorithm) does not match an Ed25519 key")
            }
            let x = try bytes(Label.x, "x")
            publicKey = try makeKey { () throws(CryptoError) in try PublicKey(ed25519RawRepresentation: x) }
            mlDSAPublicKey = nil
        case .rsa:
            guard [.rs256, .ps256, .ps384, .ps512, .rs1].contains(algorithm) else {
                throw WebAuthnError(.invalidCOSEKey, "alg \(algorithm) does not match an RSA key")
            }
            let n = try bytes(Label.n, "n"), e = try bytes(Label.e, "e")
            publicKey = try makeKey { () throws(CryptoError) in try PublicKey(rsaModulus: n, publicExponent: e) }
            mlDSAPublicKey = nil
        case .akp:
            // RFC 9964: the algorithm names the parameter set; `pub` is pkEncode(ρ, t1) of exactly its length.
            guard let parameterSet = algorithm.mlDSAParameterSet else {
                throw WebAuthnError(.invalidCOSEKey, "alg \(algorithm) does not match an AKP (ML-DSA) key")
            }
            // A credential public key never carries private parts; an authenticator that sends them is broken.
            guard value[Label.priv] == nil, value[Label.privExpanded] == nil else {
                throw WebAuthnError(.invalidCOSEKey, "AKP key carries a private key")
            }
            let pub = try bytes(Label.pub, "pub")
            guard pub.count == parameterSet.publicKeyByteCount else {
                throw WebAuthnError(.invalidCOSEKey, "\(parameterSet) pub must be \(parameterSet.publicKeyByteCount) bytes, got \(pub.count)")
            }
            publicKey = nil
            mlDSAPublicKey = try makeKey { () throws(CryptoError) in try MLDSAPublicKey(rawRepresentation: pub, parameterSet: parameterSet) }
        }
    }

    /// Whether `signature` is this key's valid signature of `message` under its algorithm.
    ///
    /// ML-DSA signatures are checked as FIPS 204 ML-DSA.Verify with the empty context, as COSE (RFC 9964) signs.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        if let mlDSAPublicKey { return mlDSAPublicKey.isValidSignature(signature, for: message) }
        guard let scheme = algorithm.signatureAlgorithm, let publicKey else { return false }
        return publicKey.isValidSignature(signature, for: message, algorithm: scheme)
    }
}
