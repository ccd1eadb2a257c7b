import Foundation
import Synchronization

/// What an acknowledged write survives.
public enum Durability: String, Sendable, CaseIterable {
    /// SIGKILL, an operating-system crash and power loss: a write is acknowledged once it is on stable storage (the
    /// default).
    case full
    /// SIGKILL of Sesame (the write is in the database's log, or with the PostgreSQL server), but not an operating
    /// system crash or power loss, which may lose the last moments of writes, never the database's consistency:
    /// SQLite acknowledges before the log is flushed, PostgreSQL runs with `synchronous_commit = off` (`on` for
    /// ``full``, whatever the server's default).
    case process
}

/// The storage entry point: a migrated database and the repositories over it.
///
/// Repositories are written once in portable SQL, so SQLite and PostgreSQL behave the same. Every call blocks the
/// calling thread; callers are HTTP worker threads, never the cooperative pool.
public final class Store: Repositories, Sendable {
    /// The database the repositories use.
    public let database: any SQLDatabase
    /// The rate-limit counters, which decide in the serving process (see ``RateLimitRepository``).
    let rateCounters: WindowCounters
    /// On SQLite, where authentication ceremonies keep their challenges (see ``PendingChallenges``); `nil` on
    /// PostgreSQL, where every challenge is a row any node can take.
    public let pendingChallenges: PendingChallenges?
    /// On SQLite, where passkey sign-in tokens wait for their exchange (see ``PendingTokens``); `nil` on PostgreSQL,
    /// where every token is a row any node can take.
    public let pendingTokens: PendingTokens?
    /// On SQLite, where usernameless Authsignal sign-ins keep their actions until they conclude (see
    /// ``PendingActions``); `nil` on PostgreSQL, where every action is a row any node can read.
    public let pendingActions: PendingActions?
    /// On SQLite, where inline verification counts the calls on each request (see ``RequestCallCounters``); `nil` on
    /// PostgreSQL, where each request's row counts them for every node.
    public let requestCallCounters: RequestCallCounters?

    /// Wraps an open database and applies pending migrations.
    /// - Throws: ``StoreError/Code/migrationFailed`` when the schema cannot be brought up to date.
    public convenience init(database: any SQLDatabase) throws(StoreError) {
        try self.init(database: database, rateLimitSharing: RateLimitRepository.sharingInterval)
    }

    /// Wraps an open database whose nodes share rate-limit counts every `rateLimitSharing` (PostgreSQL only).
    /// - Parameters:
    ///   - requestCalls: the most requests ``requestCallCounters`` holds.
    ///   - heldTokens: the most sign-in tokens ``pendingTokens`` holds.
    init(database: any SQLDatabase, rateLimitSharing: Duration, requestCalls: Int = RequestCallCounters.defaultCapacity,
         heldTokens: Int = PendingTokens.defaultCapacity) throws(StoreError) {
        self.database = database
        rateCounters = WindowCounters(sharingInterval: database.dialect == .sqlite ? nil : rateLimitSharing)
        pendingChallenges = database.dialect == .sqlite ? PendingChallenges() : nil
        pendingTokens = database.dialect == .sqlite ? PendingTokens(capacity: heldTokens) : nil
        pendingActions = database.dialect == .sqlite ? PendingActions() : nil
        requestCallCounters = database.dialect == .sqlite ? RequestCallCounters(capacity: requestCalls) : nil
        try Migrator.migrate(database)
    }

    /// Opens `sqlite:PATH` (creating folders as needed) or a `postgres://` / `postgresql://` libpq URI, and
    /// applies pending migrations.
    /// - Parameter url: for example `sqlite:/var/lib/sesame/sesame.db` or `postgres://sesame@/sesame?host=/run/pg`.
    /// - Throws: ``StoreError/Code/invalidData`` for an unsupported URL, ``StoreError/Code/unavailable`` when the
    ///   database cannot be opened, ``StoreError/Code/migrationFailed`` when migrating fails.
    /// - Parameter durability: what an acknowledged write survives (``Durability/full`` unless told).
    public static func open(_ url: String, durability: Durability = .full) throws(StoreError) -> Store {
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }  // sqlite:///abs/path
            guard !path.isEmpty else { throw StoreError(.invalidData, "sqlite: URL without a path") }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw StoreError(.unavailable, "cannot create the database folder")
            }
            return try Store(database: SQLiteDatabase(path: path, durability: durability))
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            return try Store(database: PostgresDatabase(url: url, durability: durability))
        }
        // The URL is not echoed: it may carry a password.
        throw StoreError(.invalidData, "unsupported store URL: expected sqlite:PATH or postgres://...")
    }

    /// The newest schema version this build knows.
    public static var schemaVersion: Int64 { Schema.migrations.map(\.version).max() ?? 0 }

    /// Checks that the database answers (`SELECT 1`).
    /// - Throws: ``StoreError/Code/unavailable`` (or another code) when it does not.
    public func healthCheck() throws(StoreError) {
        let rows = try database.query("SELECT 1 AS ok", [])
        guard try rows.first?.integer("ok") == 1 else {
            throw StoreError(.internalFailure, "health check returned an unexpected row")
        }
    }

    /// Runs `body` in one transaction whose repositories all use that transaction, so several operations commit or
    /// roll back together.
    ///
    /// Repository calls inside join the transaction (their own transactions nest into it). The repositories of
    /// `transaction` must not be used after `body` returns, nor from another thread: doing so traps.
    /// `body` may run more than once (busy database, deadlock), so it must not have effects outside the database but
    /// those it registers to undo with the transaction's `database.onRollback` (see ``SQLConnection/onRollback(_:)``).
    public func transaction<T>(_ body: (StoreTransaction) throws(StoreError) -> T) throws(StoreError) -> T {
        try database.transaction { connection throws(StoreError) -> T in try Self.scoped(connection, body) }
    }

    /// Runs `body` in one bookkeeping transaction (counters and last-use times: atomic, but its commit does not wait
    /// for stable storage; see ``SQLDatabase/bookkeepingTransaction(_:)``), on the same terms as ``transaction(_:)``.
    public func bookkeeping<T>(_ body: (StoreTransaction) throws(StoreError) -> T) throws(StoreError) -> T {
        try database.bookkeepingTransaction { connection throws(StoreError) -> T in try Self.scoped(connection, body) }
    }

    private static func scoped<T>(_ connection: any SQLConnection, _ body: (StoreTransaction) throws(StoreError) -> T) throws(StoreError) -> T {
        let scope = TransactionScope(connection: connection)
        defer { scope.end() }
        return try body(StoreTransaction(database: scope))
    }
}

