import SesameCrypto
import WebAuthn

/// Random identifiers and secrets.
public enum Identifiers {
    /// A new resource ID: 20 lowercase hex characters (80 random bits), like Appwrite's IDs.
    public static func unique() -> String {
        SecureRandom.bytes(count: 10).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// A random (version 4) UUID in lowercase, from the CSPRNG.
    public static func uuid() -> String {
        var bytes = SecureRandom.bytes(count: 16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex.dropFirst(range.lowerBound).prefix(range.count))
        }
        return parts.joined(separator: "-")
    }

    /// A new secret: `prefix` and 32 random bytes in base64url. Shown once, stored only as ``hash(_:)``.
    public static func secret(prefix: String) -> String {
        prefix + Base64URL.encode(SecureRandom.bytes(count: 32))
    }

    /// The stored form of a secret: SHA-256 of its UTF-8 bytes. Secrets carry 256 random bits, so a fast hash
    /// suffices; passwords, which do not, get a memory-hard KDF instead.
    public static func hash(_ secret: String) -> [UInt8] {
        Digest.sha256(Array(secret.utf8))
    }
}
