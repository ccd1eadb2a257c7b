internal import CSQLite

/// An embedded SQLite database in one file: WAL journal, `synchronous=FULL`, foreign keys on, 5 s busy timeout.
///
/// Connections come from a small pool (default 4): readers run side by side under WAL, and every transaction starts
/// with `BEGIN IMMEDIATE`, so writers are serialized by SQLite's write lock and a check followed by a write in one
/// transaction is atomic across threads and processes. A busy database is retried a few times, then the call
/// fails with ``StoreError/Code/unavailable``. The file must be a real path: `:memory:` would give each pooled
/// connection its own empty database.
public final class SQLiteDatabase: SQLDatabase {
    public var dialect: SQLDialect { .sqlite }
    private let pool: ConnectionPool<SQLiteConnection>
    private static let attempts = 4

    /// Opens (creating if needed) the database file at `path`; the first connection is opened now to report errors.
    /// - Parameters:
    ///   - path: the file path; its folder must exist.
    ///   - poolSize: the most connections open at once.
    ///   - acquireTimeout: seconds a caller waits for a free connection before ``StoreError/Code/unavailable``.
    /// - Throws: ``StoreError/Code/unavailable`` when the file cannot be opened.
    public init(path: String, poolSize: Int = 4, acquireTimeout: Double = 10) throws(StoreError) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw StoreError(.invalidData, "SQLite needs a file path")
        }
        pool = ConnectionPool(
            size: max(1, poolSize), acquireTimeout: acquireTimeout,
            open: { () throws(StoreError) -> SQLiteConnection in try SQLiteConnection(path: path) },
            isReusable: { $0.isReusable }
        )
        try pool.withConnection { _ throws(StoreError) in }
    }

    public func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try pool.transaction(attempts: Self.attempts, body)
    }

    public func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try pool.query(attempts: Self.attempts, sql, parameters)
    }

    @discardableResult
    public func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try pool.execute(attempts: Self.attempts, sql, parameters)
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

/// One SQLite connection (`sqlite3 *`), used by one thread at a time through the pool.
final class SQLiteConnection: DriverConnection {
    let dialect = SQLDialect.sqlite
    private let handle: OpaquePointer
    /// Set while a transaction is open; `aborted` once a statement in it failed.
    private var inTransaction = false
    private var aborted = false

    init(path: String) throws(StoreError) {
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
            try run("PRAGMA synchronous=FULL", [])
            try run("PRAGMA foreign_keys=ON", [])
        } catch {
            throw StoreError(error.code == .internalFailure ? .unavailable : error.code, error.detail)
        }
    }

    deinit {
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
            try run("COMMIT", [])
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 {
                _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            }
            throw error
        }
    }

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
        let rewritten = SQLiteDatabase.rewritePlaceholders(sql)
        var statement: OpaquePointer?
        var trailingStatement = false
        let status = rewritten.withCString { text in
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v2(handle, text, -1, &statement, &tail)
            // `tail` points into `text`, which lives only inside this closure: read it here.
            if let tail { trailingStatement = String(cString: tail).contains { !$0.isWhitespace && $0 != ";" } }
            return status
        }
        defer { sqlite3_finalize(statement) }
        guard status == SQLITE_OK else { throw error(status, while: "prepare") }
        if trailingStatement { throw StoreError(.invalidData, "only one statement per call") }
        guard let statement else { return ([], 0) }  // empty statement
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == parameters.count else {
            throw StoreError(.internalFailure, "statement has \(expected) parameters, \(parameters.count) given")
        }
        for (offset, parameter) in parameters.enumerated() {
            try bind(parameter, at: Int32(offset + 1), in: statement)
        }
        let count = Int(sqlite3_column_count(statement))
        let columns = (0..<count).map { String(cString: sqlite3_column_name(statement, Int32($0))) }
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
            rows.append(SQLRow(columns: columns, values: values))
        }
        return (rows, Int(sqlite3_changes(handle)))
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
            let bytes = Array(text.utf8)
            // An empty array may have no storage; bind a real (empty) string so it stays text, not NULL.
            status = (bytes + [0]).withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    sqlite3_bind_text(statement, index, $0.baseAddress, Int32(bytes.count), csqlite_transient())
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