extension Store {
    /// Fixed-window rate-limit counters, each call its own atomic step (never part of a transaction: they decide in
    /// this process's memory).
    public var rateLimits: RateLimitRepository { RateLimitRepository(database: database, counters: rateCounters) }
}

/// The repositories of one open transaction; see ``Store/transaction(_:)``.
public struct StoreTransaction: Repositories {
    /// A database whose statements all run in the open transaction.
    public let database: any SQLDatabase
}

@available(*, unavailable) extension StoreTransaction: Sendable {}

/// A database view of one open transaction: statements go to its connection, and `transaction` joins it.
///
/// `@unchecked Sendable` so that repositories (which are `Sendable`) can hold it. The invariant, checked at run time
/// on every call: it is used only on the thread that runs the transaction body, and only until the body returns.
private final class TransactionScope: SQLDatabase, @unchecked Sendable {
    private let connection: any SQLConnection
    private let thread = Thread.current
    private let active = Atomic<Bool>(true)

    init(connection: any SQLConnection) {
        self.connection = connection
    }

    var dialect: SQLDialect { connection.dialect }

    func end() { active.store(false, ordering: .releasing) }

    private func check() {
        precondition(active.load(ordering: .acquiring), "a StoreTransaction was used after its transaction ended")
        precondition(Thread.current === thread, "a StoreTransaction was used from another thread")
    }

    func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        check()
        return try body(connection)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        check()
        return try connection.query(sql, parameters)
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        check()
        return try connection.execute(sql, parameters)
    }

    func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {
        check()
        try connection.enqueue(sql, parameters)
    }

    func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {
        check()
        try connection.prefetch(sql, parameters)
    }

    func bookkeeping(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try query(sql, parameters)
    }

    func bookkeepingTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(body)
    }

    func onRollback(_ giveBack: @escaping () -> Void) {
        check()
        connection.onRollback(giveBack)
    }

    func onCommit(_ followUp: @escaping () -> Void) {
        check()
        connection.onCommit(followUp)
    }
}

/// The repositories over one database: the store's own (autocommit) or an open transaction's.
public protocol Repositories {
    /// Where the repositories' statements run.
    var database: any SQLDatabase { get }
}

extension Repositories {
    /// Projects and their relying parties.
    public var projects: ProjectRepository { ProjectRepository(database: database) }
    /// The platforms (web, Android, Apple) of projects.
    public var platforms: PlatformRepository { PlatformRepository(database: database) }
    /// Hashed API keys.
    public var apiKeys: APIKeyRepository { APIKeyRepository(database: database) }
    /// One-time challenges.
    public var challenges: ChallengeRepository { ChallengeRepository(database: database) }
    /// Users of projects.
    public var users: UserRepository { UserRepository(database: database) }
    /// Passkeys.
    public var credentials: CredentialRepository { CredentialRepository(database: database) }
    /// Signed-in sessions (hashed secrets).
    public var sessions: SessionRepository { SessionRepository(database: database) }
    /// Single-use sign-in tokens (hashed secrets).
    public var tokens: TokenRepository { TokenRepository(database: database) }
    /// Inline-verification partners, their secrets, apps and links.
    public var partners: PartnerRepository { PartnerRepository(database: database) }
    /// Partners' return origins and the web widget's site keys.
    public var partnerWeb: PartnerWebRepository { PartnerWebRepository(database: database) }
    /// Partners' verification requests.
    public var verificationRequests: VerificationRequestRepository { VerificationRequestRepository(database: database) }
    /// Webhook endpoints and the outbox.
    public var webhooks: WebhookRepository { WebhookRepository(database: database) }
    /// Verification-token signing keys.
    public var signingKeys: SigningKeyRepository { SigningKeyRepository(database: database) }
    /// Every stored secret the server reads back, and the sealed deployment keys.
    public var secrets: SecretRepository { SecretRepository(database: database) }
    /// The counter that every change to projects, platforms, API keys or JWT secrets moves forward.
    public var configurationVersion: ConfigurationVersionRepository { ConfigurationVersionRepository(database: database) }
    /// The loaded FIDO metadata (MDS3) BLOB and its entries.
    public var metadata: MetadataRepository { MetadataRepository(database: database) }
    /// The Authsignal face's users, actions, verified contacts and default action outcomes.
    public var authsignal: AuthsignalRepository { AuthsignalRepository(database: database) }
}
