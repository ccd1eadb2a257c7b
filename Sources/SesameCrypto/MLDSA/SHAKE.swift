internal import COpenSSL

/// The SHAKE extendable-output functions of FIPS 202, through OpenSSL's XOF digests.
///
/// OpenSSL 3.0 has `EVP_DigestFinalXOF` only (`EVP_DigestSqueeze`, which squeezes in steps, arrived in 3.3), so
/// one call absorbs its input and produces one output of a chosen length. ``XOFReader`` builds FIPS 204's
/// incremental `Squeeze` on top of that. The digests are fetched once (``FetchedDigest``): OpenSSL 3.0's
/// `EVP_shake128()` would repeat an implicit, locking fetch in every `EVP_DigestInit_ex`.
enum SHAKE: Sendable {
    /// SHAKE128 (FIPS 204's G).
    case shake128
    /// SHAKE256 (FIPS 204's H).
    case shake256

    /// The rate in bytes: how much output one Keccak permutation gives.
    var blockByteCount: Int {
        switch self {
        case .shake128: 168
        case .shake256: 136
        }
    }

    /// Absorbs the concatenation of `parts` and squeezes `outputByteCount` bytes.
    /// - Parameters:
    ///   - parts: The input, in pieces that are hashed as if concatenated (no copy is made).
    ///   - outputByteCount: How many bytes to produce; at least 1.
    /// - Returns: The first `outputByteCount` bytes of the output stream.
    func hash(parts: [[UInt8]], outputByteCount: Int) -> [UInt8] {
        precondition(outputByteCount > 0, "SHAKE output length must be positive")
        let md = switch self {
        case .shake128: FetchedDigest.shake128.pointer
        case .shake256: FetchedDigest.shake256.pointer
        }
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: \(OpenSSLErrors.drain())") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestInit_ex(ctx, md, nil) == 1 else { preconditionFailure("SHAKE init failed: \(OpenSSLErrors.drain())") }
        for part in parts where !part.isEmpty {
            let ok = part.withUnsafeBytes { EVP_DigestUpdate(ctx, $0.baseAddress, $0.count) }
            precondition(ok == 1, "SHAKE update failed: \(OpenSSLErrors.drain())")
        }
        return [UInt8](unsafeUninitializedCapacity: outputByteCount) { out, count in
            let ok = EVP_DigestFinalXOF(ctx, out.baseAddress, outputByteCount)
            precondition(ok == 1, "EVP_DigestFinalXOF failed: \(OpenSSLErrors.drain())")
            count = outputByteCount
        }
    }

    /// Absorbs `input` and squeezes `outputByteCount` bytes.
    func hash(_ input: [UInt8], outputByteCount: Int) -> [UInt8] { hash(parts: [input], outputByteCount: outputByteCount) }
}

/// A SHAKE output stream read front to back: FIPS 204's `Init`, `Absorb` once, then `Squeeze` as often as needed.
///
/// It starts with `initialByteCount` bytes of output; when a read runs past them, it computes the output again at
/// twice the length from the same input (a longer XOF output starts with the shorter one), so the bytes read are
/// exactly those of an incremental squeeze. The inputs FIPS 204 streams are short seeds (at most 64 bytes), which
/// makes recomputing cheaper and simpler than keeping an OpenSSL context to copy.
struct XOFReader {
    private let function: SHAKE
    private let input: [UInt8]
    private var output: [UInt8]
    private var position = 0

    /// Absorbs `input`; the first output is `initialByteCount` bytes long (at least 1).
    init(_ function: SHAKE, input: [UInt8], initialByteCount: Int) {
        self.function = function
        self.input = input
        output = function.hash(input, outputByteCount: max(1, initialByteCount))
    }

    /// The next byte of the output stream.
    mutating func readByte() -> UInt8 {
        if position == output.count {
            output = function.hash(input, outputByteCount: output.count * 2)
        }
        defer { position += 1 }
        return output[position]
    }
}
