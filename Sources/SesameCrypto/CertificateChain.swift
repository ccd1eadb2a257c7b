import Foundation
internal import COpenSSL

/// X.509 path validation against caller-supplied trust anchors.
public enum CertificateChain {
    /// Validates leaf -> intermediates -> one of trustAnchors at `time` (X509_STORE + X509_STORE_CTX,
    /// X509_VERIFY_PARAM_set_time, X509_V_FLAG_PARTIAL_CHAIN so an anchor may be an intermediate, no purpose check).
    ///
    /// No system trust store is consulted; only `trustAnchors` are trusted.
    /// - Parameters:
    ///   - leaf: The end-entity certificate.
    ///   - intermediates: Untrusted certificates that may be used to build the path, in any order.
    ///   - trustAnchors: The trusted certificates; a path must end at one of them.
    ///   - time: The validation time.
    /// - Throws: ``CryptoError/untrustedCertificateChain`` when no valid path exists at `time`
    ///   (the detail carries OpenSSL's `X509_verify_cert_error_string`).
    public static func validate(
        leaf: Certificate, intermediates: [Certificate], trustAnchors: [Certificate], at time: Date
    ) throws(CryptoError) {
        guard !trustAnchors.isEmpty else {
            throw CryptoError(.untrustedCertificateChain, "no trust anchors")
        }
        guard let store = X509_STORE_new() else { throw .openSSL(.internalFailure, "X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in trustAnchors {
            // X509_STORE_add_cert takes its own reference; a duplicate anchor is not an error in 3.0.
            guard X509_STORE_add_cert(store, anchor.box.pointer) == 1 else {
                throw .openSSL(.internalFailure, "X509_STORE_add_cert")
            }
        }
        guard let untrusted = copenssl_sk_X509_new_null() else { throw .openSSL(.internalFailure, "sk_X509_new_null") }
        defer { copenssl_sk_X509_free(untrusted) }  // frees the stack only; boxes own the certificates
        for certificate in intermediates {
            guard copenssl_sk_X509_push(untrusted, certificate.box.pointer) > 0 else {
                throw .openSSL(.internalFailure, "sk_X509_push")
            }
        }
        guard let ctx = X509_STORE_CTX_new() else { throw .openSSL(.internalFailure, "X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(ctx) }
        // The boxes keep every X509 alive until this function returns, after the ctx is freed.
        let result: Int32 = withExtendedLifetime((leaf, intermediates, trustAnchors)) {
            guard X509_STORE_CTX_init(ctx, store, leaf.box.pointer, untrusted) == 1,
                  let param = X509_STORE_CTX_get0_param(ctx)
            else { return -1 }
            X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
            guard X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_PARTIAL_CHAIN)) == 1 else { return -1 }
            return X509_verify_cert(ctx)
        }
        if result == 1 {
            OpenSSLErrors.clear()
            return
        }
        let code = X509_STORE_CTX_get_error(ctx)
        let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown"
        let depth = X509_STORE_CTX_get_error_depth(ctx)
        throw .openSSL(.untrustedCertificateChain, "X509_verify_cert: \(reason) (code \(code), depth \(depth))")
    }
}
