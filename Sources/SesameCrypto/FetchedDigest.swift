internal import COpenSSL

/// A message digest fetched from OpenSSL once per process (`EVP_MD_fetch`).
///
/// OpenSSL 3.0 looks a legacy digest such as `EVP_sha256()` up by name (a locked hash-table search) in every
/// `EVP_Digest`, `EVP_DigestInit_ex` and `EVP_DigestVerifyInit`; a fetched one skips that search. A fetched method is
/// immutable and safe to share between threads (hence `@unchecked Sendable`); these live as long as the process.
final class FetchedDigest: @unchecked Sendable {
    /// The fetched `EVP_MD *`.
    let pointer: OpaquePointer

    static let sha1 = FetchedDigest("SHA1")
    static let sha256 = FetchedDigest("SHA256")
    static let sha384 = FetchedDigest("SHA384")
    static let sha512 = FetchedDigest("SHA512")
    static let shake128 = FetchedDigest("SHAKE128")
    static let shake256 = FetchedDigest("SHAKE256")

    private init(_ name: String) {
        guard let md = EVP_MD_fetch(nil, name, nil) else { preconditionFailure("EVP_MD_fetch(\(name)) failed: \(OpenSSLErrors.drain())") }
        pointer = md
    }

    deinit { EVP_MD_free(pointer) }
}
