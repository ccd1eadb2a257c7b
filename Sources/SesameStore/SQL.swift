import Foundation

/// One value bound to, or read from, a SQL statement.
///
/// Only four shapes exist so that both backends store exactly the same thing: booleans are `integer` 0 or 1,
/// times are `integer` milliseconds since 1970, and JSON is `text`.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

extension SQLValue {
    /// The value for an optional string: `.null` when `nil`.
    static func text(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    /// A boolean as `integer` 0 or 1.
    static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
    /// A date as `integer` milliseconds since 1970.
    static func date(_ value: Date) -> SQLValue { .integer(value.millisecondsSince1970) }
    /// An optional date: `.null` when `nil`.
    static func date(_ value: Date?) -> SQLValue { value.map { .date($0) } ?? .null }
    /// An `Int` as `integer`.
    static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }
}

extension Date {
    /// Whole milliseconds since 1970 (rounded down), the store's time representation.
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }  // trap-safe: dates are the server's, never a client's
    /// The date `milliseconds` after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

/// One result row; values are read by column name and throw ``StoreError`` on a missing column or a wrong type.
public struct SQLRow: Sendable {
    /// The column names, in result order.
    public let columns: [String]
    /// The values, in the same order as `columns`.
    public let values: [SQLValue]

    /// Creates a row; `columns` and `values` must have the same length.
    public init(columns: [String], values: [SQLValue]) {
        precondition(columns.count == values.count, "a row needs one value per column")
        self.columns = columns
        self.values = values
    }

    /// The raw value of a column.
    /// - Throws: ``StoreError/Code/invalidData`` when the row has no such column.
    public func value(_ column: String) throws(StoreError) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else {
            throw StoreError(.invalidData, "result has no column \(column)")
        }
        return values[index]
    }

    /// A non-null integer column.
    public func integer(_ column: String) throws(StoreError) -> Int64 {
        guard let value = try optionalInteger(column) else { throw Self.unexpectedNull(column) }
        return value
    }

    /// An integer column that may be null.
    public func optionalInteger(_ column: String) throws(StoreError) -> Int64? {
        switch try value(column) {
        case .null: return nil
        case .integer(let value): return value
        default: throw Self.wrongType(column, "integer")
        }
    }

    /// A non-null text column.
    public func text(_ column: String) throws(StoreError) -> String {
        guard let value = try optionalText(column) else { throw Self.unexpectedNull(column) }
        return value
    }

    /// A text column that may be null.
    public func optionalText(_ column: String) throws(StoreError) -> String? {
        switch try value(column) {
        case .null: return nil
        case .text(let value): return value
        default: throw Self.wrongType(column, "text")
        }
    }

    /// A non-null blob column.
    public func blob(_ column: String) throws(StoreError) -> [UInt8] {
        guard let value = try optionalBlob(column) else { throw Self.unexpectedNull(column) }
        return value
    }

    /// A blob column that may be null.
    public func optionalBlob(_ column: String) throws(StoreError) -> [UInt8]? {
        switch try value(column) {
        case .null: return nil
        case .blob(let value): return value
        default: throw Self.wrongType(column, "blob")
        }
    }

    /// A non-null boolean column, stored as integer 0 or 1.
    public func bool(_ column: String) throws(StoreError) -> Bool {
        switch try integer(column) {
        case 0: return false
        case 1: return true
        default: throw Self.wrongType(column, "boolean 0/1")
        }
    }

    /// A non-null time column, stored as integer milliseconds since 1970.
    public func date(_ column: String) throws(StoreError) -> Date {
        Date(millisecondsSince1970: try integer(column))
    }

    /// A time column that may be null.
    public func optionalDate(_ column: String) throws(StoreError) -> Date? {
        try optionalInteger(column).map { Date(millisecondsSince1970: $0) }
    }

    /// A joined read's row cut back into one row per table, by each table's column count in select order (the
    /// tables' columns may share names: each part reads its own).
    /// - Throws: ``StoreError/Code/internalFailure`` when the counts do not add up to the row's columns.
    func split(_ counts: Int...) throws(StoreError) -> [SQLRow] {
        guard counts.reduce(0, +) == columns.count else {
            throw StoreError(.internalFailure, "a joined read came back with \(columns.count) columns, not \(counts.reduce(0, +))")
        }
        var parts: [SQLRow] = []
        var start = 0
        for count in counts {
            parts.append(SQLRow(columns: Array(columns[start..<start + count]), values: Array(values[start..<start + count])))
            start += count
        }
        return parts
    }

    private static func unexpectedNull(_ column: String) -> StoreError {
        StoreError(.invalidData, "column \(column) is null")
    }

    private static func wrongType(_ column: String, _ expected: String) -> StoreError {
        StoreError(.invalidData, "column \(column) is not \(expected)")
    }
}

