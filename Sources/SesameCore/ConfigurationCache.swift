import Foundation
import SesameStore
import Synchronization

/// Configuration that changes rarely, read from memory: the projects with their platforms, the API keys in use, the
/// projects' JWT secrets, the Authsignal tenants' default action outcomes and the deployment keys.
///
/// Every lookup first reads the store's configuration version, one single-row read that database triggers move
/// forward in the same transaction as any change to projects, platforms, API keys, JWT secrets or action outcomes, whoever makes it (this node,
/// another node on the same PostgreSQL, the CLI). When it moved, everything version-scoped is dropped, so a request
/// that starts after a change committed anywhere sees it: a revoked key fails on every node from the next request.
/// A load that raced with a change is not kept (``State/generation``).
///
/// Within one request (``Sesame/servingOneRequest(_:)``) the version is read once, at its first lookup, and the later
/// lookups use that reading, until the request changes configuration itself (``noteChange()``): a request is served
/// from one view of the configuration, taken after it started.
///
/// A key's last use is written at most once per ``touchInterval`` per node, not per request.
final class ConfigurationCache: Sendable {
    /// How often a key's `lastUsedAt` is written, at most, per node.
    static let touchInterval: TimeInterval = 60

    private struct State {
        var version: Int64?
        /// Moves with every drop, so that a load begun before it is not stored after it.
        var generation: UInt64 = 0
        var projects: [Project]?
        /// Live keys by secret hash (only keys that exist: a miss is not remembered, so guesses cannot fill memory).
        var apiKeys: [[UInt8]: APIKeyRecord] = [:]
        var jwtSecrets: [String: [UInt8]] = [:]
        /// By project, then action code (projects of authenticated callers only).
        var actionOutcomes: [String: [String: String]] = [:]
    }

    private let state = Mutex(State())
    /// Deployment keys never change once made (rotating the master key re-seals the same key), so they stay.
    private let deploymentKeys = Mutex<[String: [UInt8]]>([:])
    private let touched = Mutex<[String: Date]>([:])

    init() {}

    /// One request's reading of the configuration version, used by one request on one thread at a time.
    final class RequestMemo: @unchecked Sendable {
        var version: Int64?
        /// The memo of the request being served on this thread, if any.
        @TaskLocal static var current: RequestMemo?
    }

    /// Version reads made so far, by every request (tests count them).
    private let versionReads = Atomic<Int>(0)
    var versionReadCount: Int { versionReads.load(ordering: .relaxed) }

    /// Forgets the current request's reading of the version, after the request changed configuration.
    func noteChange() { RequestMemo.current?.version = nil }

    /// Reads the store's version (once per request) and drops what it outdates; returns the generation lookups store
    /// under.
    private func validate(_ store: Store) throws(SesameError) -> UInt64 {
        let memo = RequestMemo.current
        // The request's reading still holds while the cache is at that version or a later one.
        if let read = memo?.version, let generation = state.withLock({ $0.version.map { $0 >= read } == true ? $0.generation : nil }) {
            return generation
        }
        let version = try StoreErrors.map { () throws(StoreError) in try store.configurationVersion.current() }
        versionReads.add(1, ordering: .relaxed)
        memo?.version = version
        return state.withLock { state in
            if state.version != version {
                state = State(version: version, generation: state.generation &+ 1)
            }
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
    func apiKey(_ store: Store, secretHash: [UInt8], load: () throws(SesameError) -> APIKeyRecord?) throws(SesameError) -> APIKeyRecord? {
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
