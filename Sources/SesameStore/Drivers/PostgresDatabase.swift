internal import CLibPQ
import Foundation

/// A PostgreSQL database reached through a pool of libpq connections (default 8).
///
/// Every statement is prepared once per connection and run with bound parameters (text format; byte strings in binary
/// format as `bytea`), never by splicing values into SQL. Connections run with `synchronous_commit = on`, or `off` with
/// ``Durability/process``, whatever the server's default. A transaction's BEGIN goes out with its first statement, and
/// an enqueued write (``SQLDatabase/enqueue(_:_:)``) or a read sent ahead (``SQLConnection/prefetch(_:_:)``) with the
/// next statement or the COMMIT, in one round trip (libpq's pipeline mode). Transactions run at read committed; code
/// that needs a check-then-write to be atomic locks the row it depends on (`SELECT ... FOR UPDATE`). Serialization
/// failures and deadlocks rerun the transaction a few times. A connection that breaks is dropped and replaced on next
/// use; a caller waits at most `acquireTimeout` for a free connection, then gets ``StoreError/Code/unavailable``.
public final class PostgresDatabase: SQLDatabase {
    public var dialect: SQLDialect { .postgres }
    private let pool: ConnectionPool<PostgresConnection>
    /// A few connections with `synchronous_commit = off`, for bookkeeping statements.
    private let bookkeepingPool: ConnectionPool<PostgresConnection>
    private static let attempts = 5

    /// Connects to `url` (a libpq URI such as `postgres://user@/db?host=/run/postgresql`); one connection is
    /// opened now to report errors early.
    /// - Parameters:
    ///   - url: a `postgres://` or `postgresql://` URI; `connect_timeout` defaults to 10 s.
    ///   - poolSize: the most connections open at once.
    ///   - acquireTimeout: seconds a caller waits for a free connection.
    ///   - durability: what an acknowledged write survives.
    /// - Throws: ``StoreError/Code/unavailable`` when the server cannot be reached or refuses the login.
    public init(url: String, poolSize: Int = 8, acquireTimeout: Double = 10, durability: Durability = .full) throws(StoreError) {
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw StoreError(.invalidData, "PostgreSQL URL must start with postgres:// or postgresql://")
        }
        func connections(size: Int, durability: Durability) -> ConnectionPool<PostgresConnection> {
            ConnectionPool(
                size: size, acquireTimeout: acquireTimeout,
                open: { () throws(StoreError) -> PostgresConnection in
                    let connection = try PostgresConnection(url: url)
                    // Sesame's promise, whatever the server's default.
                    try connection.run(durability == .process ? "SET synchronous_commit = off" : "SET synchronous_commit = on", [])
                    return connection
                },
                isReusable: { $0.isReusable }
            )
        }
        pool = connections(size: max(1, poolSize), durability: durability)
        bookkeepingPool = connections(size: max(1, poolSize / 4), durability: .process)
        try pool.withConnection { _ throws(StoreError) in }
    }

    public func bookkeeping(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        try bookkeepingPool.query(attempts: Self.attempts, sql, parameters)
    }

    public func bookkeepingTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try bookkeepingPool.transaction(attempts: Self.attempts, body)
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
}

/// One libpq connection (`PGconn *`), used by one thread at a time through the pool.
final class PostgresConnection: DriverConnection {
    let dialect = SQLDialect.postgres
    private let handle: OpaquePointer

