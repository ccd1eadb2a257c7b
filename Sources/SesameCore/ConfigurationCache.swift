import Foundation
import SesameStore
import Synchronization

/// Configuration that changes rarely, read from memory: the projects with their platforms, the API keys in use, the
/// projects' JWT secrets, the Authsignal tenants' default action outcomes, the inline-verification partners, their API
/// keys in use and approved apps, the token signing keys, and the deployment keys.
///
/// What tells the cache that something changed is the store's configuration version, one single-row read that database
/// triggers move forward in the same transaction as any change to projects, platforms, API keys, JWT secrets, action
/// outcomes, partners, partner API keys (not grants), partner apps or signing keys, whoever makes it (this node,
/// another node on the same PostgreSQL, the CLI). When it moved, everything version-scoped is dropped. A load that
/// raced with a change is not kept (``State/generation``).
///
/// The version is read at most once per ``refreshInterval`` (``Sesame/defaultConfigurationRefresh`` unless told; at
/// most a second), by the first lookup after the last reading aged: so a change made anywhere is served by every node
/// within that interval, a revoked key refused everywhere within it, at no database read per request. A change made
/// through this node's services (``noteChange()``) is seen by its next lookup at once: the change drops the node's
/// reading. With an interval of zero every request reads the version.
///
/// Within one request (``Sesame/servingOneRequest(_:)``) the first lookup fixes the version the request is served
/// from, and the later lookups use it, until the request changes configuration itself: a request is served from one
/// view of the configuration.
///
/// A key's last use is written at most once per ``touchInterval`` per node, not per request.
final class ConfigurationCache: Sendable {
    /// How often a key's `lastUsedAt` is written, at most, per node.
    static let touchInterval: TimeInterval = 60

    private struct State {
        var version: Int64?
        /// When ``version`` was read; `nil` once a change on this node made it stale.
        var versionReadAt: ContinuousClock.Instant?
        /// Moves with every change made through this node's services, so that a reading begun before one is not taken
        /// as fresh after it.
        var localChanges: UInt64 = 0
        /// Moves with every drop, so that a load begun before it is not stored after it.
        var generation: UInt64 = 0
        var projects: [Project]?
        /// Live keys by secret hash (only keys that exist: a miss is not remembered, so guesses cannot fill memory).
        var apiKeys: [[UInt8]: StoredAPIKey] = [:]
        var jwtSecrets: [String: [UInt8]] = [:]
        /// By project, then action code (projects of authenticated callers only).
        var actionOutcomes: [String: [String: String]] = [:]
        /// Partners by ID (only partners that exist).
        var partners: [String: PartnerRecord] = [:]
        /// Live partner API keys with their partners, by secret hash (only keys that exist).
        var partnerKeys: [[UInt8]: PartnerKey] = [:]
        /// Approved partner apps by project.
        var approvedPlatforms: [String: [Platform]] = [:]
        /// Every signing key, oldest generation first (never empty once loaded).
        var signingKeys: [SigningKeyRecord]?
    }

    private let state = Mutex(State())
    /// Deployment keys never change once made (rotating the master key re-seals the same key), so they stay.
    private let deploymentKeys = Mutex<[String: [UInt8]]>([:])
    private let touched = Mutex<[String: Date]>([:])

    /// How long one reading of the configuration version serves.
    let refreshInterval: Duration

    /// - Parameter refreshInterval: how long one reading of the version serves (zero: one read per request), clamped to
    ///   ``Sesame/longestConfigurationRefresh``.
    init(refreshInterval: Duration) {
        self.refreshInterval = min(max(refreshInterval, .zero), Sesame.longestConfigurationRefresh)
    }

    /// One request's reading of the configuration version. Each thread has one, which the requests it serves use one
    /// after another (``Sesame/servingOneRequest(_:)``), so a request costs no allocation; only its thread touches it.
    final class RequestMemo: @unchecked Sendable {
        var version: Int64?
        /// Whether a request is being served on this memo's thread.
        var serving = false

        /// The memo of the request being served on this thread, if any.
        static var current: RequestMemo? {
            guard let pointer = pthread_getspecific(key) else { return nil }
            let memo = Unmanaged<RequestMemo>.fromOpaque(pointer).takeUnretainedValue()
            return memo.serving ? memo : nil
        }

