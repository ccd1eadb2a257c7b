internal import SesameCrypto
import Synchronization

/// A key drawn once per process from the system's secure random source, and a count of the identifiers made.
private let requestIDKey = SecureRandom.bytes(count: 16)
private let requestIDCount = Atomic<UInt64>(0)

extension HTTPRequest {
    /// Makes a fresh request identifier, 32 lowercase hex digits: the process's count of identifiers run through a
    /// keyed hash (SipHash, Swift's `Hasher`) under a per-process random key, so that identifiers are unique, tell
    /// nothing of how many requests the server answered, and cost no trip to the random source per request (which was
    /// a tenth of the CPU of a `GET /health`).
    /// - Returns: The identifier.
    public static func makeID() -> String {
        let count = requestIDCount.add(1, ordering: .relaxed).newValue
        // Written straight into the string's storage: one allocation per identifier.
        return String(unsafeUninitializedCapacity: 32) { text in
            for half: UInt8 in 0...1 {
                var hasher = Hasher()
                requestIDKey.withUnsafeBytes { hasher.combine(bytes: $0) }
                hasher.combine(count)
                hasher.combine(half)
                let value = UInt64(bitPattern: Int64(hasher.finalize()))
                for digit in 0..<16 {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * digit)) & 0x0F
                    text[Int(half) * 16 + digit] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                }
            }
            return 32
        }
    }
}
