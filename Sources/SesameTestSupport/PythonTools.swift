import Foundation

/// The Python virtual environment that test helpers share, at `<repository>/.build/pyenv`.
///
/// ``prepare(requirements:)`` makes sure pinned packages import from it: it creates the environment with
/// `python3 -m venv` only when it has no interpreter, and otherwise `pip install`s into the existing one, so the
/// packages other suites put there stay. Preparation holds an exclusive lock on `.build/pyenv.lock`, so two test
/// processes never install at once. A failure names what to install; nothing skips.
public enum PythonEnvironment {
    /// The repository root (two folders above this file).
    public static let repository: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized
    /// The environment's folder.
    public static let folder: URL = repository.appendingPathComponent(".build/pyenv")
    /// The environment's interpreter.
    public static var python: String { folder.appendingPathComponent("bin/python").path }

    /// Why a Python tool could not run, or what it answered when it refused.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String

        /// A failure with this explanation.
        public init(_ description: String) { self.description = description }
    }

    /// What a finished program printed and how it exited.
    public struct Output: Sendable {
        /// The exit status.
        public let status: Int32
        /// Everything written to standard output.
        public let standardOutput: String
        /// Everything written to standard error.
        public let standardError: String
    }

    /// Makes the environment hold exactly these pinned packages (and keeps whatever else it has).
    /// - Parameter requirements: `name==version` pins, as `pip install` takes them.
    /// - Returns: The interpreter's path once every pin is installed at its version.
    public static func prepare(requirements: [String]) -> Result<String, Failure> {
        let probe = ["-c", "import importlib.metadata as m; "
            + requirements.map { requirement -> String in
                let parts = requirement.split(separator: "=", omittingEmptySubsequences: true)
                return "assert m.version('\(parts[0])') == '\(parts.last!)', '\(requirement)'"
            }.joined(separator: "; ")]
        do {
            return try withLock {
                if FileManager.default.isExecutableFile(atPath: python), try run(python, probe).status == 0 { return .success(python) }
                if !FileManager.default.isExecutableFile(atPath: python) {
                    let created = try run("/usr/bin/env", ["python3", "-m", "venv", folder.path])
                    guard created.status == 0 else {
                        return .failure(Failure("python3 -m venv failed (apt-get install -y python3 python3-venv):\n\(created.combined)"))
                    }
                }
                let installed = try run(python, ["-m", "pip", "install", "--disable-pip-version-check", "-q"] + requirements, timeout: 600)
                guard installed.status == 0 else {
                    return .failure(Failure("pip install \(requirements.joined(separator: " ")) failed:\n\(installed.combined)"))
                }
                let check = try run(python, probe)
                guard check.status == 0 else { return .failure(Failure("the installed packages do not match the pins:\n\(check.combined)")) }
                return .success(python)
            }
        } catch {
            return .failure(Failure("cannot prepare the Python environment: \(error)"))
        }
    }

    /// Runs a program to completion and returns what it printed.
    /// - Parameters:
    ///   - path: The executable.
    ///   - arguments: Its arguments.
    ///   - environment: Its environment; the test process's when nil.
    ///   - timeout: Seconds before the program is terminated and this throws.
    /// - Returns: The exit status and output.
    /// - Throws: ``Failure`` when the program cannot start or runs past `timeout`.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 120) throws
        -> Output
    {
        do {
            let done = try ChildProcess.run(path, arguments, environment: environment, timeout: timeout)
            return Output(status: done.status, standardOutput: done.standardOutput, standardError: done.standardError)
        } catch {
            throw Failure(error.description)
        }
    }

    /// Runs `body` holding an exclusive `flock` on `.build/pyenv.lock` (and a process-wide lock).
    private static func withLock<T>(_ body: () throws -> T) throws -> T {
        try processLock.withLock {
            try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
            let path = folder.deletingLastPathComponent().appendingPathComponent("pyenv.lock").path
            let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw Failure("cannot open \(path): errno \(errno)") }
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else { throw Failure("cannot lock \(path): errno \(errno)") }
            }
            defer { flock(descriptor, LOCK_UN) }
            return try body()
        }
    }

    private static let processLock = NSLock()
}

