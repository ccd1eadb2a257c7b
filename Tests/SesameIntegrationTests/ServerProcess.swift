import Foundation
import SesameCore
import SesameTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `sesame` binary SwiftPM built next to the test bundle.
let sesameExecutable: URL = {
    let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])].map {
        $0.deletingLastPathComponent().appendingPathComponent("sesame")
    }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}()

struct IntegrationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A fresh temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-it-\(UUID().uuidString.prefix(12))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    var path: String { url.path }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Backend {
    /// A fresh empty database of this kind for a server process; `folder` holds the SQLite file.
    func makeDatabase(in folder: TemporaryFolder) throws -> String {
        self == .sqlite ? "sqlite:\(folder.path)/sesame.db" : try makeURL()
    }
}

/// One `sesame serve` child process.
///
/// Started with `posix_spawn` (stdout and stderr to files, which the test polls) rather than Foundation's `Process`,
/// so that a SIGKILLed child is reaped by this class alone. Every instance kills its child in `deinit` if the test
/// did not stop it, so no server outlives its test in any path; tests also `defer { server.kill() }`.
final class ServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `termination` is read and written only under `lock`; the rest is immutable.

    enum Termination: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)
        var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    let pid: pid_t
    let port: UInt16
    /// The admin API key printed on the first start of an empty database, else nil.
    let adminKey: String?
    /// The project created on the first start, else nil.
    let createdProjectID: String?
    private let stdoutPath: String
    private let stderrPath: String
    private let lock = NSLock()
    private var termination: Termination?

    /// Starts `sesame serve --db DATABASE --listen LISTEN [--log off] EXTRA...` (the tests' build of `sesame` unless
    /// told another `executable`) and waits (bounded) until it listens.
    static func start(database: String, extra: [String] = [], workingDirectory: String? = nil, listen: String = "127.0.0.1:0",
                      logOff: Bool = true, readyTimeout: Double = 20, environment: [String: String]? = nil,
                      executable: URL = sesameExecutable) throws -> ServerProcess {
        var arguments = ["serve", "--db", database, "--listen", listen]
        if logOff { arguments += ["--log", "off"] }
        arguments += extra
        if !extra.contains("--master-key-file") { arguments += TestMasterKey.arguments(for: database) }
        let folder = FileManager.default.temporaryDirectory.path
        let tag = UUID().uuidString.prefix(12)
        let stdoutPath = "\(folder)/sesame-it-out-\(tag)", stderrPath = "\(folder)/sesame-it-err-\(tag)"
        let pid = try spawn(executable.path, arguments, workingDirectory: workingDirectory, stdout: stdoutPath, stderr: stderrPath,
                            environment: environment)
        let deadline = Date().addingTimeInterval(readyTimeout)
        while true {
            let output = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix("sesame: listening on http://") }),
               let port = line.split(separator: ":").last.flatMap({ UInt16($0) }) {
                let key = output.split(separator: "\n").first { $0.hasPrefix("sesame: admin API key") }
                    .flatMap { $0.split(separator: " ").last.map(String.init) }
                let project = output.split(separator: "\n").first { $0.hasPrefix("sesame: created project ") }
                    .map { String($0.split(separator: " ")[3]) }
                return ServerProcess(pid: pid, port: port, adminKey: key, createdProjectID: project, stdoutPath: stdoutPath,
                                     stderrPath: stderrPath)
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                let errors = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
                removeFiles([stdoutPath, stderrPath])
                throw IntegrationFailure("sesame serve exited early (wait status \(status)):\n\(output)\n\(errors)")
            }
            if Date() > deadline {
                Glibc.kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                removeFiles([stdoutPath, stderrPath])
                throw IntegrationFailure("sesame serve did not print its listening line within \(readyTimeout) s:\n\(output)")
            }
            usleep(20_000)
        }
    }

    private init(pid: pid_t, port: UInt16, adminKey: String?, createdProjectID: String?, stdoutPath: String, stderrPath: String) {
        self.pid = pid
        self.port = port
        self.adminKey = adminKey
        self.createdProjectID = createdProjectID
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    deinit {
        kill()
        Self.removeFiles([stdoutPath, stderrPath])
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Sends `signal` (unless the child was already reaped).
    func send(_ signal: Int32) {
        lock.withLock {
            if termination == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Crashes the server as a trap would and waits for it to end; returns how it ended (the report goes to
    /// `crashes`, the directory its crash reports go to).
    ///
    /// A trap is a SIGILL raised by the faulting instruction; the runtime's crash handler writes the report, restores
    /// the default action and returns, and the instruction faults again, which ends the process. A SIGILL sent from
    /// outside takes the same handler, but nothing faults again afterwards: a second one, once the report is written,
    /// ends the process.
    func crash(reportingTo crashes: String) -> Termination? {
        send(SIGILL)
        let deadline = Date().addingTimeInterval(20)
        while ((try? FileManager.default.contentsOfDirectory(atPath: crashes)) ?? []).isEmpty && Date() < deadline { usleep(50_000) }
        usleep(500_000)  // the backtracer finishes its file
        send(SIGILL)
        return waitForExit(timeout: 20)
    }

    /// Waits up to `timeout` seconds for the child to end; nil if it is still running.
    func waitForExit(timeout: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let done: Termination? = lock.withLock {
                if let termination { return termination }
                var status: Int32 = 0
                guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
                // WIFEXITED: low 7 bits clear; WEXITSTATUS: the next 8; else WTERMSIG: the low 7 bits.
                termination = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
                return termination
            }
            if let done { return done }
            if Date() > deadline { return nil }
            usleep(10_000)
        }
    }

    /// SIGKILL and reap; harmless when the child already ended.
    @discardableResult
    func kill() -> Termination? {
        send(SIGKILL)
        return waitForExit(timeout: 10)
    }

    /// SIGTERM (graceful stop), then SIGKILL if it has not ended within `timeout`.
    @discardableResult
    func terminate(timeout: Double = 15) -> Termination? {
        send(SIGTERM)
        if let done = waitForExit(timeout: timeout) { return done }
        kill()
        return nil
    }

    private static func removeFiles(_ paths: [String]) {
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }

    /// `posix_spawn`s `program` with stdin from /dev/null and stdout/stderr to files, optionally in another folder.
    private static func spawn(_ program: String, _ arguments: [String], workingDirectory: String?, stdout: String,
                              stderr: String, environment: [String: String]?) throws -> pid_t {
        // `cd` through the shell, which then `exec`s the server: the pid stays the server's.
        let argv = workingDirectory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, program] + arguments }
            ?? [program] + arguments
        return try ChildProcess.spawn(argv, stdout: stdout, stderr: stderr, environment: environment)
    }
}

/// Waits until every running server serves the configuration changes made so far by anyone else (the CLI, another
/// node): one default configuration refresh interval.
func waitForConfigurationRefresh() { waitOut(Sesame.defaultConfigurationRefresh) }

/// Runs the admin CLI (`sesame platform ...`, `sesame apikey ...`) to completion. A running server serves what it changed
/// within its configuration refresh interval (``waitForConfigurationRefresh()``).
enum SesameCLI {
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
        /// The first stdout line parsed as a JSON object.
        var json: [String: Any] {
            let line = stdout.split(separator: "\n").first.map(String.init) ?? ""
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
        }
    }

    static func run(_ arguments: [String]) throws -> Outcome {
        var arguments = arguments
        if let db = arguments.firstIndex(of: "--db"), db + 1 < arguments.count, !arguments.contains("--master-key-file") {
            arguments += TestMasterKey.arguments(for: arguments[db + 1])
        }
        let done = try ChildProcess.run(sesameExecutable.path, arguments)
        return Outcome(status: done.status, stdout: done.standardOutput, stderr: done.standardError)
    }

    /// Runs and requires exit 0, returning the first line as JSON.
    @discardableResult
    static func succeed(_ arguments: [String]) throws -> [String: Any] {
        let outcome = try run(arguments)
        guard outcome.status == 0 else {
            throw IntegrationFailure("sesame \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.stderr)")
        }
        return outcome.json
    }
}

