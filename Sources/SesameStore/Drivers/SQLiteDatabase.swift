internal import CSQLite
import Foundation

/// An embedded SQLite database in one file: WAL journal, foreign keys on, 5 s busy timeout, and every acknowledged
/// write on stable storage.
///
/// Reads (`SELECT` outside a transaction) run on the writer connection when no write holds it (its page cache stays
/// valid, since only it writes, where another connection drops its cache after every commit and reads the pages
/// again), and otherwise on a small pool of reader connections (default 4), side by side under WAL. Every write
/// (transactions, and statements that are not a `SELECT`) runs on one writer connection, one at a time in this
/// process (so threads queue on a lock, never in SQLite's sleeping busy handler), inside `BEGIN IMMEDIATE` (so a check
/// followed by a write in one transaction is atomic across threads and processes). It commits at `synchronous=NORMAL`
/// and then waits for ``WALSync`` to flush the log: the durability of `synchronous=FULL`, at one fsync per group of
/// concurrent commits instead of one per commit. A busy database (another process writing) is retried a few times,
/// then the call fails with ``StoreError/Code/unavailable``. The file must be a real path: `:memory:` would give each
/// connection its own empty database.
public final class SQLiteDatabase: SQLDatabase {
    public var dialect: SQLDialect { .sqlite }
    private let readers: ConnectionPool<SQLiteConnection>
    private let writer: Writer
    let sync: WALSync
    /// What an acknowledged write survives: with ``Durability/process`` a commit does not wait for the log's flush.
    public let durability: Durability
    private static let attempts = 4
    /// The log's length, in pages, at which the committing writer copies it into the database file (SQLite's automatic
    /// checkpoint; its default is 1,000). A checkpoint flushes the log and the database file while it holds the writer,
    /// so every write waits for it: at 10,000 pages (about 40 MB of log on disk) that stall comes a tenth as often.
    static let checkpointPages = 10_000

    /// Opens (creating if needed) the database file at `path`; the first connection is opened now to report errors.
    /// - Parameters:
    ///   - path: the file path; its folder must exist.
    ///   - poolSize: the most reader connections open at once.
    ///   - acquireTimeout: seconds a caller waits for a free reader before ``StoreError/Code/unavailable``.
    ///   - durability: what an acknowledged write survives.
    /// - Throws: ``StoreError/Code/unavailable`` when the file cannot be opened.
    public init(path: String, poolSize: Int = 4, acquireTimeout: Double = 10, durability: Durability = .full) throws(StoreError) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw StoreError(.invalidData, "SQLite needs a file path")
        }
        self.durability = durability
        let open: @Sendable () throws(StoreError) -> SQLiteConnection = { () throws(StoreError) in try SQLiteConnection(path: path) }
        readers = ConnectionPool(size: max(1, poolSize), acquireTimeout: acquireTimeout, open: open, isReusable: { $0.isReusable })
        let writerConnection = try SQLiteConnection(path: path, synchronous: "NORMAL")
        try writerConnection.execute("PRAGMA wal_autocheckpoint=\(Self.checkpointPages)", [])
        writer = Writer(writerConnection)
        sync = try WALSync(connection: try open())
    }

    public func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(durability: durability, body)
    }

    public func bookkeeping(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try transaction(durability: .process) { connection throws(StoreError) in try connection.query(sql, parameters) }
    }

    public func bookkeepingTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try transaction(durability: .process, body)
    }

    /// A write transaction whose commit is acknowledged at `durability`: with ``Durability/full`` once the log is flushed.
    private func transaction<T>(durability: Durability, _ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let (value, ticket) = try withTransientRetry(attempts: Self.attempts) { () throws(StoreError) -> (T, UInt64?) in
            sync.noteWriter()
            do throws(StoreError) {
                return try writer.run { connection throws(StoreError) -> (T, UInt64?) in
                    let before = connection.totalChanges
                    let value = try connection.runTransaction(body)
                    // A transaction that changed nothing has nothing to make durable.
                    guard connection.totalChanges != before else {
                        sync.noteEnd()
                        return (value, nil)
                    }
                    return (value, sync.noteCommit())
                }
            } catch {
                sync.noteEnd()
                throw error
            }
        }
        if let ticket, durability == .full { try sync.waitUntilDurable(ticket) }
        return value
    }

    public func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        guard Self.isRead(sql) else {
            return try transaction { connection throws(StoreError) in try connection.query(sql, parameters) }
        }
        let read = { (connection: SQLiteConnection) throws(StoreError) -> [SQLRow] in try connection.query(sql, parameters) }
        return try withTransientRetry(attempts: Self.attempts) { () throws(StoreError) -> [SQLRow] in
            if let rows = try writer.runIfFree(read) { return rows }
            return try readers.withConnection(read)
        }
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try transaction { connection throws(StoreError) in try connection.execute(sql, parameters) }
    }

    /// The writer connection, lent to one thread at a time.
    private final class Writer: @unchecked Sendable {
        // The invariant that makes this `@unchecked Sendable`: `connection` is touched only while `lock` is held.
        private let lock = NSLock()
        private let connection: SQLiteConnection

        init(_ connection: SQLiteConnection) { self.connection = connection }

        func run<T>(_ body: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
            lock.lock()
            defer { lock.unlock() }
            return try body(connection)
        }

        /// `body` on the connection if no other thread holds it, else `nil` at once.
        func runIfFree<T>(_ body: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T? {
            guard lock.try() else { return nil }
            defer { lock.unlock() }
            return try body(connection)
        }
    }

    /// Whether `sql` only reads: it starts with `SELECT` (anything else, `DELETE ... RETURNING` included, writes).
    static func isRead(_ sql: String) -> Bool {
        let start = sql.utf8.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }.prefix(6)
        return start.count == 6 && zip(start, "SELECT".utf8).allSatisfy { $0 & 0xDF == $1 }
    }

    /// Rewrites `$n` placeholders to SQLite's numbered `?n`, leaving quoted strings, identifiers and comments alone.
    ///
    /// SQLite reads `$1` as a *named* parameter numbered by first appearance, so without the rewrite `$2 ... $1`
    /// would bind in the wrong order.
    static func rewritePlaceholders(_ sql: String) -> String {
        var output: [UInt8] = []
        let bytes = Array(sql.utf8)
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // Copy a quoted run; a doubled quote inside is an escaped quote and keeps the run going.
                output.append(byte)
                index += 1
                while index < bytes.count {
                    output.append(bytes[index])
                    if bytes[index] == byte { break }
                    index += 1
                }
                index += 1
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") {
                    output.append(bytes[index])
                    index += 1
                }
            case UInt8(ascii: "$")
            where index + 1 < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index + 1]):
                output.append(UInt8(ascii: "?"))
                index += 1
            default:
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// One SQLite connection (`sqlite3 *`), used by one thread at a time: a reader from the pool, the writer, or the log's flusher.
final class SQLiteConnection: SQLConnection {
    let dialect = SQLDialect.sqlite
    private let handle: OpaquePointer
    /// Set while a transaction is open; `aborted` once a statement in it failed.
    private var inTransaction = false
    private var aborted = false
    private var hooks = TransactionHooks()

