import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// What the database holds of secrets, by the master key that sealed them.
public struct SecretInventory: Sendable, Hashable {
    /// Sealed values by key ID.
    public let sealedByKey: [String: Int]
    /// Values still in clear (written before sealing), by column.
    public let plaintext: [SecretColumn: Int]
    /// Webhook bodies that still hold their verification token.
    public let legacyWebhookBodies: Int

    /// Whether the database holds any sealed value (and so needs its master key).
    public var holdsSealedSecrets: Bool { !sealedByKey.isEmpty }
}

/// Secrets at rest: seals and opens the secrets the server reads back under the master key (never in the database),
/// keys the hashes of sign-in tokens, seals what older versions stored in clear, and re-seals under a new key.
///
/// Sealed: `jwt_secrets.secret`, `signing_keys.private_key`, the token-hash key (`deployment_keys`), a completed
/// request's verification token until it expires, and a webhook event's token until nothing is left to deliver.
public struct SecretsAtRest: Sendable {
    let store: Store
    let clock: any SesameClock
    let cache: ConfigurationCache
    /// The master keys of this process.
    public let keys: MasterKeyring

    /// The name of the token-hash key in `deployment_keys`.
    static let tokenHashKeyName = "token_hash"

    /// The associated data of one stored secret: its column and row.
    static func context(_ column: SecretColumn, _ rowID: String) -> String { "\(column.rawValue)/\(rowID)" }

    /// Seals a secret for one row of a secret column.
    /// - Throws: `master_key_required`.
    public func seal(_ plaintext: [UInt8], for column: SecretColumn, row: String) throws(SesameError) -> String {
        try SealedValue.seal(plaintext, context: Self.context(column, row), keys: keys)
    }

    /// Opens the sealed secret of one row of a secret column.
    /// - Throws: `master_key_required`, `master_key_mismatch`, or `internal_failure` for a value that is not sealed.
    public func open(_ stored: [UInt8], for column: SecretColumn, row: String) throws(SesameError) -> [UInt8] {
        try SealedValue.open(stored, context: Self.context(column, row), keys: keys)
    }

    /// The stored form of a sign-in token's secret: HMAC-SHA256 under the deployment's token-hash key (random, sealed
    /// under the master key), so a copy of the database alone cannot test a single guess, however short the token.
    /// - Throws: `master_key_required`, `master_key_mismatch`, `unavailable`.
    public func tokenHash(_ secret: String) throws(SesameError) -> [UInt8] {
        HMAC.sha256(key: try tokenHashKey(), message: Array(secret.utf8))
    }

    /// The token-hash key, made on first use (concurrent first uses on several nodes agree on one).
    func tokenHashKey() throws(SesameError) -> [UInt8] {
        try cache.deploymentKey(Self.tokenHashKeyName, load: loadTokenHashKey)
    }

    private func loadTokenHashKey() throws(SesameError) -> [UInt8] {
        let name = Self.tokenHashKeyName
        var sealed = try StoreErrors.map { () throws(StoreError) in try store.secrets.deploymentKey(name: name) }
        if sealed == nil {
            let candidate = try seal(SecureRandom.bytes(count: 32), for: .deploymentKey, row: name)
            sealed = try StoreErrors.map { () throws(StoreError) in
                try store.secrets.createDeploymentKey(name: name, sealed: candidate, at: clock.now())
            }
        }
        return try open(Array((sealed ?? "").utf8), for: .deploymentKey, row: name)
    }

    /// Counts the stored secrets by the key that sealed them, and those still in clear.
    public func inventory() throws(SesameError) -> SecretInventory {
        var sealed: [String: Int] = [:]
        var plaintext: [SecretColumn: Int] = [:]
        for column in SecretColumn.allCases {
            try forEachSecret(in: column) { secret in
                if let id = SealedValue.keyID(of: secret.value) { sealed[id, default: 0] += 1 } else { plaintext[column, default: 0] += 1 }
            }
        }
        let legacy = try StoreErrors.map { () throws(StoreError) in try store.secrets.legacyTokenEvents(type: CompletionRoutine.eventType) }
        return SecretInventory(sealedByKey: sealed, plaintext: plaintext, legacyWebhookBodies: legacy.count)
    }

    /// Checks the master keys against the database before serving: every sealed value's key must be configured, and
    /// each such key must open what it sealed.
    /// - Throws: `master_key_required` when secrets are sealed and no key is configured; `master_key_mismatch` when
    ///   they are sealed under a key that is not configured, or a configured key does not open them.
    public func check() throws(SesameError) {
        let inventory = try inventory()
        let sealedIDs = inventory.sealedByKey.keys.sorted()
        if keys.all.isEmpty, !sealedIDs.isEmpty {
            throw SesameError(.masterKeyRequired, "the database holds secrets sealed under master key \(sealedIDs.joined(separator: ", ")) "
                              + "and no master key is configured")
        }
        let missing = sealedIDs.filter { keys.key(id: $0) == nil }
        guard missing.isEmpty else {
            throw SesameError(.masterKeyMismatch, "the database holds secrets sealed under master key \(missing.joined(separator: ", ")), "
                              + "which is not configured (configured: \(keys.ids.isEmpty ? "none" : keys.ids.joined(separator: ", ")))")
        }
        // The key IDs match; one value per key proves the key itself (an ID collision or an altered value fails here).
        var proven = Set<String>()
        for column in SecretColumn.allCases {
            try forEachSecret(in: column) { secret throws(SesameError) in
                guard let id = SealedValue.keyID(of: secret.value), !proven.contains(id) else { return }
                _ = try open(secret.value, for: column, row: secret.rowID)
                proven.insert(id)
            }
            if proven.count == sealedIDs.count { break }
        }
    }

