import Foundation
import SesameCrypto
import SesameStore
import Synchronization

/// The deployment's ES256 keys for verification tokens, with rotation (spec §2.4).
///
/// The first key is made on first use and signs at once. `rotate` adds the next generation, published at once and
/// signing from `activatesAt` (24 hours later by default), so partners that cache the JWKS see it before any token
/// uses it. A key stays published for ``retention`` after its successor takes over, longer than any token lives.
/// Private keys are stored as PKCS#8 PEM sealed under the master key (bound to their `kid`), so a copy of the
/// database alone cannot sign a token.
public struct SigningKeyService: VerificationTokenSigner {
    let store: Store
    let clock: any SesameClock
    let secrets: SecretsAtRest

    /// How long a superseded key stays in the JWKS after its successor starts signing.
    public static let retention: TimeInterval = 3600
    /// The default time between publishing a new key and signing with it.
    public static let defaultActivationDelay: TimeInterval = 86_400

    /// Parsed private keys by their sealed stored value (parsing PEM costs as much as signing).
    private static let parsed = Mutex<[String: PrivateKey]>([:])

    /// A published key.
    public struct Key: Sendable, Hashable {
        public let kid: String
        public let generation: Int64
        public let activatesAt: Date
        /// Whether it is the key signing now.
        public let isSigning: Bool
    }

    /// Every key, oldest first, with the one signing now marked; creates the first key when there is none.
    public func keys() throws(SesameError) -> [Key] {
        let records = try records()
        let signing = try signingRecord(records)
        return records.map { Key(kid: $0.id, generation: $0.generation, activatesAt: $0.activatesAt, isSigning: $0.id == signing.id) }
    }

    /// The JWKS: every key that is pending, signing, or superseded less than ``retention`` ago.
    public func jwks() throws(SesameError) -> JWKSet {
        let now = clock.now()
        let records = try records()
        let published = records.enumerated().filter { index, _ in
            guard index + 1 < records.count else { return true }
            // Superseded once the next generation is active; kept for the retention period after that.
            return records[index + 1].activatesAt.addingTimeInterval(Self.retention) > now
        }
        return try JWKSet(publicKeys: try published.map { _, record throws(SesameError) in try privateKey(record).publicKey })
    }

    /// Adds the next key, signing from `activateAfter` seconds on.
    public func rotate(activateAfter delay: TimeInterval = Self.defaultActivationDelay) throws(SesameError) -> Key {
        let records = try records()
        let now = clock.now()
        let record = try newRecord(generation: (records.last?.generation ?? 0) + 1, activatesAt: now.addingTimeInterval(max(0, delay)))
        let inserted = try StoreErrors.map { () throws(StoreError) in try store.signingKeys.createIfAbsent(record) }
        secrets.cache.noteChange()
        guard inserted else { throw SesameError(.conflict, "another rotation ran at the same time") }
        return Key(kid: record.id, generation: record.generation, activatesAt: record.activatesAt, isSigning: delay <= 0)
    }

    /// Signs claims with the key active now.
    public func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String {
        try readied().sign(claims)
    }

    /// The key active now, read (or made, on first use) now: its `sign` reads nothing.
    public func readied() throws(SesameError) -> any VerificationTokenSigner {
        let record = try signingRecord(try records())
        return ReadiedKey(kid: record.id, key: try privateKey(record))
    }

    /// A signing key in memory.
    private struct ReadiedKey: VerificationTokenSigner {
        let kid: String
        let key: PrivateKey

        func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String {
            try ES256JWS.sign(claims: claims.jsonObject, key: key, kid: kid)
        }

        func readied() -> any VerificationTokenSigner { self }
    }

    /// Verifies a token against the published keys and decodes its claims.
    /// - Throws: `invalid_jwt`, whose ``SesameError/reason`` is `invalid_signature` for a token that does not verify
    ///   and `malformed` for genuine claims that are not verification-token claims.
    public func verify(_ token: String) throws(SesameError) -> VerificationTokenClaims {
        let keys = try jwks().publicKeys()
        let claims: [String: JSONValue]
        do {
            claims = try ES256JWS.verify(token: token, keys: keys)
        } catch where error.code == .invalidJWT {
            throw SesameError(.invalidJWT, error.detail, reason: Self.invalidSignature)
        }
        do {
            return try JSONDecoder().decode(VerificationTokenClaims.self, from: Data(try JSONValue.object(claims).jsonEncoded()))
        } catch {
            throw SesameError(.invalidJWT, "the claims are not verification-token claims", reason: Self.malformed)
        }
    }

    /// The reasons of a token that does not verify, and of genuine claims of another shape.
    static let invalidSignature = "invalid_signature", malformed = "malformed"

    /// Every key, oldest generation first, from the configuration cache (a rotation on any node is seen within its
    /// refresh interval); the first is made on first use.
    private func records() throws(SesameError) -> [SigningKeyRecord] {
        let list = { () throws(SesameError) -> [SigningKeyRecord] in
            try secrets.cache.signingKeys(store) { () throws(SesameError) in
                try StoreErrors.map { () throws(StoreError) in try store.signingKeys.list() }
            }
        }
        let records = try list()
        if !records.isEmpty { return records }
        // First use: generation 1 signs at once (no token exists yet). Concurrent first uses on several nodes make one.
        let first = try newRecord(generation: 1, activatesAt: clock.now())
        _ = try StoreErrors.map { () throws(StoreError) in try store.signingKeys.createIfAbsent(first) }
        secrets.cache.noteChange()
        return try list()
    }

    /// The newest key already active.
    private func signingRecord(_ records: [SigningKeyRecord]) throws(SesameError) -> SigningKeyRecord {
        let now = clock.now()
        guard let record = records.last(where: { $0.activatesAt <= now }) ?? records.first else {
            throw SesameError(.internalFailure, "no signing key")
        }
        return record
    }

    private func newRecord(generation: Int64, activatesAt: Date) throws(SesameError) -> SigningKeyRecord {
        let key = PrivateKey.generate(.p256)
        let kid = try JWK.thumbprint(of: key.publicKey)
        let sealed = try secrets.seal(Array(key.pemRepresentation.utf8), for: .signingKey, row: kid)
        return SigningKeyRecord(id: kid, generation: generation, privateKey: sealed, createdAt: clock.now(), activatesAt: activatesAt)
    }

    private func privateKey(_ record: SigningKeyRecord) throws(SesameError) -> PrivateKey {
        // Cached by the sealed value, and served only to a ring that holds the key that sealed it.
        if let keyID = SealedValue.keyID(of: Array(record.privateKey.utf8)), secrets.keys.ids.contains(keyID),
           let key = Self.parsed.withLock({ $0[record.privateKey] }) {
            return key
        }
        let pem = try secrets.open(Array(record.privateKey.utf8), for: .signingKey, row: record.id)
        let key: PrivateKey
        do { key = try PrivateKey(pemEncoded: String(decoding: pem, as: UTF8.self)) } catch {
            throw SesameError(.internalFailure, "a stored signing key does not parse")
        }
        Self.parsed.withLock { $0[record.privateKey] = key }
        return key
    }
}