    init(url: String) throws(StoreError) {
        // Later keywords override earlier ones; the URI (expanded from dbname) may override the defaults.
        let keywords = ["connect_timeout", "client_encoding", "dbname"]
        let values = ["10", "UTF8", url]
        let connection = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in PQconnectdbParams(keywordPointers, valuePointers, 1) }
        }
        guard let connection else { throw StoreError(.unavailable, "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.redact(String(cString: PQerrorMessage(connection)), url: url)
            PQfinish(connection)
            throw StoreError(.unavailable, "cannot connect to PostgreSQL: \(message)")
        }
        // libpq prints server notices (for example "relation already exists, skipping") to stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection may return to the pool: still connected, not inside a transaction or a pipeline.
    var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE && PQpipelineStatus(handle) == PQ_PIPELINE_OFF
    }

    private var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow] {
        guard !prefetched.isEmpty || !readsInFlight.isEmpty else { return try run(sql, parameters).rows }
        let read = Read(sql: sql, parameters: parameters)
        if readsInFlight.values.contains(read) { try completePipeline() }
        if let rows = prefetched.removeValue(forKey: read) { return rows }
        return try run(sql, parameters).rows
    }

    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int {
        try run(sql, parameters).changes
    }

    /// Inside a transaction, sends the statement without waiting: it goes out with the transaction's next statement or
    /// its commit, whose call then fails if it failed. Outside one, runs it now.
    func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {
        guard inTransaction else {
            try run(sql, parameters)
            return
        }
        try withBound(sql, parameters) { statement throws(StoreError) in try send(statement) }
    }

    /// Inside a transaction, sends the read without waiting: it goes out with the transaction's next statement or its
    /// commit, and the same read asked later in the transaction is answered from its rows. Outside one, does nothing.
    func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {
        guard inTransaction else { return }
        try withBound(sql, parameters) { statement throws(StoreError) in try send(statement) }
        readsInFlight[unread - 1] = Read(sql: sql, parameters: parameters)
    }

    func onRollback(_ giveBack: @escaping () -> Void) {
        if inTransaction { hooks.onRollback(giveBack) }
    }

    func onCommit(_ followUp: @escaping () -> Void) {
        if inTransaction { hooks.onCommit(followUp) } else { followUp() }
    }

    /// A read sent ahead: its statement and parameters.
    private struct Read: Hashable {
        let sql: String
        let parameters: [SQLValue]
    }
    /// The rows of reads sent ahead in this transaction, until the same read asks for them.
    private var prefetched: [Read: [SQLRow]] = [:]
    /// The reads sent ahead whose results are unread, by their place among the unread results.
    private var readsInFlight: [Int: Read] = [:]
    /// The statements being prepared in the pipeline, by their place among the unread results.
    private var preparesInFlight: [Int: (key: StatementKey, name: String)] = [:]

    /// Whether `runTransaction` is running its body (an enqueued write waits only then).
    private var inTransaction = false
    /// Whether the transaction's BEGIN is still to be sent: it goes out with the first statement.
    private var beginPending = false
    /// Whether the server acknowledged the transaction's BEGIN.
    private var begun = false
    /// Statements sent in pipeline mode whose results are not read yet.
    private var unread = 0
    private var hooks = TransactionHooks()

    /// Runs `body` in a transaction whose BEGIN goes out with the body's first statement, and whose enqueued
    /// statements go out with the next one or the COMMIT (one round trip for all, in libpq's pipeline mode); commits
    /// if the body ran any statement.
    func runTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        (inTransaction, beginPending, begun, unread) = (true, true, false, 0)
        defer {
            (inTransaction, beginPending) = (false, false)
            prefetched.removeAll()
            readsInFlight.removeAll()
            preparesInFlight.removeAll()
        }
        do throws(StoreError) {
            let result = try body(self)
            guard !beginPending else {
                hooks.committed()
                return result
            }
            if unread == 0, PQtransactionStatus(handle) == PQTRANS_INERROR {
                throw StoreError(.internalFailure, "a statement in the transaction failed and its error was ignored")
            }
            let tag = try run("COMMIT", []).tag
            guard tag == "COMMIT" else {
                throw StoreError(.internalFailure, "PostgreSQL rolled the transaction back at commit")
            }
            hooks.committed()
            return result
        } catch {
            if unread > 0, let last = try? syncPipeline() { PQclear(last) }
            if PQpipelineStatus(handle) != PQ_PIPELINE_OFF { _ = PQexitPipelineMode(handle) }
            let status = PQtransactionStatus(handle)
            if status == PQTRANS_INTRANS || status == PQTRANS_INERROR {
                if let result = PQexec(handle, "ROLLBACK") { PQclear(result) }
            }
            hooks.rolledBack()
            // Nothing ran yet, so a connection that broke while idle in the pool can be replaced and the body rerun.
            throw StoreError(error.code, error.detail, transient: error.isTransient || (!begun && isBroken))
        }
    }

    /// Runs one statement with bound parameters, after the statements a transaction has sent without waiting.
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> (rows: [SQLRow], changes: Int, tag: String) {
        let result = try withBound(sql, parameters) { statement throws(StoreError) -> OpaquePointer? in
            // BEGIN still to go or enqueued writes unread: only inside a transaction.
            guard beginPending || unread > 0 else { return statement.execute(on: handle) }
            try send(statement)
            return try syncPipeline()
        }
        guard let result else { throw callFailure() }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw error(from: result)
        }
        let tag = String(cString: PQcmdStatus(result))
        let changes = Int(String(cString: PQcmdTuples(result))) ?? 0
        return (try rows(of: result), changes, tag)
    }

    /// The rows of a successful result, decoded.
    private func rows(of result: OpaquePointer) throws(StoreError) -> [SQLRow] {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        guard rowCount > 0 else { return [] }
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let columnTypes = (0..<columnCount).map { PQftype(result, $0) }
        var rows: [SQLRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                let bytes = PQgetvalue(result, row, column).withMemoryRebound(to: UInt8.self, capacity: length) {
                    UnsafeBufferPointer(start: $0, count: length)
                }
                values.append(try Self.decode(bytes, type: columnTypes[Int(column)], column: columns[Int(column)]))
            }
            rows.append(SQLRow(columns: columns, values: values))
        }
        return rows
    }

    /// Calls `body` with `sql` bound to `parameters`, prepared on this connection unless a pipeline is open (where
    /// ``send(_:)`` prepares a statement not prepared yet).
    private func withBound<R>(_ sql: String, _ parameters: [SQLValue], _ body: (BoundStatement) throws(StoreError) -> R) throws(StoreError) -> R {
        var types: [Oid] = []
        var formats: [Int32] = []
        var lengths: [Int32] = []
        var buffers: [UnsafeMutablePointer<CChar>?] = []
        defer { buffers.forEach { $0?.deallocate() } }
        for (offset, parameter) in parameters.enumerated() {
            switch parameter {
            case .null:
                types.append(0)
                formats.append(0)
                lengths.append(0)
                buffers.append(nil)
            case .integer(let number):
                types.append(20)  // int8
                formats.append(0)
                lengths.append(0)
                buffers.append(Self.copy(Array(String(number).utf8), terminated: true))
            case .text(let text):
                try checkStorableText(text, index: offset + 1)
                types.append(0)  // inferred by the server from the statement
                formats.append(0)
                lengths.append(0)
                buffers.append(Self.copy(Array(text.utf8), terminated: true))
            case .blob(let bytes):
                guard bytes.count <= Int32.max else { throw StoreError(.invalidData, "blob parameter too large") }
                types.append(17)  // bytea
                formats.append(1)
                lengths.append(Int32(bytes.count))
                buffers.append(Self.copy(bytes, terminated: false))  // never nil: nil would mean NULL
            }
        }
        let name = PQpipelineStatus(handle) == PQ_PIPELINE_OFF ? try prepared(sql, types: types) : statements[StatementKey(sql: sql, types: types)]
        return try body(BoundStatement(sql: sql, name: name, types: types, values: buffers.map { UnsafePointer($0) }, lengths: lengths, formats: formats))
    }

    /// Sends `statement` in pipeline mode, after the transaction's BEGIN if that is still to go. A statement not
    /// prepared on this connection yet is prepared in the pipeline first, so that later uses run it by name (parsed and
    /// planned once) as outside a pipeline; it counts as prepared once its result says so.
    private func send(_ statement: BoundStatement) throws(StoreError) {
        if PQpipelineStatus(handle) == PQ_PIPELINE_OFF, PQenterPipelineMode(handle) != 1 { throw callFailure() }
        if beginPending {
            guard PQsendQueryParams(handle, "BEGIN", 0, nil, nil, nil, nil, 0) == 1 else { throw callFailure() }
            beginPending = false
            unread += 1
        }
        var statement = statement
        let key = StatementKey(sql: statement.sql, types: statement.types)
        if statement.name == nil, let pending = preparesInFlight.values.first(where: { $0.key == key }) {
            statement = statement.named(pending.name)  // prepared earlier in this pipeline
        } else if statement.name == nil, statements.count < Self.statementCacheLimit {
            preparedCount += 1
            let name = "sesame_\(preparedCount)"
            guard PQsendPrepare(handle, name, statement.sql, Int32(statement.types.count), statement.types) == 1 else { throw callFailure() }
            preparesInFlight[unread] = (key, name)
            unread += 1
            statement = statement.named(name)
        }
        guard statement.send(on: handle) == 1 else { throw callFailure() }
        unread += 1
    }

    /// Ends the pipeline with a sync, reads every statement's result (keeping the rows of reads sent ahead) and leaves
    /// pipeline mode.
    /// - Returns: the last statement's result (`nil` when the connection failed).
    /// - Throws: the first failure of an earlier statement (BEGIN, an enqueued write or a read sent ahead).
    private func syncPipeline() throws(StoreError) -> OpaquePointer? {
        let count = unread
        unread = 0
        guard PQpipelineSync(handle) == 1 else {
            _ = PQexitPipelineMode(handle)
            throw callFailure()
        }
        var failure: StoreError?
        var last: OpaquePointer?
        let reads = readsInFlight
        readsInFlight.removeAll()
        let prepares = preparesInFlight
        preparesInFlight.removeAll()
        for index in 0..<count {
            // One statement's result, then the NULL that ends it.
            let result = PQgetResult(handle)
            if result != nil { while let extra = PQgetResult(handle) { PQclear(extra) } }
            if failure == nil, let read = reads[index], let result, PQresultStatus(result) == PGRES_TUPLES_OK {
                do throws(StoreError) { prefetched[read] = try rows(of: result) } catch { failure = error }
            }
            if let prepared = prepares[index], let result, PQresultStatus(result) == PGRES_COMMAND_OK {
                statements[prepared.key] = prepared.name
            }
            if index == count - 1 {
                last = result
                break
            }
            guard let result else {
                failure = failure ?? callFailure()
                continue
            }
            if failure == nil {
                let status = PQresultStatus(result)
                if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                    if strcmp(PQcmdStatus(result), "BEGIN") == 0 { begun = true }
                } else {
                    failure = error(from: result)
                }
            }
            PQclear(result)
        }
        if let sync = PQgetResult(handle) { PQclear(sync) }
        // Left in pipeline mode (results unread), the connection does not go back to the pool (isReusable).
        _ = PQexitPipelineMode(handle)
        if let failure {
            if let last { PQclear(last) }
            throw failure
        }
        return last
    }

    /// Reads the results of every statement sent, reads sent ahead included.
    /// - Throws: the first failure among them.
    private func completePipeline() throws(StoreError) {
        guard let last = try syncPipeline() else { throw callFailure() }
        defer { PQclear(last) }
        let status = PQresultStatus(last)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else { throw error(from: last) }
    }

    /// A libpq call that failed without a result.
    private func callFailure() -> StoreError {
        StoreError(isBroken ? .unavailable : .internalFailure, "PostgreSQL call failed: \(String(cString: PQerrorMessage(handle)))")
    }

    /// Prepared statements by SQL text and parameter types (a null's type is inferred, an integer's is not, so the
    /// same text can need two): each is parsed and planned once per connection.
    private var statements: [StatementKey: String] = [:]
    private var preparedCount = 0
    /// More distinct statements than this (queries built from filters) and the cache starts over.
    private static let statementCacheLimit = 256

    private struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// The name of the prepared statement for `sql` with these parameter types, prepared now if needed.
    private func prepared(_ sql: String, types: [Oid]) throws(StoreError) -> String {
        let key = StatementKey(sql: sql, types: types)
        if let name = statements[key] { return name }
        if statements.count >= Self.statementCacheLimit {
            // Names are never reused, so statements left on the server cannot collide; the server drops them with
            // the connection.
            statements.removeAll()
            if let result = PQexec(handle, "DEALLOCATE ALL") { PQclear(result) }
        }
        preparedCount += 1
        let name = "sesame_\(preparedCount)"
        guard let result = PQprepare(handle, name, sql, Int32(types.count), types) else {
            throw callFailure()
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw error(from: result) }
        statements[key] = name
        return name
    }

    /// Decodes one text-format result value by its type OID.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, type: Oid, column: String) throws(StoreError) -> SQLValue {
        let text = String(decoding: bytes, as: UTF8.self)
        switch type {
        case 20, 21, 23, 26:  // int8, int2, int4, oid
            guard let number = Int64(text) else { throw StoreError(.invalidData, "column \(column): bad integer") }
            return .integer(number)
        case 1700:  // numeric, for example SUM(bigint); only whole numbers are accepted
            guard let number = Int64(text) else { throw StoreError(.invalidData, "column \(column): not whole") }
            return .integer(number)
        case 16:  // bool
            return .integer(text == "t" ? 1 : 0)
        case 17:  // bytea, hex output: \x0a1b...
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0
            else { throw StoreError(.invalidData, "column \(column): unexpected bytea encoding") }
            var decoded: [UInt8] = []
            decoded.reserveCapacity((bytes.count - 2) / 2)
            var index = 2
            while index < bytes.count {
                guard let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else {
                    throw StoreError(.invalidData, "column \(column): bad bytea hex")
                }
                decoded.append(high << 4 | low)
                index += 2
            }
            return .blob(decoded)
        default:
            return .text(text)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Maps a failed result to a ``StoreError`` by SQLSTATE. The detail names the SQLSTATE, constraint, table and
    /// column, and the primary message only for classes whose messages cannot echo values.
    private func error(from result: OpaquePointer) -> StoreError {
        func field(_ code: Int32) -> String? { PQresultErrorField(result, code).map { String(cString: $0) } }
        let state = field(clibpq_diag_sqlstate()) ?? ""
        var detail = "PostgreSQL error \(state.isEmpty ? "(no SQLSTATE)" : state)"
        if let constraint = field(clibpq_diag_constraint_name()) { detail += " constraint \(constraint)" }
        if let table = field(clibpq_diag_table_name()) { detail += " table \(table)" }
        if let column = field(clibpq_diag_column_name()) { detail += " column \(column)" }
        let stateClass = state.prefix(2)
        if ["42", "08", "53", "57", "25", "0A", "40", "3D", "28"].contains(stateClass) || state.isEmpty,
            let message = field(clibpq_diag_message_primary())
        {
            detail += ": \(message)"
        }
        if state.isEmpty && isBroken {
            detail += ": \(String(cString: PQerrorMessage(handle)))"
        }
        switch state {
        case "23505": return StoreError(.conflict, detail)
        case "23503": return StoreError(.notFound, detail)
        case "40001", "40P01": return StoreError(.unavailable, detail, transient: true)
        default: break
        }
        switch stateClass {
        case "23", "22": return StoreError(.invalidData, detail)
        case "08", "53", "57": return StoreError(.unavailable, detail)
        case "": return StoreError(isBroken ? .unavailable : .internalFailure, detail)
        default: return StoreError(.internalFailure, detail)
        }
    }

    /// Copies bytes into a new buffer (never nil, even when empty), optionally NUL-terminated.
    private static func copy(_ bytes: [UInt8], terminated: Bool) -> UnsafeMutablePointer<CChar> {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress ?? UnsafeRawPointer(buffer), byteCount: source.count)
        }
        buffer[bytes.count] = 0
        return buffer
    }

    /// Removes a password that appears in `url` from a libpq message.
    static func redact(_ message: String, url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return message }
        let rest = url[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return message }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return message }
        let password = String(userInfo[userInfo.index(after: colon)...])
        guard !password.isEmpty else { return message }
        var redacted = message.replacingOccurrences(of: password, with: "***")
        if let decoded = password.removingPercentEncoding, !decoded.isEmpty {
            redacted = redacted.replacingOccurrences(of: decoded, with: "***")
        }
        return redacted
    }
}

