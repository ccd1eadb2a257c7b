import COpenSSL
import SesameCrypto
import WebAuthn

/// An RSA-2048 signing key for tests: RS1, RS256 and PS256/PS384/PS512 signatures (the product only verifies RSA).
///
/// `@unchecked Sendable`: the `EVP_PKEY` is immutable after generation and each signature has its own context.
public final class TestRSAKey: @unchecked Sendable {
    /// An RSA signature scheme.
    public enum Scheme: Sendable {
        case pkcs1SHA1, pkcs1SHA256, pssSHA256, pssSHA384, pssSHA512
    }

    private let pointer: OpaquePointer
    /// The big-endian modulus.
    public let modulus: [UInt8]
    /// The big-endian public exponent (65537).
    public let exponent: [UInt8] = [0x01, 0x00, 0x01]
    /// The public key as the product sees it.
    public let publicKey: PublicKey

    /// One key shared by every test (RSA key generation costs tens of milliseconds).
    public static let shared = TestRSAKey()

    /// Generates a fresh RSA-2048 key.
    public init() {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { preconditionFailure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(ctx) }
        precondition(EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) == 1, "RSA keygen init")
        var pkey: OpaquePointer? = nil
        precondition(EVP_PKEY_generate(ctx, &pkey) == 1, "EVP_PKEY_generate")
        guard let pkey else { preconditionFailure("EVP_PKEY_generate returned no key") }
        pointer = pkey
        var bn: OpaquePointer? = nil
        precondition(EVP_PKEY_get_bn_param(pkey, copenssl_param_rsa_n(), &bn) == 1, "RSA n")
        guard let bn else { preconditionFailure("RSA n missing") }
        defer { BN_free(bn) }
        let size = Int((BN_num_bits(bn) + 7) / 8)
        var n = [UInt8](repeating: 0, count: size)
        _ = n.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
        modulus = n
        do { publicKey = try PublicKey(rsaModulus: n, publicExponent: [0x01, 0x00, 0x01]) } catch {
            preconditionFailure("fresh RSA key unusable: \(error.debugDescription)")
        }
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The key as a COSE_Key (kty RSA) with the given algorithm.
    public func coseKey(algorithm: COSEAlgorithmIdentifier) -> [UInt8] {
        CBOREncoder.encode(.map([
            CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(Int64(algorithm.rawValue))),
            CBORMapEntry(.integer(-1), .byteString(modulus)), CBORMapEntry(.integer(-2), .byteString(exponent)),
        ]))
    }

    /// Signs `message` (not a digest) with `scheme`.
    public func signature(for message: [UInt8], scheme: Scheme) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        let (md, salt): (OpaquePointer?, Int32?) = switch scheme {
        case .pkcs1SHA1: (EVP_sha1(), nil)
        case .pkcs1SHA256: (EVP_sha256(), nil)
        case .pssSHA256: (EVP_sha256(), 32)
        case .pssSHA384: (EVP_sha384(), 48)
        case .pssSHA512: (EVP_sha512(), 64)
        }
        var pctx: OpaquePointer? = nil
        precondition(EVP_DigestSignInit(ctx, &pctx, md, nil, pointer) == 1, "EVP_DigestSignInit")
        if let salt {
            precondition(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, md) == 1 && EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, salt) == 1, "PSS")
        }
        var length = 0
        precondition(EVP_DigestSign(ctx, nil, &length, message, message.count) == 1, "EVP_DigestSign size")
        var out = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(ctx, &out, &length, message, message.count) == 1, "EVP_DigestSign")
        return Array(out.prefix(length))
    }
}
