import Synchronization
import WebAuthn

/// Passkeys' public keys parsed once per process: a stored COSE key never changes, and parsing one (CBOR, then an
/// OpenSSL key and its on-curve check) costs about a quarter of checking the signature it verifies.
///
/// Keyed by the exact stored bytes, so a hit is the key those bytes parse to (a pure function's memo, safe to share by
/// every ceremony and every thread: an OpenSSL key is only read once made). At most ``capacity`` keys; when full it
/// starts over, so hostile churn costs parsing, never memory.
final class ParsedKeys: Sendable {
    /// The most keys held at once.
    let capacity: Int
    private let keys = Mutex<[[UInt8]: COSEKey]>([:])

    /// A memo of at most `capacity` keys (1,024 for the process's).
    init(capacity: Int = 1024) { self.capacity = capacity }

    /// The key `cborEncoded` parses to.
    /// - Throws: what ``COSEKey/init(cborEncoded:)`` throws (a failure is not remembered).
    func key(_ cborEncoded: [UInt8]) throws(WebAuthnError) -> COSEKey {
        if let known = keys.withLock({ $0[cborEncoded] }) { return known }
        let parsed = try COSEKey(cborEncoded: cborEncoded)
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[cborEncoded] = parsed
        }
        return parsed
    }

    /// How many keys are held (tests).
    var count: Int { keys.withLock { $0.count } }
}