    /// SQLite's memory statistics off, before the process's first connection: nothing reads them, and they cost a
    /// global mutex on every allocation of every connection.
    private static let withoutMemoryStatistics: Void = { _ = csqlite_disable_memory_statistics() }()

    /// Opens a connection; `synchronous` is `FULL` unless told (the writer's is `NORMAL`, with ``WALSync`` after it).
    init(path: String, synchronous: String = "FULL") throws(StoreError) {
        _ = Self.withoutMemoryStatistics
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw StoreError(.unavailable, "cannot open SQLite database: \(message)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
        do throws(StoreError) {
            // journal_mode answers with a row; changing it needs the lock, which the busy timeout waits for.
            let mode = try run("PRAGMA journal_mode=WAL", []).rows.first
            guard case .text(let name)? = mode?.values.first, name.lowercased() == "wal" else {
                throw StoreError(.unavailable, "SQLite refused WAL journal mode")
            }
            try run("PRAGMA synchronous=\(synchronous)", [])
            try run("PRAGMA foreign_keys=ON", [])
        } catch {
            throw StoreError(error.code == .internalFailure ? .unavailable : error.code, error.detail)
        }
    }

    deinit {
        finalizeStatements()
        sqlite3_close_v2(handle)
    }

    /// Whether the connection may return to the pool: no transaction left open.
    var isReusable: Bool { sqlite3_get_autocommit(handle) != 0 && !inTransaction }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try run(sql, parameters).rows
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try run(sql, parameters).changes
    }

