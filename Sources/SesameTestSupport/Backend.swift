import Foundation

/// The two database backends. Every behaviour that reaches the store is tested on both.
public enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    public var description: String { rawValue }

    /// A URL for a fresh, empty database of this backend: an SQLite file (not created yet) in a folder of its own under
    /// this process's temporary root, which is removed at exit, or a new database on the shared PostgreSQL cluster.
    public func makeURL() throws -> String {
        switch self {
        case .sqlite: "sqlite:" + sqliteTestRoot.appendingPathComponent(UUID().uuidString).appendingPathComponent("sesame.db").path
        case .postgres: try PostgresCluster.shared.createDatabase()
        }
    }
}

/// The path of a new SQLite database file (not created yet) in a folder of its own under ``sqliteTestRoot``.
public func freshSQLitePath() throws -> String {
    let folder = sqliteTestRoot.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent("test.db").path
}

/// This process's folder of SQLite test databases, removed at exit.
public let sqliteTestRoot: URL = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-tests-\(ProcessInfo.processInfo.processIdentifier)")
    atexit { try? FileManager.default.removeItem(at: sqliteTestRoot) }
    return root
}()

/// Sleeps through `interval` (a server's configuration refresh interval) and a little more. A configuration change made
/// beside a server (by the CLI, another node, or the store directly) is served by it after that, so a test waits it
/// out before it expects the change.
public func waitOut(_ interval: Duration) {
    Thread.sleep(forTimeInterval: Double(interval / .milliseconds(1)) / 1000 + 0.05)
}
