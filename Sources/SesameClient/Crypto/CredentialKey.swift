// The crypto seam of the SDK: everything the software authenticator needs from a crypto library, in one file.
// On Apple platforms it is CryptoKit; elsewhere (Linux) it is SesameCrypto over the system OpenSSL, which
// Package.swift makes a dependency of this target on Linux only.

#if canImport(CryptoKit)
internal import CryptoKit
internal import Foundation

/// A P-256 credential private key (ES256), held by CryptoKit.
///
/// `@unchecked Sendable`: the wrapped key is an immutable value that is only read after `init`.
@available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *)
struct CredentialKey: @unchecked Sendable {
    private let key: P256.Signing.PrivateKey

    private init(key: P256.Signing.PrivateKey) { self.key = key }

    /// Generates a fresh random key.
    static func generate() -> CredentialKey { CredentialKey(key: P256.Signing.PrivateKey()) }

    /// A DER-encoded ECDSA-SHA-256 signature of `message` (which is hashed here, not by the caller).
    func signature(for message: [UInt8]) -> [UInt8] {
        do {
            return Array(try key.signature(for: Data(message)).derRepresentation)
        } catch {
            preconditionFailure("P-256 signing failed: \(error)")
        }
    }

    /// The public point's affine coordinates, 32 bytes each.
    var publicPoint: (x: [UInt8], y: [UInt8]) {
        // x9.63 uncompressed form: 0x04 ‖ x ‖ y.
        let point = Array(key.publicKey.x963Representation)
        precondition(point.count == 65 && point[0] == 0x04, "unexpected P-256 x9.63 encoding")
        return (Array(point[1..<33]), Array(point[33..<65]))
    }

    /// The public key as a DER-encoded SubjectPublicKeyInfo.
    var subjectPublicKeyInfo: [UInt8] { Array(key.publicKey.derRepresentation) }
}

/// Hashing and randomness for the authenticator.
@available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *)
enum ClientCrypto {
    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: Data(bytes))) }

    /// `count` bytes from the system's cryptographically secure generator.
    static func randomBytes(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

#else
internal import SesameCrypto

/// A P-256 credential private key (ES256), held by OpenSSL through SesameCrypto.
struct CredentialKey: Sendable {
    private let key: PrivateKey

    private init(key: PrivateKey) { self.key = key }

    /// Generates a fresh random key.
    static func generate() -> CredentialKey { CredentialKey(key: PrivateKey.generate(.p256)) }

    /// A DER-encoded ECDSA-SHA-256 signature of `message` (which is hashed here, not by the caller).
    func signature(for message: [UInt8]) -> [UInt8] { key.signature(for: message) }

    /// The public point's affine coordinates, 32 bytes each.
    var publicPoint: (x: [UInt8], y: [UInt8]) {
        guard let point = key.publicKey.ellipticCurvePoint else { preconditionFailure("P-256 key without a point") }
        return point
    }

    /// The public key as a DER-encoded SubjectPublicKeyInfo.
    var subjectPublicKeyInfo: [UInt8] { key.publicKey.derEncodedSubjectPublicKeyInfo }
}

/// Hashing and randomness for the authenticator.
enum ClientCrypto {
    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Digest.sha256(bytes) }

    /// `count` bytes from OpenSSL's DRBG.
    static func randomBytes(count: Int) -> [UInt8] { SecureRandom.bytes(count: count) }
}
#endif
