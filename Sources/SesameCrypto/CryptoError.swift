/// The single error type thrown by `SesameCrypto`.
///
/// Equality and hashing compare ``code`` only, so tests can write
/// `#expect(throws: CryptoError.invalidKey)`. The internal `detail` (spec step, OpenSSL reason,
/// OpenSSL error queue text) appears only in ``debugDescription``; never send it to clients.
public struct CryptoError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// An extensible error category.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case invalidKey, invalidSignatureEncoding, invalidCertificate
            case untrustedCertificateChain, invalidInput, authenticationFailed, internalFailure
        }

        private let backing: Backing

        private init(_ backing: Backing) { self.backing = backing }

        /// Key material is malformed, of an unsupported type, too weak, or not on its curve.
        public static let invalidKey = Code(.invalidKey)
        /// A signature is not a valid encoding for the algorithm or curve.
        public static let invalidSignatureEncoding = Code(.invalidSignatureEncoding)
        /// A certificate could not be parsed or has trailing bytes.
        public static let invalidCertificate = Code(.invalidCertificate)
        /// A certificate chain does not validate to any trust anchor.
        public static let untrustedCertificateChain = Code(.untrustedCertificateChain)
        /// An argument is malformed (for example a wrong length or an unparsable PEM).
        public static let invalidInput = Code(.invalidInput)
        /// Authenticated decryption failed: wrong key, wrong associated data, or altered bytes.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// OpenSSL failed unexpectedly.
        public static let internalFailure = Code(.internalFailure)

        /// The code's name, for example `invalidKey`.
        public var description: String {
            switch backing {
            case .invalidKey: "invalidKey"
            case .invalidSignatureEncoding: "invalidSignatureEncoding"
            case .invalidCertificate: "invalidCertificate"
            case .untrustedCertificateChain: "untrustedCertificateChain"
            case .invalidInput: "invalidInput"
            case .authenticationFailed: "authenticationFailed"
            case .internalFailure: "internalFailure"
            }
        }
    }

    /// The error category.
    public var code: Code
    /// Internal diagnostic text; not part of equality.
    var detail: String
    /// Source location where the error was created.
    var location: String

    /// Creates an error with internal detail text.
    init(_ code: Code, _ detail: String = "", file: String = #fileID, line: Int = #line) {
        self.code = code
        self.detail = detail
        self.location = "\(file):\(line)"
    }

    /// A key is malformed, unsupported, too weak, or not on its curve.
    public static let invalidKey = CryptoError(.invalidKey)
    /// A signature encoding is malformed.
    public static let invalidSignatureEncoding = CryptoError(.invalidSignatureEncoding)
    /// A certificate could not be parsed.
    public static let invalidCertificate = CryptoError(.invalidCertificate)
    /// A certificate chain did not validate.
    public static let untrustedCertificateChain = CryptoError(.untrustedCertificateChain)
    /// An argument was malformed.
    public static let invalidInput = CryptoError(.invalidInput)
    /// Authenticated decryption failed.
    public static let authenticationFailed = CryptoError(.authenticationFailed)
    /// OpenSSL failed unexpectedly.
    public static let internalFailure = CryptoError(.internalFailure)

    /// Compares codes only.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code only.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A generic description naming only the code; safe to log or show.
    public var description: String { "CryptoError(\(code))" }

    /// The code plus internal detail and source location; for server logs only.
    public var debugDescription: String {
        detail.isEmpty ? "CryptoError(\(code)) at \(location)" : "CryptoError(\(code)): \(detail) at \(location)"
    }
}
