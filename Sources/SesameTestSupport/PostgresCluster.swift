import Foundation

/// A throwaway PostgreSQL cluster for tests: started once per test process, Unix socket only, removed at exit.
///
/// `PostgresCluster.shared.createDatabase()` starts the cluster on first use (`initdb` and `pg_ctl start` in a new
/// temporary folder; as the `postgres` user through `runuser` when the tests run as root, because the server
/// refuses root) and returns the URL of a fresh, empty database. The cluster listens on no TCP port
/// (`listen_addresses=''`); its socket lives in the private folder. At process exit (`atexit`) the cluster is
/// stopped with `pg_ctl stop -m fast` and the folder is removed.
///
/// When the server binaries are missing, every call fails with an error naming the `apt-get` command to run: tests
/// that need PostgreSQL fail loudly rather than skip.
public final class PostgresCluster: @unchecked Sendable {
    // @unchecked Sendable: all mutable state (`state`, `databaseCounter`) is read and written only under `lock`.

    /// The cluster shared by every test of this process: fsync off, since a test never outlives its machine.
    public static let shared = PostgresCluster(durable: false)
    /// A cluster at PostgreSQL's default durability (fsync, full-page writes), for benchmarks of durable commits.
    public static let durable = PostgresCluster(durable: true)

    /// The command that installs the server on Debian.
    public static let installCommand = "apt-get update && apt-get install -y postgresql"

