import Foundation
import SesameCrypto
import WebAuthn

/// The deployment's master key: 32 random bytes kept outside the database, which seal every secret the server must
/// read back (JWT secrets, token signing keys, the token-hash key, verification tokens awaiting pickup).
///
/// Written as `sesame_mk_` and 43 base64url characters. Its ``id`` (16 hex digits of HMAC-SHA256(key, a fixed label))
/// is stored with each sealed value, so a start-up can tell which key sealed what without the database holding the key.
public struct MasterKey: Sendable, CustomStringConvertible {
    /// Every master key's text starts with this.
    public static let prefix = "sesame_mk_"
    /// The key ID: 16 lowercase hex digits, safe to show and to store.
    public let id: String
    let bytes: [UInt8]

    /// A new random key.
    public static func generate() -> MasterKey {
        MasterKey(bytes: SecureRandom.bytes(count: AESGCM.keySize))
    }

    init(bytes: [UInt8]) {
        self.bytes = bytes
        self.id = HMAC.sha256(key: bytes, message: Array("sesame master key id v1".utf8)).prefix(8)
            .map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Parses a key's text (`sesame_mk_…`), ignoring surrounding whitespace.
    /// - Throws: `invalid_argument` when it is not a master key (the text is never echoed).
    public init(text: String) throws(SesameError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix), trimmed.utf8.count == Self.prefix.utf8.count + 43,
              let bytes = try? Base64URL.decode(String(trimmed.dropFirst(Self.prefix.count))), bytes.count == AESGCM.keySize
        else {
            throw SesameError(.invalidArgument, "a master key is sesame_mk_ and 43 base64url characters (make one with `sesame master-key generate`)")
        }
        self.init(bytes: bytes)
    }

    /// The key's text, to write to a key file once; never log it.
    public var text: String { Self.prefix + Base64URL.encode(bytes) }

    /// Names the key by its ID only.
    public var description: String { "MasterKey(\(id))" }
}

/// The master keys a process holds: the current one seals, it and the previous ones open (during a rotation).
public struct MasterKeyring: Sendable, CustomStringConvertible {
    /// The key that seals; `nil` when none is configured.
    public let current: MasterKey?
    /// Keys that still open what they sealed, until `sesame master-key rotate` has re-sealed everything.
    public let previous: [MasterKey]

    /// No key: anything that needs one fails with `master_key_required`.
    public static let none = MasterKeyring(current: nil, previous: [])

    /// A ring of `current` and `previous` keys (duplicates of the current key among `previous` are dropped).
    public init(current: MasterKey?, previous: [MasterKey] = []) {
        self.current = current
        self.previous = previous.filter { $0.id != current?.id }
    }

    /// Parses a key file: one key a line, the current key first and previous keys after it; blank lines and lines
    /// starting with `#` are ignored.
    /// - Throws: `invalid_argument` for a malformed line or a file without a key.
    public init(keyFile contents: String) throws(SesameError) {
        var keys: [MasterKey] = []
        for (number, line) in contents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty || text.hasPrefix("#") { continue }
            do { keys.append(try MasterKey(text: text)) } catch {
                throw SesameError(.invalidArgument, "line \(number + 1) of the master key file is not a master key (sesame_mk_…)")
            }
        }
        guard let first = keys.first else { throw SesameError(.invalidArgument, "the master key file holds no key") }
        self.init(current: first, previous: Array(keys.dropFirst()))
    }

    /// Every key, current first.
    public var all: [MasterKey] { (current.map { [$0] } ?? []) + previous }

    /// The IDs of every key, current first.
    public var ids: [String] { all.map(\.id) }

    /// The key with this ID, if the ring holds it.
    func key(id: String) -> MasterKey? { all.first { $0.id == id } }

    public var description: String { "MasterKeyring(\(ids.joined(separator: ", ")))" }
}

/// The stored form of a sealed secret: `sealed1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>`, AES-256-GCM under the
/// master key with that ID, a random 96-bit nonce, and associated data naming the row (column and row key), so a
/// sealed value copied to another row or column does not open.
public enum SealedValue {
    /// Every sealed value starts with this.
    public static let prefix = "sealed1:"

    /// Whether `stored` is sealed (rather than a plaintext value written before sealing).
    public static func isSealed(_ stored: some Collection<UInt8>) -> Bool {
        stored.starts(with: prefix.utf8)
    }

    /// The ID of the key that sealed `stored`, or `nil` when it is not a sealed value.
    public static func keyID(of stored: [UInt8]) -> String? {
        guard isSealed(stored) else { return nil }
        let rest = stored.dropFirst(prefix.utf8.count)
        guard let colon = rest.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(decoding: rest[..<colon], as: UTF8.self)
    }

    static func associatedData(keyID: String, context: String) -> [UInt8] {
        Array("sesame sealed v1\u{0}\(keyID)\u{0}\(context)".utf8)
    }

    /// Seals `plaintext` under the ring's current key for `context`.
    /// - Throws: `master_key_required` when the ring has no key.
    static func seal(_ plaintext: [UInt8], context: String, keys: MasterKeyring) throws(SesameError) -> String {
        guard let key = keys.current else { throw SesameError(.masterKeyRequired, "no master key is configured") }
        let box: [UInt8]
        do { box = try AESGCM.seal(plaintext, key: key.bytes, associatedData: associatedData(keyID: key.id, context: context)) } catch {
            throw SesameError(.internalFailure, "sealing failed: \(error)")
        }
        return prefix + key.id + ":" + Base64URL.encode(box)
    }

    /// Opens a sealed value of `context` with whichever key of the ring sealed it.
    /// - Throws: `master_key_required` when the ring is empty; `master_key_mismatch` when the value was sealed under a
    ///   key the ring does not hold, or does not open (another key with a colliding ID, altered bytes, another row);
    ///   `internal_failure` when the value is not sealed at all.
    static func open(_ stored: [UInt8], context: String, keys: MasterKeyring) throws(SesameError) -> [UInt8] {
        guard let keyID = keyID(of: stored) else { throw SesameError(.internalFailure, "a stored secret is not sealed") }
        guard !keys.all.isEmpty else {
            throw SesameError(.masterKeyRequired, "secrets are sealed under master key \(keyID) and no master key is configured")
        }
        guard let key = keys.key(id: keyID) else {
            throw SesameError(.masterKeyMismatch, "a secret is sealed under master key \(keyID), which is not configured")
        }
        let encoded = String(decoding: stored.dropFirst(prefix.utf8.count + keyID.utf8.count + 1), as: UTF8.self)
        do {
            let box = try Base64URL.decode(encoded)
            return try AESGCM.open(box, key: key.bytes, associatedData: associatedData(keyID: keyID, context: context))
        } catch {
            throw SesameError(.masterKeyMismatch, "a secret sealed under master key \(keyID) does not open")
        }
    }
}
