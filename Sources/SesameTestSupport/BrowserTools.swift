import Foundation

/// A real browser for page tests: headless Chromium and chromedriver from Debian, Selenium (and Pillow, which checks
/// that screenshots are not blank) from PyPI in the shared Python environment, driving `Tests/Browser/*.py`.
///
/// Prepared once per test process. The Debian packages are installed by `scripts/ensure-deps.sh` (as the Makefile
/// does): as root it runs `apt-get`, otherwise it fails with the exact command to run. Nothing skips.
public enum BrowserTools {
    /// The Debian packages of the browser and its driver.
    public static let debianPackages = ["chromium", "chromium-driver"]
    /// The pinned PyPI packages (Selenium 4.40 and later want a newer `certifi` than the registry serves here).
    /// (zxing-cpp decodes the QR codes the pages show.)
    public static let requirements = ["selenium==4.39.0", "pillow==13.0.0", "zxing-cpp==3.1.1"]
    /// The folder of the Python page tests.
    public static let scripts: URL = PythonEnvironment.repository.appendingPathComponent("Tests/Browser")
    /// Where the page tests save their screenshots.
    public static let screenshots: URL = PythonEnvironment.repository.appendingPathComponent(".build/browser-screenshots")

    /// The interpreter with Selenium, once Chromium and chromedriver are installed.
    public static let python: Result<String, PythonEnvironment.Failure> = {
        let ensure = PythonEnvironment.repository.appendingPathComponent("scripts/ensure-deps.sh").path
        do {
            let installed = try PythonEnvironment.run("/bin/bash", [ensure] + debianPackages, timeout: 900)
            guard installed.status == 0 else {
                return .failure(PythonEnvironment.Failure("Chromium is not installed:\n\(installed.standardError)"))
            }
        } catch {
            return .failure(error as? PythonEnvironment.Failure ?? PythonEnvironment.Failure("\(error)"))
        }
        return PythonEnvironment.prepare(requirements: requirements)
    }()

    /// Runs one page test script against `url` and returns its exit status and output.
    /// - Parameters:
    ///   - script: A file name in `Tests/Browser`.
    ///   - environment: Variables for the script (`SESAME_URL` and the like), added to this process's; its
    ///     `SESAME_SCREENSHOTS`, when given, replaces ``screenshots`` as the folder.
    ///   - timeout: Seconds before the run is stopped.
    /// - Throws: ``PythonEnvironment/Failure`` when the tools are missing or the script cannot run in time.
    public static func run(_ script: String, environment: [String: String], timeout: Double = 300) throws -> PythonEnvironment.Output {
        let python = try Self.python.get()
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        // Tests that run in parallel (one per backend) give each run its own folder, or their files would overwrite
        // each other while the other run reads them.
        merged["SESAME_SCREENSHOTS"] = environment["SESAME_SCREENSHOTS"] ?? screenshots.path
        merged["PYTHONDONTWRITEBYTECODE"] = "1"
        merged["NO_PROXY"] = "127.0.0.1,localhost"
        merged["no_proxy"] = "127.0.0.1,localhost"
        // Selenium must use the Debian driver, never download one.
        merged["SE_OFFLINE"] = "true"
        return try PythonEnvironment.run(python, [scripts.appendingPathComponent(script).path], environment: merged, timeout: timeout)
    }
}