/// The master keys of the tests' `sesame` children: on SQLite the key file the server keeps beside the database (made
/// on its first start), on PostgreSQL (which needs one passed) one key file shared by every server of this test run.
enum TestMasterKey {
    static let sharedFile: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-it-master-\(UUID().uuidString.prefix(12)).key").path
        _ = FileManager.default.createFile(atPath: path, contents: Data((MasterKey.generate().text + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return path
    }()

    /// `--master-key-file` for a PostgreSQL database; nothing for SQLite (the server's own file beside the database).
    static func arguments(for database: String) -> [String] {
        database.hasPrefix("postgres") ? ["--master-key-file", sharedFile] : []
    }

    /// The keys a server on `database` uses, to open the same store in the test process.
    static func keyring(for database: String) throws -> MasterKeyring {
        var path = sharedFile
        if database.hasPrefix("sqlite:") {
            path = URL(fileURLWithPath: String(database.dropFirst("sqlite:".count))).deletingLastPathComponent().appendingPathComponent("master.key").path
        }
        return try MasterKeyring(keyFile: try String(contentsOfFile: path, encoding: .utf8))
    }
}

/// A value shared between threads under a lock.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var current: Value { withLock { $0 } }
}

/// Runs `body(i)` for i in 0..<count on `count` dedicated threads released together; waits up to `timeout` seconds.
/// - Returns: whether every thread finished in time.
@discardableResult
func runOnThreads(_ count: Int, timeout: Double = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    let gate = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            gate.wait()
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { gate.signal() }
    return group.wait(timeout: .now() + timeout) == .success
}