    /// The start-up step: ``check()``, then seals every secret still in clear (and erases verification tokens that
    /// have expired), and makes the token-hash key. Idempotent; several nodes may run it at once.
    /// - Returns: how many values it sealed or erased.
    /// - Throws: as ``check()``; `master_key_required` when no key is configured.
    @discardableResult
    public func prepare() throws(SesameError) -> Int {
        try check()
        guard keys.current != nil else { throw SesameError(.masterKeyRequired, "no master key is configured") }
        let now = clock.now()
        var changed = try StoreErrors.map { () throws(StoreError) in
            try store.verificationRequests.eraseTokens(completedBefore: now.addingTimeInterval(-Double(CompletionRoutine.tokenLifetime)))
                + store.webhooks.eraseDeliveredTokens()
        }
        changed += try reseal { secret in SealedValue.keyID(of: secret.value) == nil }
        changed += try convertLegacyWebhookBodies()
        _ = try tokenHashKey()
        return changed
    }

    /// Re-seals every stored secret under the current key (and seals any still in clear), so previous keys are no
    /// longer needed once it returns.
    /// - Returns: how many values it re-sealed.
    /// - Throws: as ``check()``; `master_key_required` when no key is configured.
    @discardableResult
    public func rotate() throws(SesameError) -> Int {
        let changed = try prepare()
        guard let current = keys.current else { throw SesameError(.masterKeyRequired, "no master key is configured") }
        return changed + (try reseal { secret in SealedValue.keyID(of: secret.value) != current.id })
    }

    /// Seals (again) under the current key every stored secret `needs` selects; a value another node rewrote first is
    /// left to it.
    private func reseal(where needs: (StoredSecret) -> Bool) throws(SesameError) -> Int {
        var count = 0
        for column in SecretColumn.allCases {
            // Rewriting a value leaves its row key alone, so the pages after it are the same.
            try forEachSecret(in: column) { secret throws(SesameError) in
                guard needs(secret) else { return }
                let plaintext = SealedValue.isSealed(secret.value) ? try open(secret.value, for: column, row: secret.rowID) : secret.value
                let sealed = try seal(plaintext, for: column, row: secret.rowID)
                if try StoreErrors.map({ () throws(StoreError) in try store.secrets.replace(secret, with: Array(sealed.utf8)) }) {
                    count += 1
                }
            }
        }
        return count
    }

    /// Stored values read at once, at most: the start-up check goes through every verification token and webhook
    /// event, and must not hold them all.
    static let pageSize = 256

    /// Runs `body` on every stored value of `column`, a page at a time.
    private func forEachSecret(in column: SecretColumn, _ body: (StoredSecret) throws(SesameError) -> Void) throws(SesameError) {
        var after: String?
        while true {
            let page = try StoreErrors.map { () throws(StoreError) in try store.secrets.page(column, after: after, limit: Self.pageSize) }
            for secret in page { try body(secret) }
            guard page.count == Self.pageSize, let last = page.last else { return }
            after = last.rowID
        }
    }

    /// Takes the verification token out of webhook bodies written before tokens were kept apart: sealed beside the
    /// body while a delivery is pending, gone otherwise.
    private func convertLegacyWebhookBodies() throws(SesameError) -> Int {
        var count = 0
        let events = try StoreErrors.map { () throws(StoreError) in try store.secrets.legacyTokenEvents(type: CompletionRoutine.eventType) }
        for event in events {
            guard let (body, offset, token) = WebhookBodies.extractToken(event.body) else { continue }
            let sealed = event.pending ? try seal(token, for: .webhookToken, row: event.id) : nil
            if try StoreErrors.map({ () throws(StoreError) in
                try store.secrets.convertLegacyEvent(id: event.id, oldBody: event.body, body: body, tokenOffset: offset, sealedToken: sealed)
            }) {
                count += 1
            }
        }
        return count
    }
}

/// Webhook bodies whose verification token is kept apart from the stored bytes.
enum WebhookBodies {
    static let tokenKey = Array(#""verification_token":""#.utf8)

    /// Puts the token back: the exact bytes that are signed and sent.
    static func fill(_ body: [UInt8], token: [UInt8], at offset: Int) -> [UInt8]? {
        guard offset <= body.count else { return nil }
        return Array(body[..<offset] + token + body[offset...])
    }

    /// Takes the token out of a body that holds it: the last `"verification_token":"…"` (the key sorts last in `data`,
    /// after any metadata).
    static func extractToken(_ body: [UInt8]) -> (body: [UInt8], offset: Int, token: [UInt8])? {
        guard let key = lastRange(of: tokenKey, in: body) else { return nil }
        let start = key + tokenKey.count
        guard let end = body[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return (Array(body[..<start] + body[end...]), start, Array(body[start..<end]))
    }

    private static func lastRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).reversed().first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