/// The SQL flavour of a backend, for the few statements that differ (DDL types, row locks).
public enum SQLDialect: Sendable, Hashable {
    case sqlite
    case postgres

    /// The column type for byte strings: `BLOB` or `BYTEA`.
    public var blobType: String { self == .postgres ? "BYTEA" : "BLOB" }
    /// The row-lock suffix for a `SELECT` inside a transaction: ` FOR UPDATE` on PostgreSQL, nothing on SQLite
    /// (where `BEGIN IMMEDIATE` already serializes writers).
    public var forUpdate: String { self == .postgres ? " FOR UPDATE" : "" }
}

/// One database connection inside a transaction; statements use `$1`...`$n` placeholders on every backend.
///
/// A connection is handed to one ``SQLDatabase/transaction(_:)`` body at a time and must not escape it.
/// After any statement fails, the transaction is aborted on both backends: later statements and the commit fail.
public protocol SQLConnection {
    /// The SQL flavour of this connection.
    var dialect: SQLDialect { get }
    /// Runs one statement and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow]
    /// Runs one statement and returns the number of rows it changed.
    @discardableResult func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int
    /// Runs a write whose changed-row count nobody needs. Inside a PostgreSQL transaction it goes out with the next
    /// statement or the commit, in one round trip, and its failure fails that call (and the transaction); elsewhere
    /// it runs now, as ``execute(_:_:)``.
    func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError)
    /// Sends a read ahead. Inside a PostgreSQL transaction it goes out with the next statement or the commit, in one
    /// round trip, and the same read (statement and parameters) later in the transaction is answered from its rows;
    /// its failure fails the call that carried it (and the transaction). Elsewhere it does nothing.
    func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError)
    /// Registers `giveBack` to run if the open transaction does not commit: its body throws, its COMMIT fails (or its
    /// outcome is unknown: the connection broke during it), or the driver gives the attempt up to run the body again.
    /// For a change outside the database that the rollback must undo with the rows, such as a challenge taken from
    /// memory. Give-backs run last registered first, before the transaction's error reaches its caller or the body
    /// runs again. Outside a transaction it never runs.
    func onRollback(_ giveBack: @escaping () -> Void)
    /// Registers `followUp` to run once the open transaction has committed (before its commit is flushed to stable
    /// storage, when its rows are already visible to every reader); outside a transaction it runs now.
    func onCommit(_ followUp: @escaping () -> Void)
}

/// A database: a pool of connections that runs single statements and transactions.
public protocol SQLDatabase: Sendable {
    /// The SQL flavour of this database.
    var dialect: SQLDialect { get }
    /// Runs `body` in one transaction on one connection, committing when it returns and rolling back when it throws.
    ///
    /// SQLite uses `BEGIN IMMEDIATE` (writers are serialized); PostgreSQL uses `BEGIN` (read committed). A busy
    /// database or a serialization failure or deadlock reruns `body` a few times, so `body` must have no effects
    /// outside the database but those it registers to undo with ``SQLConnection/onRollback(_:)``.
    func transaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T
    /// Runs one statement outside an explicit transaction (autocommit) and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow]
    /// Runs one statement outside an explicit transaction (autocommit) and returns the number of rows it changed.
    @discardableResult func execute(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> Int
    /// Runs a write whose changed-row count nobody needs: in a transaction as ``SQLConnection/enqueue(_:_:)``, else
    /// now.
    func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError)
    /// Sends a read ahead: in a transaction as ``SQLConnection/prefetch(_:_:)``, else nothing.
    func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError)
    /// Runs one bookkeeping statement (autocommit) and returns its rows: a counter, a last-use time or a new challenge,
    /// whose commit survives a crash of Sesame but does not wait for stable storage (``Durability/process``), so a power
    /// loss may lose its last moments. Nothing a client is told rests on it beyond a ceremony in flight (which then
    /// fails, as at its expiry). Inside a transaction it is part of the transaction.
    func bookkeeping(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> [SQLRow]
    /// Runs `body` as one bookkeeping transaction: atomic like ``transaction(_:)``, durable like
    /// ``bookkeeping(_:_:)`` (its commit does not wait for stable storage). Inside a transaction it joins it.
    func bookkeepingTransaction<T>(_ body: (any SQLConnection) throws(StoreError) -> T) throws(StoreError) -> T
    /// In a transaction, ``SQLConnection/onRollback(_:)``; elsewhere `giveBack` never runs (nothing rolls back).
    func onRollback(_ giveBack: @escaping () -> Void)
    /// In a transaction, ``SQLConnection/onCommit(_:)``; elsewhere `followUp` runs now (every statement is committed).
    func onCommit(_ followUp: @escaping () -> Void)
}

