import SesameCrypto
import WebAuthn

/// Random identifiers and secrets.
public enum Identifiers {
    /// A new resource ID: 20 lowercase hex characters (80 random bits), like Appwrite's IDs.
    public static func unique() -> String {
        hex(SecureRandom.bytes(count: 10))
    }

    /// A random (version 4) UUID in lowercase, from the CSPRNG.
    public static func uuid() -> String {
        var bytes = SecureRandom.bytes(count: 16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return hex(bytes, dashesBefore: [4, 6, 8, 10])
    }

    /// Lowercase hex of `bytes`, with a `-` before the bytes at these offsets.
    private static func hex(_ bytes: [UInt8], dashesBefore dashes: Set<Int> = []) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2 + dashes.count)
        for (offset, byte) in bytes.enumerated() {
            if dashes.contains(offset) { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
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
