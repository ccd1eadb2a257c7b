internal import COpenSSL

/// A public key for signature verification (ECDSA P-256/384/521, Ed25519 or RSA).
///
/// `@unchecked Sendable` is safe because the wrapped `EVP_PKEY` (and an ECDSA key's `EC_KEY`) is fully built in
/// `init`, never mutated afterwards, and every verification creates its own `EVP_MD_CTX`/`EVP_PKEY_CTX` or, for ECDSA,
/// its own working state inside `ECDSA_verify`; OpenSSL 3 documents concurrent read-only use of a shared `EVP_PKEY`
/// as thread safe, and its default provider verifies every EC `EVP_PKEY` through the `EC_KEY` it holds, concurrently.
public final class PublicKey: @unchecked Sendable {
    /// The type and size of a public key.
    public enum Kind: Sendable, Hashable {
        /// An ECDSA key on a NIST curve.
        case ellipticCurve(EllipticCurve)
        /// An Ed25519 key.
        case ed25519
        /// An RSA key with the given modulus size in bits.
        case rsa(modulusBits: Int)
    }

    /// The key's type and size.
    public let kind: Kind
    /// The owned `EVP_PKEY *`; freed in `deinit`.
    let pointer: OpaquePointer
    /// For an ECDSA key, its `EC_KEY *` (a reference of its own, freed in `deinit`): verification goes straight to
    /// it (``isValidSignature(_:for:algorithm:)``). Only read once made.
    let ecKey: OpaquePointer?

    /// The smallest accepted RSA modulus.
    static let minimumRSAModulusBits = 2048
    /// The largest accepted RSA modulus (verification cost grows quickly; 16384 bits bounds it).
    static let maximumRSAModulusBits = 16384

    /// Takes ownership of `pointer`, whose kind the caller has already established.
    private init(owning pointer: OpaquePointer, kind: Kind) {
        self.pointer = pointer
        self.kind = kind
        if case .ellipticCurve = kind {
            ecKey = copenssl_ec_key_get1(pointer)
            if ecKey == nil { OpenSSLErrors.clear() }  // then verification takes the EVP path
        } else {
            ecKey = nil
        }
    }

    deinit {
        if let ecKey { copenssl_ec_key_free(ecKey) }
        EVP_PKEY_free(pointer)
    }

    /// Creates an ECDSA public key from affine coordinates.
    /// - Parameters:
    ///   - ellipticCurve: The curve.
    ///   - x: The big-endian x coordinate, exactly `ellipticCurve.coordinateByteCount` bytes.
    ///   - y: The big-endian y coordinate, exactly `ellipticCurve.coordinateByteCount` bytes.
    /// - Throws: ``CryptoError/invalidKey`` for a wrong length or a point not on the curve.
    public convenience init(ellipticCurve: EllipticCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) {
        let size = ellipticCurve.coordinateByteCount
        guard x.count == size, y.count == size else {
            throw CryptoError(.invalidKey, "EC coordinates must be \(size) bytes, got \(x.count) and \(y.count)")
        }
        // Uncompressed SEC1 encoding; it cannot express the point at infinity.
        let point = [UInt8](unsafeUninitializedCapacity: 1 + 2 * size) { buffer, count in
            buffer[0] = 0x04
            _ = UnsafeMutableBufferPointer(rebasing: buffer[1...size]).initialize(from: x)
            _ = UnsafeMutableBufferPointer(rebasing: buffer[(1 + size)...]).initialize(from: y)
            count = 1 + 2 * size
        }
        // Array.withUnsafeBytes only rethrows `any Error`, so carry the typed error out in a Result.
        let pkey = try point.withUnsafeBytes { bytes in
            Result { () throws(CryptoError) in try Self.ellipticCurveKey(ellipticCurve, uncompressedPoint: bytes) }
        }.get()
        self.init(owning: pkey, kind: .ellipticCurve(ellipticCurve))
    }

