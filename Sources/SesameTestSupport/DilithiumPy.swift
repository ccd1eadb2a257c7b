import Foundation

/// dilithium-py from PyPI (pure Python ML-DSA, FIPS 204), driving `Tests/Python/mldsa_cross_check.py`: an
/// independent implementation that makes ML-DSA signatures and judges tampered ones, for cross-checking Sesame's.
///
/// Version 1.5.1 implements the final FIPS 204: M′ = 0 || len(ctx) || ctx || M, c̃ of λ/4 bytes all fed to
/// SampleInBall, and the unique hint encoding (not round-3 Dilithium).
public enum DilithiumPy {
    /// The pinned dilithium-py version.
    public static let version = "1.5.1"
    /// The packages the script needs.
    public static let requirements = ["dilithium-py==\(version)"]
    /// The case generator.
    public static let script: URL = PythonEnvironment.repository.appendingPathComponent("Tests/Python/mldsa_cross_check.py")

    /// The interpreter with dilithium-py installed, prepared once per test process.
    public static let python: Result<String, PythonEnvironment.Failure> = PythonEnvironment.prepare(requirements: requirements)

    /// One case: a public key, message, context and signature, with dilithium-py's verdict on them.
    public struct Case: Decodable, Sendable, CustomStringConvertible {
        /// `ML-DSA-44`, `ML-DSA-65` or `ML-DSA-87`.
        public let parameterSet: String
        /// What was done to the signed tuple (`valid`, `z bit`, `other context`, …).
        public let kind: String
        /// Hex: the encoded public key.
        public let pk: String
        /// Hex: the message.
        public let message: String
        /// Hex: the context string.
        public let context: String
        /// Hex: the encoded signature.
        public let signature: String
        /// dilithium-py's ML-DSA.Verify answer.
        public let expected: Bool

        public var description: String { "\(parameterSet) \(kind) (expected \(expected))" }
    }

    /// What the script printed.
    public struct Cases: Decodable, Sendable {
        /// The implementation and version that made and judged the cases.
        public let implementation: String
        /// The cases.
        public let cases: [Case]
    }

    /// Runs the script: `keys` key pairs per parameter set, `messages` messages per key, each with its tampered variants.
    /// - Returns: The cases, or why the script could not run.
    public static func cases(keys: Int, messages: Int, seed: Int) -> Result<Cases, PythonEnvironment.Failure> {
        let python: String
        switch Self.python {
        case .success(let path): python = path
        case .failure(let failure): return .failure(failure)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        do {
            let output = try PythonEnvironment.run(
                python, [script.path, "--keys", String(keys), "--messages", String(messages), "--seed", String(seed)],
                environment: environment, timeout: 300)
            guard output.status == 0 else {
                return .failure(PythonEnvironment.Failure("mldsa_cross_check.py exited \(output.status):\n\(output.standardError)"))
            }
            return .success(try JSONDecoder().decode(Cases.self, from: Data(output.standardOutput.utf8)))
        } catch {
            return .failure(PythonEnvironment.Failure("mldsa_cross_check.py: \(error)"))
        }
    }
}
