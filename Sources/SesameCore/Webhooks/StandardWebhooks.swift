import Foundation
import SesameCrypto

/// Signing and verification of webhooks under Standard Webhooks 1.0 (symmetric scheme, `v1`).
///
/// A delivery carries three headers:
/// - `webhook-id`: the message ID (``newMessageID()``), the same on every retry of one event;
/// - `webhook-timestamp`: the attempt time in integer Unix seconds;
/// - `webhook-signature`: space-separated `v1,<base64 HMAC-SHA256>` entries, one per key (two during rotation).
///
/// The signed content is `{webhook-id}.{webhook-timestamp}.{raw body}`; the body bytes signed must be exactly the
/// bytes sent. Secrets are presented as `whsec_` + standard base64 of the key bytes (24 to 64 bytes).
public enum StandardWebhooks {
    /// The prefix of a presented secret.
    public static let secretPrefix = "whsec_"
    /// The prefix of a message ID.
    public static let messageIDPrefix = "msg_"
    /// The version tag of a symmetric (HMAC-SHA256) signature entry.
    public static let signatureVersion = "v1"
    /// The allowed key lengths in bytes (192 to 512 bits).
    public static let keyLengths = 24...64
    /// The default tolerance between a delivery's timestamp and the receiver's clock, in seconds (5 minutes).
    public static let defaultTolerance: TimeInterval = 300

    /// The header carrying the message ID.
    public static let idHeader = "webhook-id"
    /// The header carrying the attempt timestamp (integer Unix seconds).
    public static let timestampHeader = "webhook-timestamp"
    /// The header carrying the signature list.
    public static let signatureHeaderName = "webhook-signature"

    /// A new endpoint secret: `whsec_` + standard base64 (with padding) of 32 random bytes. Show it once to the
    /// operator; it is the only way a receiver can verify deliveries.
    public static func newSecret() -> String {
        secretPrefix + Data(SecureRandom.bytes(count: 32)).base64EncodedString()
    }

    /// The key bytes of a presented secret.
    ///
    /// The `whsec_` prefix is required; the rest is standard base64 (missing `=` padding is tolerated).
    /// - Parameter secret: A secret as made by ``newSecret()``.
    /// - Returns: The decoded key, 24 to 64 bytes.
    /// - Throws: `SesameError(.invalidArgument)` when the prefix is missing, the base64 is malformed, or the key is
    ///   shorter than 24 or longer than 64 bytes. The detail never repeats the secret.
    public static func key(fromSecret secret: String) throws(SesameError) -> [UInt8] {
        guard secret.hasPrefix(secretPrefix) else {
            throw SesameError(.invalidArgument, "a webhook secret must start with whsec_")
        }
        var encoded = String(secret.dropFirst(secretPrefix.count))
        if encoded.utf8.count % 4 != 0 {
            encoded += String(repeating: "=", count: 4 - encoded.utf8.count % 4)
        }
        guard let data = Data(base64Encoded: encoded) else {
            throw SesameError(.invalidArgument, "a webhook secret must be whsec_ followed by base64")
        }
        guard keyLengths.contains(data.count) else {
            throw SesameError(.invalidArgument, "a webhook secret must decode to 24 to 64 bytes")
        }
        return [UInt8](data)
    }

    /// A new message ID: `msg_` + 32 lowercase hex characters (128 random bits). It contains no `.`, as the
    /// signature scheme requires. Reuse it for every retry of the same event.
    public static func newMessageID() -> String {
        messageIDPrefix + SecureRandom.bytes(count: 16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// One signature entry, `v1,<base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))>`.
    /// - Parameters:
    ///   - key: The key bytes (``key(fromSecret:)``).
    ///   - id: The message ID sent as `webhook-id`; must not contain `.`.
    ///   - timestamp: The attempt time in Unix seconds, sent as `webhook-timestamp`.
    ///   - body: The exact body bytes sent.
    /// - Returns: The entry, for example `v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=`.
    public static func signature(key: [UInt8], id: String, timestamp: Int, body: [UInt8]) -> String {
        signatureVersion + "," + Data(mac(key: key, id: id, timestamp: String(timestamp), body: body)).base64EncodedString()
    }

    /// The `webhook-signature` value: one entry per key, in order, separated by single spaces.
    ///
    /// During secret rotation pass the new and the old key; a receiver accepts the delivery if any entry matches a
    /// secret it holds.
    /// - Parameters:
    ///   - keys: The key bytes of every active secret (at least one).
    ///   - id: The message ID sent as `webhook-id`.
    ///   - timestamp: The attempt time in Unix seconds, sent as `webhook-timestamp`.
    ///   - body: The exact body bytes sent.
    /// - Returns: The header value.
    public static func signatureHeader(keys: [[UInt8]], id: String, timestamp: Int, body: [UInt8]) -> String {
        keys.map { signature(key: $0, id: id, timestamp: timestamp, body: body) }.joined(separator: " ")
    }

    /// Verifies a delivery the way a receiver must (used by tests and by anyone receiving our webhooks).
    ///
    /// Passes when the timestamp is an integer within `tolerance` seconds of `now` (either direction) and some `v1,`
    /// entry of `signature` equals, in constant time, the HMAC under the key of some secret in `secrets`. Entries of
    /// other versions (such as `v1a`) and secrets that do not decode are ignored. A missing header fails.
    /// - Parameters:
    ///   - body: The raw body bytes as received (not re-serialized).
    ///   - id: The `webhook-id` header.
    ///   - timestamp: The `webhook-timestamp` header.
    ///   - signature: The `webhook-signature` header.
    ///   - secrets: The `whsec_` secrets the receiver trusts.
    ///   - now: The receiver's current time.
    ///   - tolerance: The largest allowed difference between `timestamp` and `now`, in seconds.
    /// - Returns: Whether the delivery is authentic and fresh.
    public static func verify(
        body: [UInt8], id: String?, timestamp: String?, signature: String?, secrets: [String], now: Date,
        tolerance: TimeInterval = defaultTolerance
    ) -> Bool {
        guard let id, !id.isEmpty, let timestamp, let signature else { return false }
        guard !timestamp.isEmpty, timestamp.utf8.count <= 18, timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int(timestamp)
        else { return false }
        guard abs(now.timeIntervalSince1970 - TimeInterval(seconds)) <= tolerance else { return false }

        let presented: [[UInt8]] = signature.split(separator: " ").compactMap { entry in
            let parts = entry.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == signatureVersion, let data = Data(base64Encoded: String(parts[1])) else {
                return nil
            }
            return [UInt8](data)
        }
        guard !presented.isEmpty else { return false }
        var matched = false
        for secret in secrets {
            guard let key = try? self.key(fromSecret: secret) else { continue }
            let expected = mac(key: key, id: id, timestamp: timestamp, body: body)
            for candidate in presented where constantTimeEquals(candidate, expected) {
                matched = true
            }
        }
        return matched
    }

    /// HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    private static func mac(key: [UInt8], id: String, timestamp: String, body: [UInt8]) -> [UInt8] {
        var content = Array(id.utf8)
        content.append(UInt8(ascii: "."))
        content += timestamp.utf8
        content.append(UInt8(ascii: "."))
        content += body
        return HMAC.sha256(key: key, message: content)
    }
}
