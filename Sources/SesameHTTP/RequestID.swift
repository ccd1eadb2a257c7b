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
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for half: UInt8 in 0...1 {
            var hasher = Hasher()
            requestIDKey.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(count)
            hasher.combine(half)
            let value = UInt64(bitPattern: Int64(hasher.finalize()))
            for shift in stride(from: 60, through: 0, by: -4) {
                text.append(digits[Int(value >> UInt64(shift) & 0x0F)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