        /// This thread's memo, made on its first request; released when the thread exits.
        static func forThisThread() -> RequestMemo {
            if let pointer = pthread_getspecific(key) { return Unmanaged<RequestMemo>.fromOpaque(pointer).takeUnretainedValue() }
            let memo = RequestMemo()
            pthread_setspecific(key, Unmanaged.passRetained(memo).toOpaque())
            return memo
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<RequestMemo>.fromOpaque(pointer).release() }
            }
            precondition(status == 0, "pthread_key_create failed: \(status)")
            return key
        }()
    }

    /// Version reads made so far, by every request (tests count them).
    private let versionReads = Atomic<Int>(0)
    var versionReadCount: Int { versionReads.load(ordering: .relaxed) }

    /// Forgets this node's reading of the version, after a change made through its services: the next lookup (the
    /// current request's too) reads it again.
    func noteChange() {
        RequestMemo.current?.version = nil
        state.withLock { state in
            state.versionReadAt = nil
            state.localChanges &+= 1
        }
    }

    /// Makes sure the cache is at a version read within ``refreshInterval`` (reading the store's when it is not) and
    /// drops what that version outdates; returns the generation lookups store under.
    private func validate(_ store: Store) throws(SesameError) -> UInt64 {
        let memo = RequestMemo.current
        let now = ContinuousClock.now
        var changesBefore: UInt64 = 0
        let current = state.withLock { state -> UInt64? in
            changesBefore = state.localChanges
            guard let version = state.version else { return nil }
            // The request's reading still holds while the cache is at that version or a later one.
            if let read = memo?.version { return version >= read ? state.generation : nil }
            guard let readAt = state.versionReadAt, now - readAt < refreshInterval else { return nil }
            memo?.version = version
            return state.generation
        }
        if let current { return current }
        let version = try StoreErrors.map { () throws(StoreError) in try store.configurationVersion.current() }
        versionReads.add(1, ordering: .relaxed)
        memo?.version = version
        return state.withLock { state in
            if state.version != version {
                state = State(version: version, generation: state.generation &+ 1)
            }
            // A change made here while the version was being read may be newer than it: the next lookup reads again.
            if state.localChanges == changesBefore { state.versionReadAt = now }
            return state.generation
        }
    }

    /// A version-scoped value: from memory when current, else loaded and kept unless a change raced with the load.
    private func scoped<T>(_ store: Store, read: (State) -> T?, write: (inout State, T) -> Void, load: () throws(SesameError) -> T)
        throws(SesameError) -> T
    {
        let generation = try validate(store)
        if let cached = state.withLock({ read($0) }) { return cached }
        let loaded = try load()
        state.withLock { state in
            if state.generation == generation { write(&state, loaded) }
        }
        return loaded
    }

    /// Every project with its platforms, oldest first.
    func projects(_ store: Store, load: () throws(SesameError) -> [Project]) throws(SesameError) -> [Project] {
        try scoped(store, read: { $0.projects }, write: { $0.projects = $1 }, load: load)
    }

    /// The live API key with this secret hash, or `nil`.
    func apiKey(_ store: Store, secretHash: [UInt8], load: () throws(SesameError) -> StoredAPIKey?) throws(SesameError) -> StoredAPIKey? {
        try scoped(store, read: { $0.apiKeys[secretHash].map(Optional.some) }, write: { state, key in
            if let key { state.apiKeys[secretHash] = key }
        }, load: load)
    }

    /// A project's JWT secret (dropped with the version, so a project deleted and made again gets its new one).
    func jwtSecret(_ store: Store, projectID: String, load: () throws(SesameError) -> [UInt8]) throws(SesameError) -> [UInt8] {
        try scoped(store, read: { $0.jwtSecrets[projectID] }, write: { $0.jwtSecrets[projectID] = $1 }, load: load)
    }

    /// A tenant's default action outcomes by action code.
    func actionOutcomes(_ store: Store, projectID: String, load: () throws(SesameError) -> [String: String]) throws(SesameError) -> [String: String] {
        try scoped(store, read: { $0.actionOutcomes[projectID] }, write: { $0.actionOutcomes[projectID] = $1 }, load: load)
    }

    /// The partner with this ID, or `nil`.
    func partner(_ store: Store, id: String, load: () throws(SesameError) -> PartnerRecord?) throws(SesameError) -> PartnerRecord? {
        try scoped(store, read: { $0.partners[id].map(Optional.some) }, write: { state, partner in
            if let partner { state.partners[id] = partner }
        }, load: load)
    }

    /// A partner API key and its partner.
    typealias PartnerKey = (secret: PartnerSecretRecord, partner: PartnerRecord)

    /// The live partner API key with this secret hash and its partner, or `nil`.
    func partnerKey(_ store: Store, secretHash: [UInt8], load: () throws(SesameError) -> PartnerKey?) throws(SesameError) -> PartnerKey? {
        try scoped(store, read: { $0.partnerKeys[secretHash].map(Optional.some) }, write: { state, key in
            if let key { state.partnerKeys[secretHash] = key }
        }, load: load)
    }

    /// The platforms of a project's approved partner apps.
    func approvedPlatforms(_ store: Store, projectID: String, load: () throws(SesameError) -> [Platform]) throws(SesameError) -> [Platform] {
        try scoped(store, read: { $0.approvedPlatforms[projectID] }, write: { $0.approvedPlatforms[projectID] = $1 }, load: load)
    }

    /// The token signing keys; an empty list (before the first key is made) is not kept.
    func signingKeys(_ store: Store, load: () throws(SesameError) -> [SigningKeyRecord]) throws(SesameError) -> [SigningKeyRecord] {
        try scoped(store, read: { $0.signingKeys }, write: { state, keys in
            if !keys.isEmpty { state.signingKeys = keys }
        }, load: load)
    }

    /// A deployment key, opened once.
    func deploymentKey(_ name: String, load: () throws(SesameError) -> [UInt8]) throws(SesameError) -> [UInt8] {
        if let key = deploymentKeys.withLock({ $0[name] }) { return key }
        let key = try load()
        deploymentKeys.withLock { $0[name] = key }
        return key
    }

    /// Whether key `id`'s last use should be written now: its first use on this node, or ``touchInterval`` after the
    /// last write. Answers `true` once per interval, whichever thread asks.
    func shouldTouch(keyID: String, at now: Date) -> Bool {
        touched.withLock { touched in
            if let last = touched[keyID], now.timeIntervalSince(last) < Self.touchInterval, now >= last { return false }
            touched[keyID] = now
            return true
        }
    }
}