extension PythonEnvironment.Output {
    /// Standard output followed by standard error, for failure messages.
    var combined: String { standardOutput + standardError }
}

/// PyJWT from PyPI, driving `Tests/Python/verify_token.py`: the offline partner check of a verification token.
///
/// It proves that an off-the-shelf JOSE library accepts the tokens and JWKS that Sesame produces, with only
/// `algorithms=["ES256"]`, the issuer and the audience configured.
public enum PyJWT {
    /// The pinned PyJWT version.
    public static let version = "2.10.1"
    /// The packages the script needs (`cryptography` gives PyJWT its EC support; pinned as the Appwrite suite pins it,
    /// so both suites are satisfied by one environment).
    public static let requirements = ["pyjwt==\(version)", "cryptography==50.0.2"]
    /// The verification script.
    public static let script: URL = PythonEnvironment.repository.appendingPathComponent("Tests/Python/verify_token.py")

    /// The interpreter with PyJWT installed, prepared once per test process.
    public static let python: Result<String, PythonEnvironment.Failure> = PythonEnvironment.prepare(requirements: requirements)

    /// Where the script reads the JWK Set from.
    public enum KeySetLocation: Sendable {
        /// A JWKS document on disk.
        case file(String)
        /// A JWKS URL, fetched with `jwt.PyJWKClient` (refetched once when the `kid` is missing).
        case url(String)
    }

    /// How a run ended when PyJWT did not accept the token.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The script ran and refused the token (exit status 1); `reason` is its explanation, such as
        /// `InvalidSignatureError: Signature verification failed`.
        case rejected(reason: String)
        /// The script could not run, or failed in another way (environment, usage, crash).
        case unavailable(String)

        public var description: String {
            switch self {
            case .rejected(let reason): "PyJWT rejected the token: \(reason)"
            case .unavailable(let detail): "PyJWT could not run: \(detail)"
            }
        }
    }

    /// Verifies a token as a partner would, with PyJWT.
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - jwks: Where the JWK Set is.
    ///   - issuer: The expected `iss`.
    ///   - audience: The expected `aud`.
    ///   - claims: More claims that must match: a string claim compares as text, any other as compact JSON
    ///     (`"verified": "true"`, `"ver": "1"`).
    ///   - now: The time to check `exp` and `iat` against; the real clock when nil.
    ///   - leeway: Allowed clock skew in seconds.
    /// - Returns: The claims as printed by the script (a JSON object, sorted keys), or why it failed.
    public static func verify(
        token: String, jwks: KeySetLocation, issuer: String, audience: String, claims: [String: String] = [:],
        now: Date? = nil, leeway: Int = 60
    ) -> Result<Data, Failure> {
        let python: String
        switch Self.python {
        case .success(let path): python = path
        case .failure(let failure): return .failure(.unavailable(failure.description))
        }
        var arguments = [script.path, "--token", token, "--issuer", issuer, "--audience", audience, "--leeway", String(leeway)]
        switch jwks {
        case .file(let path): arguments += ["--jwks-file", path]
        case .url(let url): arguments += ["--jwks-url", url]
        }
        for (name, value) in claims.sorted(by: { $0.key < $1.key }) { arguments += ["--claim", "\(name)=\(value)"] }
        if let now { arguments += ["--now", String(Int(now.timeIntervalSince1970))] }
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        environment["NO_PROXY"] = "127.0.0.1,localhost"
        environment["no_proxy"] = "127.0.0.1,localhost"
        let output: PythonEnvironment.Output
        do {
            output = try PythonEnvironment.run(python, arguments, environment: environment, timeout: 60)
        } catch {
            return .failure(.unavailable("\(error)"))
        }
        switch output.status {
        case 0:
            return .success(Data(output.standardOutput.utf8))
        case 1 where output.standardError.hasPrefix("rejected: "):
            return .failure(.rejected(reason: String(output.standardError.dropFirst("rejected: ".count))
                .trimmingCharacters(in: .whitespacesAndNewlines)))
        default:
            return .failure(.unavailable("exit status \(output.status):\n\(output.combined)"))
        }
    }
}
