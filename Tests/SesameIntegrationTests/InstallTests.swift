import Foundation
import SesameTestSupport
import Testing

/// `make install`: the binary into `$(DESTDIR)$(PREFIX)/bin` with its web files beside it, and the backtracer that
/// writes its crash reports into `$(DESTDIR)$(PREFIX)/libexec/sesame`. The release build it makes first is `make
/// install`'s own (`make test` makes it before the tests run); `make install-files` installs an existing build.
@Suite struct InstallTests {
    @Test("install-files puts sesame and its resources under DESTDIR/PREFIX/bin; the installed binary runs")
    func install() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let build = sesameExecutable.deletingLastPathComponent().path
        let made = try ChildProcess.run("/usr/bin/make", ["-C", PythonEnvironment.repository.path, "--no-print-directory", "install-files",
                                                          "BUILD=\(build)", "DESTDIR=\(folder.path)", "PREFIX=/opt/sesame"])
        #expect(made.status == 0, "\(made.standardOutput)\(made.standardError)")
        let bin = folder.url.appendingPathComponent("opt/sesame/bin")
        #expect(FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("sesame").path))
        let sdk = bin.appendingPathComponent("Sesame_SesameServer.resources/Assets/sdk/sesame.js")
        let source = PythonEnvironment.repository.appendingPathComponent("Sources/SesameServer/Assets/sdk/sesame.js")
        #expect(FileManager.default.contents(atPath: sdk.path) == FileManager.default.contents(atPath: source.path), "\(sdk.path)")
        let help = try ChildProcess.run(bin.appendingPathComponent("sesame").path, ["help"])
        #expect(help.status == 0 && help.standardOutput.contains("usage: sesame"), "\(help.standardOutput)\(help.standardError)")
    }

    @Test("the installed release build carries the Swift runtime inside itself, and its crash report is written through the backtracer beside it")
    func releaseBuild() throws {
        let release = PythonEnvironment.repository.appendingPathComponent(".build/release")
        try #require(FileManager.default.isExecutableFile(atPath: release.appendingPathComponent("sesame").path),
                     "no release build: make test builds it (swift build -c release --static-swift-stdlib --product sesame)")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let made = try ChildProcess.run("/usr/bin/make", ["-C", PythonEnvironment.repository.path, "--no-print-directory", "install-files",
                                                          "BUILD=\(release.path)", "DESTDIR=\(folder.path)", "PREFIX=/opt/sesame"])
        #expect(made.status == 0, "\(made.standardOutput)\(made.standardError)")
        let installed = folder.url.appendingPathComponent("opt/sesame/bin/sesame")
        #expect(FileManager.default.isExecutableFile(atPath: folder.url.appendingPathComponent("opt/sesame/libexec/sesame/swift-backtrace").path))

        // Its shared libraries are the system's (C libraries, OpenSSL, SQLite, libpq, libmicrohttpd), none of Swift's.
        let needed = try ChildProcess.run("/usr/bin/readelf", ["-d", installed.path])
        let libraries = needed.standardOutput.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(libraries.contains { $0.contains("libc.so") } && libraries.contains { $0.contains("libsqlite3") }, "\(needed.standardOutput)")
        #expect(!libraries.contains { $0.contains("libswift") || $0.contains("Foundation") }, "\(libraries)")

        // Without the toolchain's shared runtime there is no backtracer in the toolchain's place to find: the report
        // exists only if the one installed beside the binary is used.
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = nil
        let server = try ServerProcess.start(database: "sqlite:\(folder.path)/sesame.db", logOff: false, environment: environment,
                                             executable: installed)
        defer { server.kill() }
        #expect(try HTTPClient(port: server.port, key: "").get("/health").status == 200)
        let crashes = "\(folder.path)/crashes"
        #expect(server.crash(reportingTo: crashes) == .signaled(SIGILL))
        let reports = (try? FileManager.default.contentsOfDirectory(atPath: crashes)) ?? []
        #expect(reports.count == 1 && reports.first?.hasPrefix("sesame-") == true, "\(reports)\n\(server.stderr)")
        let report = try String(contentsOfFile: "\(crashes)/\(try #require(reports.first))", encoding: .utf8)
        #expect(report.contains("Program crashed") && !report.contains("Registers"), "\(report)")
    }
}
