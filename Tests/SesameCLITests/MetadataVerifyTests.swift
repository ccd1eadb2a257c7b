import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
import WebAuthn

/// `sesame webauthn verify-registration --metadata BLOB_FILE`: a registration judged by a metadata BLOB.
@Suite struct VerifyRegistrationMetadataTests {
    static let service = TestMetadataService()
    static let now = "2030-01-15T12:00:00Z"
    /// Where one test's BLOB and root files go; each test removes it.
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-mds-cli-\(UUID().uuidString)")

    func packedFixture() throws -> CeremonyFixture {
        var fixture = CeremonyFixture()
        fixture.aaguid = AttestationFixtures.packedAAGUID
        fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                          certificates: [try AttestationFixtures.certificate("attestation-packed")])
        return fixture
    }

    /// Writes a BLOB with one entry for the packed fixture and the test root, and returns the flags naming them.
    func metadataFlags(statuses: [(String, String?)], nextUpdate: String = "2030-02-01") throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let entry = TestMetadataService.entry(aaguid: "5e5a4e30-0000-4000-8000-000000000001", description: "Sesame Packed Key",
                                              roots: [try AttestationFixtures.certificate("attestation-root")], statuses: statuses)
        let name = UUID().uuidString
        let blob = folder.appendingPathComponent("\(name).jwt"), root = folder.appendingPathComponent("\(name).pem")
        try Data(Self.service.blob(payload: TestMetadataService.payload(nextUpdate: nextUpdate, entries: [entry])).utf8).write(to: blob)
        try Data(TestMetadataService.pem(Self.service.root.certificate).utf8).write(to: root)
        return ["--metadata", blob.path, "--metadata-root", root.path]
    }

    func run(_ fixture: CeremonyFixture, _ extra: [String]) throws -> SesameProcess.Outcome {
        try SesameProcess.run(["webauthn", "verify-registration", "--rp-id", fixture.rpID, "--origin", fixture.origin,
                               "--challenge", Base64URL.encode(fixture.challenge), "--now", Self.now] + extra,
                              stdin: CeremonyFixture.json(fixture.registration()))
    }

    @Test("names the authenticator and its status from metadata")
    func names() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try run(try packedFixture(), try metadataFlags(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")]))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.json["authenticator"] as? String == "Sesame Packed Key")
        #expect(outcome.json["metadataStatus"] as? String == "FIDO_CERTIFIED_L2")
        // Without --metadata the output has neither member.
        let plain = try run(try packedFixture(), [])
        #expect(plain.status == 0 && plain.json["authenticator"] == nil && plain.json["metadataStatus"] == nil)
    }

    @Test("a revoked authenticator fails with authenticator_revoked")
    func revoked() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try run(try packedFixture(), try metadataFlags(statuses: [("REVOKED", "2026-12-01")]))
        #expect(outcome.status == 1)
        #expect(outcome.json["verified"] as? Bool == false)
        #expect(outcome.json["error"] as? String == "authenticator_revoked")
    }

    @Test("an unusable BLOB is a usage error naming its code")
    func unusable() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let expired = try run(try packedFixture(), try metadataFlags(statuses: [], nextUpdate: "2030-01-01"))
        #expect(expired.status == 2 && expired.stderr.contains("metadata_expired"), "\(expired.stderr)")
        var flags = try metadataFlags(statuses: [])
        flags.removeLast(2)  // the built-in FIDO root did not sign the test BLOB
        let untrusted = try run(try packedFixture(), flags)
        #expect(untrusted.status == 2 && untrusted.stderr.contains("metadata_untrusted_chain"), "\(untrusted.stderr)")
    }
}
