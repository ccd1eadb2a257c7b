import Foundation
import SesameCrypto
import SesameStore

/// An API key of a project; its secret is shown once at creation and stored only as a hash.
public struct APIKey: Sendable, Hashable {
    public let id: String
    public let projectID: String
    public var name: String
    public var scopes: Set<Scope>
    public let createdAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    /// What a key may do.
    public struct Scope: RawRepresentable, Hashable, Sendable, Comparable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Read the project, its platforms and relying party.
        public static let projectRead = Scope(rawValue: "project.read")
        /// Change the project, its platforms and relying party.
        public static let projectWrite = Scope(rawValue: "project.write")
        /// Issue and consume challenges.
        public static let challengesWrite = Scope(rawValue: "challenges.write")
        /// Manage users and their passkeys and sessions.
        public static let usersWrite = Scope(rawValue: "users.write")
        /// Read users and their passkeys and sessions.
        public static let usersRead = Scope(rawValue: "users.read")
        /// Every scope of the management API.
        public static let all: Set<Scope> = [.projectRead, .projectWrite, .challengesWrite, .usersRead, .usersWrite]
        /// An Authsignal tenant secret (server API, HTTP Basic); such a key holds this scope alone and works nowhere else.
        public static let authsignalTenant = Scope(rawValue: "authsignal.tenant")
        public static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }
    }
}

/// Creates, checks and revokes API keys.
public struct APIKeyService: Sendable {
    let store: Store
    let clock: any SesameClock
    let cache: ConfigurationCache
    /// Every secret starts with this, so leaked keys are easy to find by scanners.
    public static let secretPrefix = "sesame_sk_"

    /// Creates a key and returns it with its secret, which is never retrievable again.
    public func create(projectID: String, name: String, scopes: Set<APIKey.Scope>) throws(SesameError) -> (key: APIKey, secret: String) {
        guard !scopes.isEmpty, scopes.isSubset(of: APIKey.Scope.all) || scopes == [.authsignalTenant] else {
            throw SesameError(.invalidArgument, "scopes must be a non-empty subset of \(APIKey.Scope.all.map(\.rawValue).sorted())")
        }
        let name = try ProjectService.checkName(name)
        let secret = Identifiers.secret(prefix: Self.secretPrefix)
        let record = APIKeyRecord(id: Identifiers.unique(), projectID: projectID, name: name, secretHash: Identifiers.hash(secret),
                                  scopes: scopes.map(\.rawValue).sorted(), createdAt: clock.now(), lastUsedAt: nil, revokedAt: nil)
        try StoreErrors.map { () throws(StoreError) in try store.apiKeys.create(record) }
        cache.noteChange()
        return (APIKey(record: record), secret)
    }

    /// The live key whose secret is `secret`, which must hold `scope`.
    /// - Throws: `unauthorized` for an unknown or revoked secret, `forbidden` when the scope is missing.
    public func authenticate(_ secret: String, requiring scope: APIKey.Scope) throws(SesameError) -> APIKey {
        guard secret.hasPrefix(Self.secretPrefix), secret.utf8.count < 200 else {
            throw SesameError(.unauthorized, "not an API key")
        }
        let hash = Identifiers.hash(secret)
        let stored = try cache.apiKey(store, secretHash: hash) { () throws(SesameError) in
            try StoreErrors.map { () throws(StoreError) in try store.apiKeys.find(secretHash: hash) }.map(StoredAPIKey.init)
        }
        // The lookup is by hash; compare again in constant time so no code path depends on a partial match.
        guard let stored, stored.key.revokedAt == nil, constantTimeEquals(stored.secretHash, hash) else {
            throw SesameError(.unauthorized, "unknown or revoked API key")
        }
        let key = stored.key
        guard key.scopes.contains(scope) else { throw SesameError(.forbidden, "the API key lacks scope \(scope.rawValue)") }
        // Bookkeeping, at most once a minute per key and node; a failed write does not refuse the key.
        let now = clock.now()
        if cache.shouldTouch(keyID: key.id, at: now) { try? store.apiKeys.touch(id: key.id, at: now) }
        return key
    }

    /// The project's keys, revoked ones included.
    public func list(projectID: String) throws(SesameError) -> [APIKey] {
        try StoreErrors.map { () throws(StoreError) in try store.apiKeys.list(projectID: projectID).map(APIKey.init) }
    }

    /// Revokes a key; it stops working at once on every node.
    /// - Throws: `not_found`.
    public func revoke(projectID: String, id: String) throws(SesameError) {
        let revoked = try StoreErrors.map { () throws(StoreError) in try store.apiKeys.revoke(projectID: projectID, id: id, at: clock.now()) }
        cache.noteChange()
        guard revoked else { throw SesameError(.notFound, "API key") }
    }
}

/// A stored API key as the configuration cache keeps it: read once into its ``APIKey``, with the hash it is found by.
struct StoredAPIKey: Sendable {
    let key: APIKey
    let secretHash: [UInt8]

    init(_ record: APIKeyRecord) {
        key = APIKey(record: record)
        secretHash = record.secretHash
    }
}

extension APIKey {
    init(record: APIKeyRecord) {
        self.init(id: record.id, projectID: record.projectID, name: record.name, scopes: Set(record.scopes.map(Scope.init)),
                  createdAt: record.createdAt, lastUsedAt: record.lastUsedAt, revokedAt: record.revokedAt)
    }
}
