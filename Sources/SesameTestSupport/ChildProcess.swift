import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts programs for tests and benchmarks with `posix_spawn` and `waitpid`.
///
/// Not Foundation's `Process`: on Linux (Swift 6.3) `Process.run()` intermittently crashes with a buffer over-read
/// while it closes inherited descriptors (swift-corelibs-foundation pull request 5472), which took down whole test
/// runs here, and it learns that a child exited through a socket any grandchild inherits. Standard streams go to files,
/// so a chatty child can never block on a full pipe.
public enum ChildProcess {
    /// What a finished program left.
    public struct Output: Sendable {
        /// The exit code, or 128 plus the signal number when a signal ended it.
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// The program could not start, or did not finish in time (it is then killed).
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Runs `path` with `arguments` to completion.
    /// - Parameters:
    ///   - stdin: bytes to read on standard input (then end of file).
    ///   - environment: the child's whole environment; this process's when `nil`.
    ///   - timeout: seconds before the child is killed and this throws.
    public static func run(_ path: String, _ arguments: [String], stdin: [UInt8] = [], environment: [String: String]? = nil,
                           timeout: Double = 120) throws(Failure) -> Output {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-child-\(UUID().uuidString)").path
        let (input, output, error) = (base + ".in", base + ".out", base + ".err")
        defer { for file in [input, output, error] { try? FileManager.default.removeItem(atPath: file) } }
        guard FileManager.default.createFile(atPath: input, contents: Data(stdin)) else {
            throw Failure(description: "cannot write \(input)")
        }
        let pid = try spawn([path] + arguments, stdin: input, stdout: output, stderr: error, environment: environment)
        guard let status = wait(pid, timeout: timeout) else {
            kill(pid, SIGKILL)
            _ = wait(pid, timeout: 10)
            throw Failure(description: "\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        return Output(status: status, standardOutput: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
                      standardError: (try? String(contentsOfFile: error, encoding: .utf8)) ?? "")
    }

    /// Starts `argv[0]` with standard input read from the file `stdin` and the outputs written to the files `stdout`
    /// and `stderr` (created or truncated; `nil` keeps this process's stream); the caller waits for it.
    /// - Returns: the child's process ID.
    public static func spawn(_ argv: [String], stdin: String = "/dev/null", stdout: String, stderr: String?,
                             environment: [String: String]? = nil) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let cEnvironment = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { cEnvironment?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = cEnvironment.map { posix_spawn(&pid, argv[0], &actions, nil, cArguments, $0) }
            ?? posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else { throw Failure(description: "cannot start \(argv[0]): error \(spawned)") }
        return pid
    }

    /// Waits for a child to end, at most `timeout` seconds.
    /// - Returns: its exit code (128 plus the signal number when a signal ended it), or `nil` if it is still running.
    public static func wait(_ pid: pid_t, timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                // WIFEXITED: the low 7 bits are clear, and WEXITSTATUS is the next 8; else WTERMSIG is the low 7.
                return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
            }
            if result == -1 && errno != EINTR { return -1 }
            guard Date() < deadline else { return nil }
            usleep(5_000)
        }
    }
}