@available(*, unavailable) extension PostgresConnection: Sendable {}

/// A statement and its parameters in libpq's arrays (valid while the call that made it runs).
private struct BoundStatement {
    let sql: String
    /// The name it is prepared under on the connection, if it is.
    let name: String?
    let types: [Oid]
    let values: [UnsafePointer<CChar>?]
    let lengths: [Int32]
    let formats: [Int32]

    /// Runs it and waits for its result.
    func execute(on handle: OpaquePointer) -> OpaquePointer? {
        if let name { return PQexecPrepared(handle, name, Int32(values.count), values, lengths, formats, 0) }
        return PQexecParams(handle, sql, Int32(values.count), types, values, lengths, formats, 0)
    }

    /// The same statement under the name it is being prepared with.
    func named(_ name: String) -> BoundStatement {
        BoundStatement(sql: sql, name: name, types: types, values: values, lengths: lengths, formats: formats)
    }

    /// Sends it without waiting; 1 when it was queued.
    func send(on handle: OpaquePointer) -> Int32 {
        if let name { return PQsendQueryPrepared(handle, name, Int32(values.count), values, lengths, formats, 0) }
        return PQsendQueryParams(handle, sql, Int32(values.count), types, values, lengths, formats, 0)
    }
}

/// Calls `body` with a C array of NUL-terminated copies of `strings`, followed by a NULL entry.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { preconditionFailure("a non-empty array has storage") }
        return body(base)
    }
}
