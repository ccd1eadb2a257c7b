import Foundation
import SesameTestSupport
import Testing

/// `sesame metadata load|status` as an operator runs them, on a fresh SQLite database.
@Suite struct MetadataCommandTests {
    static let service = TestMetadataService()

    struct Files {
        let folder: URL
        var db: String { "sqlite:" + folder.appendingPathComponent("sesame.db").path }

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-mds-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        func write(_ name: String, _ text: String) throws -> String {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    static func blob(number: Int, nextUpdate: String = "2030-02-01") -> String {
        let entry = TestMetadataService.entry(aaguid: "5e5a4e30-0000-4000-8000-000000000001", roots: [service.intermediate.certificate])
        return service.blob(payload: TestMetadataService.payload(number: number, nextUpdate: nextUpdate, entries: [entry])) + "\n"
    }

    @Test("load verifies a BLOB against --root and stores it; status reports it; an older BLOB is refused")
    func loadAndStatus() throws {
        let files = try Files()
        defer { files.remove() }
        let root = try files.write("root.pem", TestMetadataService.pem(Self.service.root.certificate))
        let empty = try SesameCLI.succeed(["metadata", "status", "--db", files.db])
        #expect(empty["loaded"] as? Bool == false)

        let blob = try files.write("blob.jwt", Self.blob(number: 12))
        let loaded = try SesameCLI.succeed(["metadata", "load", blob, "--root", root, "--db", files.db])
        #expect(loaded["no"] as? Int == 12)
        #expect(loaded["nextUpdate"] as? String == "2030-02-01")
        #expect(loaded["entries"] as? Int == 1)

        let status = try SesameCLI.succeed(["metadata", "status", "--db", files.db])
        #expect(status["loaded"] as? Bool == true)
        #expect(status["no"] as? Int == 12)
        #expect(status["nextUpdate"] as? String == "2030-02-01")
        #expect(status["entries"] as? Int == 1 && status["lookupKeys"] as? Int == 1)
        #expect(status["stale"] as? Bool == false)

        let older = try files.write("older.jwt", Self.blob(number: 11))
        let refused = try SesameCLI.run(["metadata", "load", older, "--root", root, "--db", files.db])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("metadata_not_newer"), "\(refused.stderr)")
        #expect(try SesameCLI.succeed(["metadata", "status", "--db", files.db])["no"] as? Int == 12)
    }

    @Test("load refuses a BLOB that does not chain to the root (the built-in FIDO root by default), is expired or broken")
    func refusals() throws {
        let files = try Files()
        defer { files.remove() }
        let root = try files.write("root.pem", TestMetadataService.pem(Self.service.root.certificate))
        let other = try files.write("other.pem", TestMetadataService.pem(TestCertificateAuthority.root().certificate))
        let blob = try files.write("blob.jwt", Self.blob(number: 1))
        let cases: [([String], String)] = [
            (["metadata", "load", blob], "metadata_untrusted_chain"),
            (["metadata", "load", blob, "--root", other], "metadata_untrusted_chain"),
            (["metadata", "load", try files.write("old.jwt", Self.blob(number: 1, nextUpdate: "2026-01-01")), "--root", root], "metadata_expired"),
            (["metadata", "load", try files.write("bad.jwt", "a.b.c"), "--root", root], "metadata_malformed"),
        ]
        for (arguments, reason) in cases {
            let outcome = try SesameCLI.run(arguments + ["--db", files.db])
            #expect(outcome.status == 1, "\(arguments)")
            #expect(outcome.stderr.contains(reason), "\(arguments): \(outcome.stderr)")
        }
        #expect(try SesameCLI.succeed(["metadata", "status", "--db", files.db])["loaded"] as? Bool == false)

        // Bad usage exits 2.
        for arguments in [["metadata", "load"], ["metadata", "load", blob, "--root", files.folder.appendingPathComponent("missing.pem").path],
                          ["metadata", "frobnicate"], ["metadata", "status", "--bogus", "1"]] {
            #expect(try SesameCLI.run(arguments + ["--db", files.db]).status == 2, "\(arguments)")
        }
    }
}
