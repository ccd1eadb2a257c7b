internal import COpenSSL

/// A parameters-only `EVP_PKEY` for one curve, the template that EC public keys are copied from.
///
/// `@unchecked Sendable` is safe because the key is never mutated after creation and is only read by
/// `EVP_PKEY_dup`, which OpenSSL allows concurrently on a shared key.
final class CurveTemplate: @unchecked Sendable {
    let pointer: OpaquePointer

    static let p256 = CurveTemplate(.p256)
    static let p384 = CurveTemplate(.p384)
    static let p521 = CurveTemplate(.p521)

    /// The template for `curve`.
    static func `for`(_ curve: EllipticCurve) -> CurveTemplate {
        switch curve {
        case .p256: p256
        case .p384: p384
        case .p521: p521
        }
    }

    private init(_ curve: EllipticCurve) {
        guard let builder = OSSL_PARAM_BLD_new() else { preconditionFailure("OSSL_PARAM_BLD_new failed") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard OSSL_PARAM_BLD_push_utf8_string(builder, copenssl_param_group_name(), curve.openSSLGroupName, 0) == 1,
              let params = OSSL_PARAM_BLD_to_param(builder)
        else { preconditionFailure("building EC parameters failed: \(OpenSSLErrors.drain())") }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, copenssl_name_ec(), nil) else {
            preconditionFailure("EVP_PKEY_CTX_new_from_name(EC) failed: \(OpenSSLErrors.drain())")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_fromdata_init(ctx) == 1,
              EVP_PKEY_fromdata(ctx, &pkey, copenssl_selection_key_parameters(), params) == 1,
              let pkey
        else { preconditionFailure("EC parameters for \(curve) failed: \(OpenSSLErrors.drain())") }
        pointer = pkey
    }

    deinit { EVP_PKEY_free(pointer) }
}

extension EllipticCurve {
    /// The OpenSSL group name as a static C string.
    var openSSLGroupName: UnsafePointer<CChar> {
        switch self {
        case .p256: copenssl_group_p256()
        case .p384: copenssl_group_p384()
        case .p521: copenssl_group_p521()
        }
    }
}