    /// Makes an EC `EVP_PKEY` from a 65/97/133-byte uncompressed point (`04 || x || y`).
    ///
    /// Copying a per-curve parameters-only key and setting the point costs about a quarter of
    /// EVP_PKEY_fromdata (which rebuilds the EC_GROUP from its name each time). Setting the point
    /// runs EC_POINT_oct2point, which rejects coordinates >= p and points not on the curve
    /// (EC_POINT_set_affine_coordinates checks EC_POINT_is_on_curve). For these prime-order curves
    /// (cofactor 1) that is all of EVP_PKEY_public_check except its n*Q = O scalar multiplication,
    /// which is redundant here and would cost half a verification. The uncompressed form cannot
    /// express the point at infinity.
    private static func ellipticCurveKey(
        _ curve: EllipticCurve, uncompressedPoint point: UnsafeRawBufferPointer
    ) throws(CryptoError) -> OpaquePointer {
        precondition(point.count == 1 + 2 * curve.coordinateByteCount && point.first == 0x04)
        guard let pkey = EVP_PKEY_dup(CurveTemplate.for(curve).pointer) else {
            throw .openSSL(.internalFailure, "EVP_PKEY_dup")
        }
        guard EVP_PKEY_set1_encoded_public_key(pkey, point.baseAddress?.assumingMemoryBound(to: UInt8.self), point.count) == 1 else {
            EVP_PKEY_free(pkey)
            throw .openSSL(.invalidKey, "EC point rejected (EVP_PKEY_set1_encoded_public_key)")
        }
        return pkey
    }

    /// Creates an Ed25519 public key from its 32-byte encoding (RFC 8032).
    /// - Parameter ed25519RawRepresentation: The 32-byte public key.
    /// - Throws: ``CryptoError/invalidKey`` for a wrong length or an unusable key.
    public convenience init(ed25519RawRepresentation raw: [UInt8]) throws(CryptoError) {
        guard raw.count == 32 else {
            throw CryptoError(.invalidKey, "Ed25519 public key must be 32 bytes, got \(raw.count)")
        }
        let pkey = try raw.withUnsafeBytes { bytes in
            Result { () throws(CryptoError) in try Self.ed25519Key(bytes) }
        }.get()
        self.init(owning: pkey, kind: .ed25519)
    }