    /// Why the cluster could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private struct Running {
        let folder: URL
        let binaries: URL
        let port: Int
        let asPostgresUser: Bool
    }

    private enum State {
        case notStarted
        case running(Running)
        case failed(String)
        case stopped
    }

    private let lock = NSLock()
    private var state = State.notStarted
    private var databaseCounter = 0
    /// The role that owns the cluster and every database.
    public let user = "sesame"

    /// Whether the cluster keeps PostgreSQL's durable defaults.
    private let durable: Bool

    private init(durable: Bool) {
        self.durable = durable
    }

    /// Creates a new empty database and returns its libpq URL (`postgres://sesame@/NAME?host=FOLDER&port=PORT`).
    /// - Throws: ``Failure`` when the cluster cannot start (for example, missing binaries) or `createdb` fails.
    public func createDatabase() throws -> String {
        let (running, name) = try lock.withLock { () throws -> (Running, String) in
            let running = try startIfNeeded()
            databaseCounter += 1
            return (running, "test_\(ProcessInfo.processInfo.processIdentifier)_\(databaseCounter)")
        }
        try Self.run(
            running.binaries.appendingPathComponent("createdb"),
            ["-h", running.folder.path, "-p", String(running.port), "-U", user, name], asPostgresUser: false
        )
        return url(database: name, running)
    }

    /// The URL of the always-present `postgres` maintenance database (starts the cluster if needed).
    public func maintenanceURL() throws -> String {
        let running = try lock.withLock { try startIfNeeded() }
        return url(database: "postgres", running)
    }

    private func url(database: String, _ running: Running) -> String {
        "postgres://\(user)@/\(database)?host=\(running.folder.path)&port=\(running.port)"
    }

    /// Stops the cluster and removes its folder; called at exit, harmless to call twice.
    public func stop() {
        lock.withLock {
            guard case .running(let running) = state else { return }
            state = .stopped
            _ = try? Self.run(
                running.binaries.appendingPathComponent("pg_ctl"),
                ["-D", running.folder.appendingPathComponent("data").path, "stop", "-m", "fast", "-w"],
                asPostgresUser: running.asPostgresUser
            )
            try? FileManager.default.removeItem(at: running.folder)
        }
    }

    /// Starts the cluster once; must be called with `lock` held.
    private func startIfNeeded() throws -> Running {
        switch state {
        case .running(let running): return running
        case .failed(let message): throw Failure(description: message)
        case .stopped: throw Failure(description: "the PostgreSQL test cluster was already stopped")
        case .notStarted: break
        }
        do {
            let running = try start()
            state = .running(running)
            atexit {
                PostgresCluster.shared.stop()
                PostgresCluster.durable.stop()
            }
            return running
        } catch {
            let message = "\(error)"
            state = .failed(message)
            throw Failure(description: message)
        }
    }

    private func start() throws -> Running {
        guard let binaries = Self.findBinaries() else {
            throw Failure(
                description: "PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin "
                    + "or $PG_BIN. Install them: \(Self.installCommand)"
            )
        }
        let asPostgresUser = ProcessInfo.processInfo.userName == "root"
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("sesame-pg-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
        )
        do {
            if asPostgresUser {
                try Self.run(URL(fileURLWithPath: "/bin/chown"), ["postgres", folder.path], asPostgresUser: false)
            }
            let data = folder.appendingPathComponent("data").path
            try Self.run(
                binaries.appendingPathComponent("initdb"),
                ["-D", data, "-A", "trust", "-U", user, "-E", "UTF8", "--no-locale", "--no-sync"],
                asPostgresUser: asPostgresUser
            )
            // With no TCP listener the port only names the socket file inside the private folder, so any port is free.
            let port = Int.random(in: 20_000...60_000)
            let relaxed = durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
            let options = (["-k \(folder.path)", "-p \(port)", "-c listen_addresses=''", "-c max_connections=300"] + relaxed)
                .joined(separator: " ")
            try Self.run(
                binaries.appendingPathComponent("pg_ctl"),
                ["-D", data, "-o", options, "-l", folder.appendingPathComponent("log").path, "-w", "start"],
                asPostgresUser: asPostgresUser
            )
            return Running(folder: folder, binaries: binaries, port: port, asPostgresUser: asPostgresUser)
        } catch {
            let log = (try? String(contentsOf: folder.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: folder)
            throw Failure(description: "\(error)\(log.isEmpty ? "" : "\nserver log:\n\(log)")")
        }
    }

    /// `$PG_BIN`, else the newest `/usr/lib/postgresql/<version>/bin` that has `initdb` and `pg_ctl`.
    private static func findBinaries() -> URL? {
        let manager = FileManager.default
        func usable(_ folder: URL) -> Bool {
            ["initdb", "pg_ctl", "createdb"].allSatisfy {
                manager.isExecutableFile(atPath: folder.appendingPathComponent($0).path)
            }
        }
        if let explicit = ProcessInfo.processInfo.environment["PG_BIN"] {
            let folder = URL(fileURLWithPath: explicit)
            return usable(folder) ? folder : nil
        }
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? manager.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap(Int.init).sorted(by: >)
            .map { root.appendingPathComponent(String($0)).appendingPathComponent("bin") }
            .first(where: usable)
    }

    /// Runs a program to completion, as the `postgres` user when asked; throws with its output when it fails.
    ///
    /// Through ``ChildProcess`` (`posix_spawn`, output to files): the server that `pg_ctl start` leaves running
    /// inherits whatever the child had, so neither Foundation's `Process` nor a pipe would ever see the end.
    @discardableResult
    private static func run(_ program: URL, _ arguments: [String], asPostgresUser: Bool) throws -> String {
        let command = [program.path] + arguments
        // `cd /` first: the postgres user may not be able to enter the test's working directory.
        let inRoot = ["/bin/sh", "-c", "cd / && exec \"$0\" \"$@\""] + command
        let argv = asPostgresUser ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + inRoot : inRoot
        let done: ChildProcess.Output
        do { done = try ChildProcess.run(argv[0], Array(argv.dropFirst()), timeout: 300) } catch {
            throw Failure(description: error.description)
        }
        let text = done.standardOutput + done.standardError
        guard done.status == 0 else { throw Failure(description: "\(program.lastPathComponent) failed (status \(done.status)): \(text)") }
        return text
    }
}
