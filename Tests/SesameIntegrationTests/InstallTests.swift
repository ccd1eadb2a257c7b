import Foundation
import SesameTestSupport
import Testing

/// `make install`: the binary into `$(DESTDIR)$(PREFIX)/bin` with its web files beside it. The release build it makes
/// first is `make install`'s own; this test installs the debug build the tests run (`make install-files`).
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
}
