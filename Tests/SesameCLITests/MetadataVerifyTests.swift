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
    func metadataFlags(statuses: [(String, String?)], nextUpdate: String = "2030-02-01", userVerification: [[String]]? = nil) throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let entry = TestMetadataService.entry(aaguid: "5e5a4e30-0000-4000-8000-000000000001", description: "Sesame Packed Key",
                                              roots: [try AttestationFixtures.certificate("attestation-root")], statuses: statuses,
                                              userVerification: userVerification)
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

    /// Writes `json` as a policy file and returns the flags naming it.
    func policyFlags(_ json: String) throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        return ["--policy", file.path]
    }

    @Test("--policy: a registration the policy accepts verifies and names the authenticator and its certification level")
    func policyAccepts() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = #"{"acceptNoneAttestation":false,"allowedAAGUIDs":["5E5A4E30-0000-4000-8000-000000000001"],"#
            + #""minimumCertificationLevel":"FIDO_CERTIFIED_L2","userVerificationMethods":["fingerprint_internal"]}"#
        let outcome = try run(try packedFixture(), try metadataFlags(statuses: [("FIDO_CERTIFIED_L2plus", "2025-01-01")],
                                                                      userVerification: [["fingerprint_internal"]]) + policyFlags(policy))
        #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.json["verified"] as? Bool == true)
        #expect(outcome.json["authenticator"] as? String == "Sesame Packed Key")
        #expect(outcome.json["certificationLevel"] as? String == "FIDO_CERTIFIED_L2plus")
    }

    @Test("--policy: each rule refuses with its reason code, exit 1", arguments: [
        (#"{"acceptNoneAttestation":false}"#, "none", "attestation_none_refused"),
        (#"{"acceptSelfAttestation":false}"#, "self", "attestation_self_refused"),
        (#"{"deniedAAGUIDs":["5e5a4e30-0000-4000-8000-000000000001"]}"#, "packed", "aaguid_denied"),
        (#"{"allowedAAGUIDs":["0bb1e7a5-0000-4000-8000-0000000000aa"]}"#, "packed", "aaguid_not_allowed"),
        (#"{"allowedAAGUIDs":["5e5a4e30-0000-4000-8000-000000000001"]}"#, "none", "authenticator_not_attested"),
        (#"{"minimumCertificationLevel":"FIDO_CERTIFIED_L3"}"#, "packed", "certification_level_too_low"),
        (#"{"userVerificationMethods":["faceprint_internal"]}"#, "packed", "user_verification_method_not_allowed"),
    ])
    func policyRefuses(policy: String, attestation: String, reason: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        var fixture = try packedFixture()
        switch attestation {
        case "none": fixture.attestation = .none
        case "self": fixture.attestation = .packedSelf
        default: break
        }
        let outcome = try run(fixture, try metadataFlags(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")], userVerification: [["passcode_internal"]])
                                  + policyFlags(policy))
        #expect(outcome.status == 1, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.json["verified"] as? Bool == false)
        #expect(outcome.json["error"] as? String == reason, "\(outcome.stdout)")
        #expect((outcome.json["message"] as? String)?.hasPrefix("attestation policy: ") == true, "\(outcome.stdout)")
    }

    @Test("--policy without --metadata: a rule about the model is authenticator_not_in_metadata; the others apply")
    func policyWithoutMetadata() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let needsModel = try run(try packedFixture(), try policyFlags(#"{"minimumCertificationLevel":"FIDO_CERTIFIED_L1"}"#))
        #expect(needsModel.status == 1 && needsModel.json["error"] as? String == "authenticator_not_in_metadata", "\(needsModel.stdout)")
        let plain = try run(try packedFixture(), try policyFlags(#"{"acceptNoneAttestation":false}"#))
        #expect(plain.status == 0 && plain.json["authenticator"] == nil, "\(plain.stdout)\(plain.stderr)")
    }

    @Test("--policy with a malformed or missing file is a usage error saying what is wrong, exit 2")
    func policyFileErrors() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for (json, message) in [("{", "not one JSON object"), (#"{"acceptNoneAttestation":"no"}"#, "acceptNoneAttestation must be true or false"),
                                (#"{"minimumCertificationLevel":"gold"}"#, "minimumCertificationLevel must be null or one of"),
                                (#"{"allowedAAGUIDs":["x"]}"#, #"allowedAAGUIDs: "x" is not an AAGUID"#), (#"{"extra":1}"#, #"unknown member "extra""#)] {
            let flags = try policyFlags(json)
            let outcome = try run(try packedFixture(), flags)
            #expect(outcome.status == 2 && outcome.stderr.contains("policy file \(flags[1]): attestation policy: \(message)"),
                    "\(json): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
        }
        let missing = try run(try packedFixture(), ["--policy", folder.appendingPathComponent("missing.json").path])
        #expect(missing.status == 2 && missing.stderr.contains("cannot read policy file"), "\(missing.stderr)")
    }
}