    /// Changes made by every statement of the connection so far (triggers' included).
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT`, rolling back on any throw; after a failed statement, the
    /// body's later statements fail too.
    func runTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try run("BEGIN IMMEDIATE", [])
        inTransaction = true
        aborted = false
        defer { inTransaction = false }
        do throws(StoreError) {
            let result = try body(self)
            if aborted {
                throw StoreError(.internalFailure, "a statement in the transaction failed and its error was ignored")
            }
            inTransaction = false
            try run("COMMIT", [])
            hooks.committed()
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            }
            hooks.rolledBack()
            throw error
        }
    }

    func onRollback(_ giveBack: @escaping () -> Void) {
        if inTransaction { hooks.onRollback(giveBack) }
    }

    func onCommit(_ followUp: @escaping () -> Void) {
        if inTransaction { hooks.onCommit(followUp) } else { followUp() }
    }

    /// Flushes the write-ahead log to stable storage; whether it worked.
    func syncWAL() -> Bool { csqlite_sync_wal(handle) == SQLITE_OK }

    /// Prepares, binds and steps one statement to completion.
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> (rows: [SQLRow], changes: Int) {
        if inTransaction && aborted {
            throw StoreError(.internalFailure, "transaction already failed; statement not run")
        }
        do throws(StoreError) {
            return try step(sql, parameters)
        } catch {
            if inTransaction { aborted = true }
            throw error
        }
    }

    private func step(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> (rows: [SQLRow], changes: Int) {
        guard let prepared = try prepared(sql) else { return ([], 0) }  // empty statement
        let statement = prepared.statement
        // The statement goes back to the cache reset and unbound, whatever happens here.
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == parameters.count else {
            throw StoreError(.internalFailure, "statement has \(expected) parameters, \(parameters.count) given")
        }
        for (offset, parameter) in parameters.enumerated() {
            try bind(parameter, at: Int32(offset + 1), in: statement)
        }
        let count = prepared.columns.count
        var rows: [SQLRow] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { break }
            guard result == SQLITE_ROW else { throw error(result, while: "step") }
            var values: [SQLValue] = []
            values.reserveCapacity(count)
            for column in 0..<Int32(count) {
                values.append(try read(column, of: statement))
            }
            rows.append(SQLRow(columns: prepared.columns, values: values))
        }
        return (rows, Int(sqlite3_changes(handle)))
    }

    /// A prepared statement and its result columns, kept per connection by SQL text.
    private struct Prepared {
        let statement: OpaquePointer
        let columns: [String]
    }

    /// Prepared statements by their SQL text as the repositories wrote it: each is parsed once per connection.
    private var statements: [String: Prepared] = [:]
    /// More distinct statements than this (queries built from filters) and the cache starts over.
    private static let statementCacheLimit = 256

    /// The prepared statement for `sql`, from the cache or prepared now; `nil` for an empty statement.
    private func prepared(_ sql: String) throws(StoreError) -> Prepared? {
        if let cached = statements[sql] { return cached }
        let rewritten = SQLiteDatabase.rewritePlaceholders(sql)
        var statement: OpaquePointer?
        var trailingStatement = false
        let status = rewritten.withCString { text in
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            // `tail` points into `text`, which lives only inside this closure: read it here.
            if let tail { trailingStatement = String(cString: tail).contains { !$0.isWhitespace && $0 != ";" } }
            return status
        }
        guard status == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw error(status, while: "prepare")
        }
        guard let statement else { return nil }
        if trailingStatement {
            sqlite3_finalize(statement)
            throw StoreError(.invalidData, "only one statement per call")
        }
        let count = Int(sqlite3_column_count(statement))
        let prepared = Prepared(statement: statement, columns: (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) })
        if statements.count >= Self.statementCacheLimit { finalizeStatements() }
        statements[sql] = prepared
        return prepared
    }

    private func finalizeStatements() {
        for prepared in statements.values { sqlite3_finalize(prepared.statement) }
        statements.removeAll()
    }

    private func bind(_ value: SQLValue, at index: Int32, in statement: OpaquePointer) throws(StoreError) {
        let status: Int32
        switch value {
        case .null:
            status = sqlite3_bind_null(statement, index)
        case .integer(let number):
            status = sqlite3_bind_int64(statement, index, number)
        case .text(let text):
            try checkStorableText(text, index: Int(index))
            // The string's own UTF-8, which SQLite copies (no copy of ours); a nil pointer would bind NULL, so an empty
            // string is bound from a real one.
            var text = text
            status = text.withUTF8 { utf8 in
                guard let base = utf8.baseAddress, !utf8.isEmpty else {
                    return sqlite3_bind_text(statement, index, "", 0, csqlite_transient())
                }
                guard let length = Int32(exactly: utf8.count) else { return SQLITE_TOOBIG }
                return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    sqlite3_bind_text(statement, index, $0, length, csqlite_transient())
                }
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                // A nil pointer would bind NULL; an empty blob must stay an empty blob.
                status = sqlite3_bind_zeroblob(statement, index, 0)
            } else {
                status = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), csqlite_transient())
                }
            }
        }
        guard status == SQLITE_OK else { throw error(status, while: "bind") }
    }

    private func read(_ column: Int32, of statement: OpaquePointer) throws(StoreError) -> SQLValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_TEXT:
            let length = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite3_column_bytes(statement, column))
            guard length > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        default:
            let number = sqlite3_column_double(statement, column)
            guard let integer = Int64(exactly: number) else {
                throw StoreError(.invalidData, "floating-point column values are not supported")
            }
            return .integer(integer)
        }
    }

    /// Maps an SQLite result code to a ``StoreError``; busy and locked are transient.
    private func error(_ status: Int32, while step: String) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        let detail = "SQLite \(step) failed (\(status)): \(message)"
        switch status {
        case csqlite_constraint_unique(), csqlite_constraint_primarykey():
            return StoreError(.conflict, detail)
        case csqlite_constraint_foreignkey():
            return StoreError(.notFound, detail)
        case _ where status & 0xFF == SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_RANGE:
            return StoreError(.invalidData, detail)
        case _ where status & 0xFF == SQLITE_BUSY, _ where status & 0xFF == SQLITE_LOCKED:
            return StoreError(.unavailable, detail, transient: true)
        case _ where status & 0xFF == SQLITE_CANTOPEN, _ where status & 0xFF == SQLITE_IOERR,
            SQLITE_FULL, SQLITE_READONLY, SQLITE_NOTADB:
            return StoreError(.unavailable, detail)
        default:
            return StoreError(.internalFailure, detail)
        }
    }
}

@available(*, unavailable) extension SQLiteConnection: Sendable {}
