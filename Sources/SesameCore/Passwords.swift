import SesameCrypto
import WebAuthn

/// Password hashing with scrypt, in a self-describing text form: `scrypt$<log2 N>$<r>$<p>$<salt>$<key>`
/// (salt and key in base64url). Verification compares in constant time.
public enum Passwords {
    /// The cost new hashes use: ``Scrypt/Parameters/interactive`` (N = 2^15, r = 8, p = 1).
    public static let parameters = Scrypt.Parameters.interactive

    /// Hashes `password` with a fresh 16-byte salt.
    public static func hash(_ password: String) -> String {
        hash(password, salt: SecureRandom.bytes(count: 16), parameters: parameters)
    }

    static func hash(_ password: String, salt: [UInt8], parameters: Scrypt.Parameters) -> String {
        let key: [UInt8]
        do {
            key = try Scrypt.derive(password: Array(password.utf8), salt: salt, parameters: parameters, length: 32)
        } catch {
            preconditionFailure("scrypt with fixed, valid parameters cannot fail")
        }
        let logN = UInt64.bitWidth - 1 - parameters.n.leadingZeroBitCount
        return "scrypt$\(logN)$\(parameters.r)$\(parameters.p)$\(Base64URL.encode(salt))$\(Base64URL.encode(key))"
    }

    /// Whether `password` matches `stored`; false for a malformed hash or out-of-range cost parameters.
    public static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt", let logN = UInt64(parts[1]), let r = UInt64(parts[2]),
              let p = UInt64(parts[3]), (1...20).contains(logN), (1...32).contains(r), (1...16).contains(p),
              let salt = try? Base64URL.decode(String(parts[4])), let expected = try? Base64URL.decode(String(parts[5])),
              (16...64).contains(expected.count),
              let key = try? Scrypt.derive(password: Array(password.utf8), salt: salt,
                                           parameters: Scrypt.Parameters(n: 1 << logN, r: r, p: p), length: expected.count)
        else { return false }
        return constantTimeEquals(key, expected)
    }

    /// Spends the time of one verification, for sign-in attempts on unknown accounts (no timing oracle).
    public static func verifyDummy(_ password: String) {
        _ = verify(password, against: dummyHash)
    }

    private static let dummyHash = hash("sesame-dummy-password", salt: Array(repeating: 0, count: 16), parameters: parameters)
}