extension SQLConnection {
    /// Runs the write now, as `execute`.
    public func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) { try execute(sql, parameters) }
    /// Nothing: the read runs when it is asked.
    public func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {}
    /// Runs a statement without parameters.
    @discardableResult func execute(_ sql: String) throws(StoreError) -> Int { try execute(sql, []) }
    /// The first row of a query, if any.
    func queryFirst(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> SQLRow? {
        try query(sql, parameters).first
    }
}

extension SQLDatabase {
    /// Runs the write now, as `execute`.
    public func enqueue(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) { try execute(sql, parameters) }
    /// Runs one write acknowledged at `durability`: as ``execute(_:_:)``, or as ``bookkeeping(_:_:)`` at
    /// ``Durability/process``.
    func execute(_ sql: String, _ parameters: [SQLValue], durability: Durability) throws(StoreError) {
        switch durability {
        case .full: try execute(sql, parameters)
        case .process: _ = try bookkeeping(sql, parameters)
        }
    }
    /// Nothing: the read runs when it is asked.
    public func prefetch(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) {}
    /// Nothing: outside a transaction there is nothing to roll back.
    public func onRollback(_ giveBack: @escaping () -> Void) {}
    /// Runs `followUp` now: outside a transaction every statement is committed.
    public func onCommit(_ followUp: @escaping () -> Void) { followUp() }
    /// The first row of a query, if any.
    func queryFirst(_ sql: String, _ parameters: [SQLValue]) throws(StoreError) -> SQLRow? {
        try query(sql, parameters).first
    }
}

/// What the body of a driver connection's open transaction registered to run when it ends (see
/// ``SQLConnection/onRollback(_:)`` and ``SQLConnection/onCommit(_:)``).
struct TransactionHooks {
    private var giveBacks: [() -> Void] = []
    private var followUps: [() -> Void] = []

    mutating func onRollback(_ giveBack: @escaping () -> Void) { giveBacks.append(giveBack) }
    mutating func onCommit(_ followUp: @escaping () -> Void) { followUps.append(followUp) }

    /// The transaction did not commit: runs the give-backs, last registered first, and forgets everything.
    mutating func rolledBack() {
        let run = giveBacks
        self = TransactionHooks()
        for giveBack in run.reversed() { giveBack() }
    }

    /// The transaction committed: runs the follow-ups in order and forgets everything.
    mutating func committed() {
        let run = followUps
        self = TransactionHooks()
        for followUp in run { followUp() }
    }
}

/// The columns of a comma-separated list each qualified by `alias`, for a read that joins tables.
func sqlQualified(_ columns: String, _ alias: String) -> String {
    sqlColumnNames(columns).map { "\(alias).\($0)" }.joined(separator: ", ")
}

/// The names of a comma-separated column list.
func sqlColumnNames(_ columns: String) -> [String] {
    columns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// `$n+1, $n+2, …, $n+count`: the numbered placeholders of a list of `count` parameters that follow the first `n`
/// (for `IN (…)`); empty for none.
func sqlPlaceholders(_ count: Int, after n: Int) -> String {
    (0..<count).map { "$\(n + $0 + 1)" }.joined(separator: ", ")
}

/// Retries `operation` while it throws a transient error, with a short growing, jittered pause between tries.
func withTransientRetry<T>(
    attempts: Int, _ operation: () throws(StoreError) -> T
) throws(StoreError) -> T {
    var attempt = 1
    while true {
        do {
            return try operation()
        } catch where error.isTransient && attempt < attempts {
            let pause = Double(attempt) * 0.01 + Double.random(in: 0...0.02)
            Thread.sleep(forTimeInterval: pause)
            attempt += 1
        } catch where error.isTransient {
            throw StoreError(error.code, error.detail + " (after \(attempt) attempts)")
        }
    }
}

/// Checks that a text parameter can be stored identically on both backends (PostgreSQL text cannot hold NUL).
func checkStorableText(_ text: String, index: Int) throws(StoreError) {
    if text.utf8.contains(0) {
        throw StoreError(.unstorableValue, "text parameter $\(index) contains a NUL character")
    }
}
