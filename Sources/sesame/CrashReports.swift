import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `sesame serve` puts the report of a crash: a file of its own, never the request log's stream.
///
/// Swift's runtime backtracer prints a crashed process's threads, registers and the memory they point at to standard
/// error, which is where the request log goes. Its settings come from the `SWIFT_BACKTRACE` environment variable,
/// which the runtime reads only when the process starts, so `serve` sets it and replaces itself with a fresh copy
/// (same process ID, same arguments) before doing anything else. Reports then go to one file per crash in the crash
/// directory (0700), without registers, memory bytes or image lists, with `sanitize` on (no user paths). The runtime
/// still writes one line to standard error, `*** Signal N: Backtracing from 0x…  done ***`, saying a report was made.
///
/// The directory is `SESAME_CRASH_DIR`, else `crashes/` beside an SQLite database, else `./.sesame/crashes`. An
/// operator who sets `SWIFT_BACKTRACE` keeps their own settings.
///
/// The report is written by the Swift toolchain's backtracer, a program of its own. A binary linked against the
/// toolchain's shared runtime finds it in the toolchain; a release build, which carries the runtime inside itself, uses
/// the self-contained one `make install` puts at `../libexec/sesame/swift-backtrace` from the binary.
enum CrashReports {
    /// The backtracer settings, before `output-to`.
    static let settings = "enable=yes,interactive=no,color=no,registers=none,images=none,sanitize=yes,threads=crashed,warnings=suppressed"

    /// Re-executes the process with crash reports sent to their directory, unless that is already arranged.
    /// Returns only when no re-execution happened (already arranged, or it could not be done).
    static func arrange(arguments: [String], environment: [String: String]) {
        guard environment["SWIFT_BACKTRACE"] == nil else { return }
        let directory = directory(arguments: arguments, environment: environment)
        guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])) != nil else {
            FileHandle.standardError.write(Data("sesame: cannot create the crash directory \(directory); crash reports go to stderr\n".utf8))
            return
        }
        let absolute = URL(fileURLWithPath: directory).standardizedFileURL.path
        // The executable's own path (not /proc/self/exe), so the report files carry its name.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/proc/self/exe"
        var chosen = "\(settings),output-to=\(absolute)"
        if let backtracer = installedBacktracer(executable: executable) { chosen += ",swift-backtrace=\(backtracer)" }
        setenv("SWIFT_BACKTRACE", chosen, 1)
        let argv: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(executable, argv)
        // Only reached when exec failed: carry on in this process, with the runtime's default crash output.
        unsetenv("SWIFT_BACKTRACE")
        FileHandle.standardError.write(Data("sesame: could not re-execute for crash reports (errno \(errno))\n".utf8))
    }

    /// The backtracer installed beside `executable` (`../libexec/sesame/swift-backtrace`), if there is one whose path
    /// the settings can carry (they are separated by commas).
    static func installedBacktracer(executable: String) -> String? {
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("libexec/sesame/swift-backtrace").standardizedFileURL.path
        guard !path.contains(","), FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }

    /// The crash directory for these `serve` arguments.
    static func directory(arguments: [String], environment: [String: String]) -> String {
        if let directory = environment["SESAME_CRASH_DIR"], !directory.isEmpty { return directory }
        let flag = arguments.firstIndex(of: "--db").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        let database = flag ?? environment["SESAME_DB"] ?? Defaults.database
        if database.hasPrefix("sqlite:") {
            let path = String(database.dropFirst("sqlite:".count))
            return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("crashes").path
        }
        return "./.sesame/crashes"
    }
}