    /// Makes an Ed25519 `EVP_PKEY` from 32 raw bytes.
    private static func ed25519Key(_ raw: UnsafeRawBufferPointer) throws(CryptoError) -> OpaquePointer {
        precondition(raw.count == 32)
        guard let pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), 32) else {
            throw .openSSL(.invalidKey, "EVP_PKEY_new_raw_public_key")
        }
        return pkey
    }

    /// Creates an RSA public key from its modulus and public exponent.
    /// - Parameters:
    ///   - rsaModulus: The big-endian modulus n; at least 2048 significant bits.
    ///   - publicExponent: The big-endian exponent e; odd and at least 3.
    /// - Throws: ``CryptoError/invalidKey`` for a short modulus or a bad exponent.
    public convenience init(rsaModulus: [UInt8], publicExponent: [UInt8]) throws(CryptoError) {
        guard rsaModulus.count <= Self.maximumRSAModulusBits / 8 + 1, !publicExponent.isEmpty, publicExponent.count <= 64 else {
            throw CryptoError(.invalidKey, "RSA modulus or exponent has an unsupported size")
        }
        let n = try BigNumber(rsaModulus)
        let e = try BigNumber(publicExponent)
        let bits = Int(BN_num_bits(n.pointer))
        guard bits >= Self.minimumRSAModulusBits, bits <= Self.maximumRSAModulusBits else {
            throw CryptoError(.invalidKey, "RSA modulus has \(bits) bits; need \(Self.minimumRSAModulusBits)...\(Self.maximumRSAModulusBits)")
        }
        guard BN_is_odd(e.pointer) == 1, BN_num_bits(e.pointer) >= 2 else {
            throw CryptoError(.invalidKey, "RSA public exponent must be odd and at least 3")
        }
        let pkey = try Self.fromData(keyType: copenssl_name_rsa()) { builder in
            guard OSSL_PARAM_BLD_push_BN(builder, copenssl_param_rsa_n(), n.pointer) == 1,
                  OSSL_PARAM_BLD_push_BN(builder, copenssl_param_rsa_e(), e.pointer) == 1
            else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        self.init(owning: pkey, kind: .rsa(modulusBits: bits))
    }

    /// Creates a public key from a DER-encoded X.509 SubjectPublicKeyInfo.
    /// - Parameter derEncodedSubjectPublicKeyInfo: The DER bytes; the whole buffer must be one SPKI.
    /// - Throws: ``CryptoError/invalidKey`` for malformed DER, trailing bytes, or an unsupported key type or size.
    public convenience init(derEncodedSubjectPublicKeyInfo der: [UInt8]) throws(CryptoError) {
        guard !der.isEmpty, der.count <= Int(Int32.max) else { throw CryptoError(.invalidKey, "empty SPKI") }
        if let (kind, pkey) = try Self.wellKnownSPKI(der) {
            self.init(owning: pkey, kind: kind)
            return
        }
        let (parsed, consumed) = decodeDER(der) { d2i_PUBKEY(nil, $0, $1) }
        guard let pkey = parsed else { throw .openSSL(.invalidKey, "d2i_PUBKEY") }
        guard consumed == der.count else {
            EVP_PKEY_free(pkey)
            throw CryptoError(.invalidKey, "SPKI has \(der.count - consumed) trailing bytes")
        }
        let kind: Kind
        do {
            kind = try Self.classify(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.init(owning: pkey, kind: kind)
    }

    /// The exact DER prefixes of the common SubjectPublicKeyInfo encodings (named curve, uncompressed point;
    /// Ed25519), each followed only by the key bytes.
    private static let wellKnownPrefixes: [(prefix: [UInt8], kind: Kind, keyLength: Int)] = [
        ([0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
          0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00], .ellipticCurve(.p256), 65),
        ([0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00,
          0x22, 0x03, 0x62, 0x00], .ellipticCurve(.p384), 97),
        ([0x30, 0x81, 0x9b, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04,
          0x00, 0x23, 0x03, 0x81, 0x86, 0x00], .ellipticCurve(.p521), 133),
        ([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00], .ed25519, 32),
    ]

    /// Builds the key directly when `der` is exactly one of the well-known encodings, or returns nil.
    ///
    /// OpenSSL 3.0's generic `d2i_PUBKEY` goes through the provider decoder framework and costs about
    /// twice an ECDSA verification; WebAuthn servers load stored SPKI keys on every assertion.
    private static func wellKnownSPKI(_ der: [UInt8]) throws(CryptoError) -> (Kind, OpaquePointer)? {
        for entry in wellKnownPrefixes where der.count == entry.prefix.count + entry.keyLength {
            guard der.starts(with: entry.prefix) else { continue }
            return try der.withUnsafeBytes { bytes in
                Result { () throws(CryptoError) -> (Kind, OpaquePointer)? in
                    let key = UnsafeRawBufferPointer(rebasing: bytes[entry.prefix.count...])
                    switch entry.kind {
                    case .ellipticCurve(let curve):
                        // Compressed or hybrid points take the generic path.
                        guard key.first == 0x04 else { return nil }
                        return (entry.kind, try ellipticCurveKey(curve, uncompressedPoint: key))
                    default:
                        return (entry.kind, try ed25519Key(key))
                    }
                }
            }.get()
        }
        return nil
    }

    /// Wraps an `EVP_PKEY` the caller owns a reference to; on failure the caller keeps ownership.
    static func adopting(_ pkey: OpaquePointer) throws(CryptoError) -> PublicKey {
        let kind = try classify(pkey)
        return PublicKey(owning: pkey, kind: kind)
    }

    /// The key as a DER-encoded SubjectPublicKeyInfo.
    public var derEncodedSubjectPublicKeyInfo: [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        precondition(length > 0, "i2d_PUBKEY failed: \(OpenSSLErrors.drain())")
        return [UInt8](unsafeUninitializedCapacity: Int(length)) { buffer, count in
            var cursor = buffer.baseAddress
            let written = i2d_PUBKEY(pointer, &cursor)
            precondition(written == length, "i2d_PUBKEY failed: \(OpenSSLErrors.drain())")
            count = Int(written)
        }
    }

    /// EC keys only: uncompressed point coordinates, else nil.
    ///
    /// Each coordinate is left-padded to ``EllipticCurve/coordinateByteCount`` bytes.
    public var ellipticCurvePoint: (x: [UInt8], y: [UInt8])? {
        guard case .ellipticCurve(let curve) = kind else { return nil }
        guard let x = bigNumberParameter(copenssl_param_ec_pub_x(), size: curve.coordinateByteCount),
              let y = bigNumberParameter(copenssl_param_ec_pub_y(), size: curve.coordinateByteCount)
        else {
            OpenSSLErrors.clear()
            return nil
        }
        return (x, y)
    }

    /// Reads a BIGNUM key parameter as a fixed-size big-endian byte string.
    private func bigNumberParameter(_ name: UnsafePointer<CChar>, size: Int) -> [UInt8]? {
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pointer, name, &bn) == 1, let bn else { return nil }
        defer { BN_free(bn) }
        var bytes = [UInt8](repeating: 0, count: size)
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2binpad(bn, $0.baseAddress, Int32(size)) }
        return written == size ? bytes : nil
    }

    // MARK: Construction helpers

    /// Builds a public `EVP_PKEY` of `keyType` from the parameter array `build` makes with the given builder.
    ///
    /// `build` must call `OSSL_PARAM_BLD_to_param` itself, while the pointers it pushed are still valid.
    private static func fromData(
        keyType: UnsafePointer<CChar>, _ build: (OpaquePointer) -> UnsafeMutablePointer<OSSL_PARAM>?
    ) throws(CryptoError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw .openSSL(.internalFailure, "OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard let params = build(builder) else {
            throw .openSSL(.invalidKey, "building \(String(cString: keyType)) key parameters")
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, keyType, nil) else {
            throw .openSSL(.internalFailure, "EVP_PKEY_CTX_new_from_name(\(String(cString: keyType)))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, copenssl_selection_public_key(), params) == 1,
              let pkey
        else {
            throw .openSSL(.invalidKey, "EVP_PKEY_fromdata(\(String(cString: keyType)))")
        }
        return pkey
    }

    /// Runs `EVP_PKEY_public_check_quick`: for EC, the point is in range, on the curve and not the point at
    /// infinity (which a SubjectPublicKeyInfo can encode and which would let anyone forge ECDSA signatures).
    /// The full check's extra n*Q = O test is redundant for these cofactor-1 curves.
    private static func checkPublic(_ pkey: OpaquePointer) throws(CryptoError) {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            throw .openSSL(.internalFailure, "EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_public_check_quick(ctx) == 1 else { throw .openSSL(.invalidKey, "EVP_PKEY_public_check_quick") }
    }

    /// Determines the kind of a parsed key and enforces the supported types and sizes.
    private static func classify(_ pkey: OpaquePointer) throws(CryptoError) -> Kind {
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard name.withUnsafeMutableBufferPointer({ EVP_PKEY_get_group_name(pkey, $0.baseAddress, $0.count, &length) }) == 1 else {
                throw .openSSL(.invalidKey, "EC key without a named curve")
            }
            let curve: EllipticCurve
            switch OBJ_sn2nid(name) {
            case NID_X9_62_prime256v1: curve = .p256
            case NID_secp384r1: curve = .p384
            case NID_secp521r1: curve = .p521
            default:
                throw CryptoError(.invalidKey, "unsupported EC curve \(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
            }
            try checkPublic(pkey)
            return .ellipticCurve(curve)
        case EVP_PKEY_ED25519:
            return .ed25519
        case EVP_PKEY_RSA:
            let bits = Int(EVP_PKEY_get_bits(pkey))
            guard bits >= minimumRSAModulusBits, bits <= maximumRSAModulusBits else {
                throw CryptoError(.invalidKey, "RSA modulus has \(bits) bits")
            }
            return .rsa(modulusBits: bits)
        case let other:
            throw CryptoError(.invalidKey, "unsupported key type NID \(other)")
        }
    }
}
