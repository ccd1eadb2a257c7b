import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
import WebAuthn

/// Runs the built `sesame` executable as a user would.
struct SesameProcess {
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String

        /// stdout parsed as one JSON object.
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]) ?? [:]
        }
    }

    /// The `sesame` binary SwiftPM built next to the test bundle.
    static let executable: URL = {
        let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])].map {
            $0.deletingLastPathComponent().appendingPathComponent("sesame")
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    static func run(_ arguments: [String], stdin: [UInt8] = []) throws -> Outcome {
        let done = try ChildProcess.run(executable.path, arguments, stdin: stdin)
        return Outcome(status: done.status, stdout: done.standardOutput, stderr: done.standardError)
    }
}

@Suite struct VerifyRegistrationCommandTests {
    func arguments(_ fixture: CeremonyFixture, _ extra: [String] = []) -> [String] {
        ["webauthn", "verify-registration", "--rp-id", fixture.rpID, "--origin", "https://other.example",
         "--origin", fixture.origin, "--challenge", Base64URL.encode(fixture.challenge)] + extra
    }

    @Test("prints the verified credential as JSON and exits 0")
    func success() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent, .userVerified, .backupEligible]
        let outcome = try SesameProcess.run(arguments(fixture, ["--require-user-verification"]),
                                            stdin: CeremonyFixture.json(fixture.registration()))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let json = outcome.json
        #expect(json["verified"] as? Bool == true)
        #expect(json["credentialId"] as? String == Base64URL.encode(fixture.credentialID))
        #expect(json["publicKey"] as? String == Base64URL.encode(fixture.coseKey))
        #expect(json["algorithm"] as? Int == -7)
        #expect(json["format"] as? String == "none")
        #expect(json["attestationType"] as? String == "none")
        #expect(json["aaguid"] as? String == "00000000-0000-0000-0000-000000000000")
        #expect(json["signCount"] as? Int == 0)
        #expect(json["userVerified"] as? Bool == true)
        #expect(json["backupEligible"] as? Bool == true)
        #expect(json["backedUp"] as? Bool == false)
        #expect(json["transports"] as? [String] == ["internal"])
    }

    @Test("judges packed attestation against --trust-anchor at --now")
    func trustAnchor() throws {
        var fixture = CeremonyFixture()
        fixture.aaguid = AttestationFixtures.packedAAGUID
        fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                          certificates: [try AttestationFixtures.certificate("attestation-packed")])
        let input = CeremonyFixture.json(fixture.registration())
        let root = AttestationFixtures.directory.appendingPathComponent("attestation-root.pem").path
        let other = AttestationFixtures.directory.appendingPathComponent("other-root.pem").path
        let trusted = try SesameProcess.run(arguments(fixture, ["--trust-anchor", root, "--now", "2030-01-01T00:00:00Z"]), stdin: input)
        #expect(trusted.status == 0)
        #expect(trusted.json["attestationType"] as? String == "basic")
        #expect(trusted.json["aaguid"] as? String == "5e5a4e30-0000-4000-8000-000000000001")
        let untrusted = try SesameProcess.run(arguments(fixture, ["--trust-anchor", other]), stdin: input)
        #expect(untrusted.status == 1)
        #expect(untrusted.json["error"] as? String == "untrusted_attestation")
        let early = try SesameProcess.run(arguments(fixture, ["--trust-anchor", root, "--now", "2020-01-01T00:00:00Z"]), stdin: input)
        #expect(early.json["error"] as? String == "untrusted_attestation")
    }

    @Test("reports a failed step with its stable code, a message, and exit 1")
    func failure() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent]
        let outcome = try SesameProcess.run(arguments(fixture, ["--require-user-verification"]),
                                            stdin: CeremonyFixture.json(fixture.registration()))
        #expect(outcome.status == 1)
        #expect(outcome.json["verified"] as? Bool == false)
        #expect(outcome.json["error"] as? String == "user_verification_required")
        #expect((outcome.json["message"] as? String)?.contains("§7.1 step 15") == true)
    }

    @Test("accepts standard base64 clientDataJSON as iOS sends it")
    func standardBase64() throws {
        let fixture = CeremonyFixture()
        let registration = fixture.registration()
        let standard = Data(registration.clientDataJSON).base64EncodedString()
        var json = String(decoding: CeremonyFixture.json(registration), as: UTF8.self)
        json = json.replacingOccurrences(of: Base64URL.encode(registration.clientDataJSON), with: standard)
        let outcome = try SesameProcess.run(arguments(fixture), stdin: Array(json.utf8))
        #expect(outcome.status == 0, "\(outcome.stdout)")
    }

    @Test("--no-require-user-presence accepts a conditional create without UP")
    func conditionalCreate() throws {
        var fixture = CeremonyFixture()
        fixture.flags = [.userVerified]
        let input = CeremonyFixture.json(fixture.registration())
        #expect(try SesameProcess.run(arguments(fixture), stdin: input).json["error"] as? String == "user_presence_required")
        #expect(try SesameProcess.run(arguments(fixture, ["--no-require-user-presence"]), stdin: input).status == 0)
    }

    @Test("exits 2 with a message on stderr for unusable input", arguments: [
        (["webauthn", "verify-registration", "--origin", "https://example.org", "--challenge", "AA"], "{}", "missing --rp-id"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--challenge", "AA"], "{}", "missing --origin"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "https://example.org"], "{}", "missing --challenge"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "o", "--challenge", "A"], "{}", "--challenge is not base64url"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA"], "not json", "not JSON"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA", "--bogus", "x"], "{}", "unknown flag --bogus"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA", "--now", "yesterday"], "{}", "--now"),
        (["webauthn", "verify-registration", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA", "--trust-anchor", "/nonexistent"], "{}", "cannot read"),
        (["webauthn", "verify-authentication", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA", "--public-key", "AA"], "{}", "missing --sign-count"),
        (["webauthn", "verify-authentication", "--rp-id", "example.org", "--origin", "o", "--challenge", "AA", "--public-key", "AA", "--sign-count", "-1"], "{}", "--sign-count"),
        (["webauthn", "frobnicate"], "", "unknown subcommand"),
        (["frobnicate"], "", "unknown command"),
    ])
    func usageErrors(arguments: [String], stdin: String, message: String) throws {
        let outcome = try SesameProcess.run(arguments, stdin: Array(stdin.utf8))
        #expect(outcome.status == 2)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
    }

    @Test("reports well-formed JSON of the wrong shape as malformed_response, exit 1")
    func wrongShape() throws {
        let outcome = try SesameProcess.run(arguments(CeremonyFixture()), stdin: Array(#"{"id":1}"#.utf8))
        #expect(outcome.status == 1)
        #expect(outcome.json["error"] as? String == "malformed_response")
    }
}

@Suite struct VerifyAuthenticationCommandTests {
    func arguments(_ fixture: CeremonyFixture, signCount: UInt32, _ extra: [String] = []) -> [String] {
        ["webauthn", "verify-authentication", "--rp-id", fixture.rpID, "--origin", fixture.origin,
         "--challenge", Base64URL.encode(fixture.challenge), "--public-key", Base64URL.encode(fixture.coseKey),
         "--sign-count", String(signCount)] + extra
    }

    @Test("prints the new sign count and flags and exits 0", arguments: [PrivateKey.Kind.p256, .ed25519])
    func success(kind: PrivateKey.Kind) throws {
        var fixture = CeremonyFixture(keyKind: kind)
        fixture.signCount = 10
        fixture.flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
        let outcome = try SesameProcess.run(arguments(fixture, signCount: 9, ["--require-user-verification", "--backup-eligible", "true"]),
                                            stdin: CeremonyFixture.json(fixture.authentication()))
        #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
        let json = outcome.json
        #expect(json["verified"] as? Bool == true)
        #expect(json["credentialId"] as? String == Base64URL.encode(fixture.credentialID))
        #expect(json["newSignCount"] as? Int == 10)
        #expect(json["userVerified"] as? Bool == true)
        #expect(json["backupEligible"] as? Bool == true)
        #expect(json["backedUp"] as? Bool == true)
    }

    @Test("reports counter regression, a bad stored key, and changed backup eligibility as failures")
    func failures() throws {
        var fixture = CeremonyFixture()
        fixture.signCount = 3
        let input = CeremonyFixture.json(fixture.authentication())
        let regression = try SesameProcess.run(arguments(fixture, signCount: 3), stdin: input)
        #expect(regression.status == 1)
        #expect(regression.json["error"] as? String == "sign_count_regression")
        var badKey = arguments(fixture, signCount: 0)
        badKey[badKey.firstIndex(of: "--public-key")! + 1] = Base64URL.encode([0xA0])
        #expect(try SesameProcess.run(badKey, stdin: input).json["error"] as? String == "invalid_cose_key")
        let changed = try SesameProcess.run(arguments(fixture, signCount: 0, ["--backup-eligible", "true"]), stdin: input)
        #expect(changed.json["error"] as? String == "backup_eligibility_changed")
    }

    /// The response's userHandle as the command reports it; nil when the output has none.
    func reportedHandle(_ outcome: SesameProcess.Outcome) -> String? { outcome.json["userHandle"] as? String }

    @Test("by default the credential record identifies the user: userHandle is optional and only reported")
    func identifiedByRecord() throws {
        var fixture = CeremonyFixture()
        fixture.userHandle = nil
        let anonymous = try SesameProcess.run(arguments(fixture, signCount: 0), stdin: CeremonyFixture.json(fixture.authentication()))
        #expect(anonymous.status == 0, "\(anonymous.stdout) \(anonymous.stderr)")
        #expect(anonymous.json["verified"] as? Bool == true)
        #expect(anonymous.json.keys.contains("userHandle") == false)
        fixture.userHandle = Array("user-1".utf8)
        let named = try SesameProcess.run(arguments(fixture, signCount: 0), stdin: CeremonyFixture.json(fixture.authentication()))
        #expect(named.status == 0, "\(named.stdout) \(named.stderr)")
        #expect(reportedHandle(named) == Base64URL.encode(Array("user-1".utf8)))
        // Still a real verification: the same response under another challenge fails.
        var other = arguments(fixture, signCount: 0)
        other[other.firstIndex(of: "--challenge")! + 1] = Base64URL.encode(Array(repeating: 7, count: 32))
        let wrongChallenge = try SesameProcess.run(other, stdin: CeremonyFixture.json(fixture.authentication()))
        #expect(wrongChallenge.status == 1)
        #expect(wrongChallenge.json["error"] as? String == "challenge_mismatch")
    }

    @Test("--user-handle: a returned userHandle must be that account's; none is fine")
    func identifiedByHandle() throws {
        let fixture = CeremonyFixture()
        let input = CeremonyFixture.json(fixture.authentication())
        let owner = Base64URL.encode(fixture.userHandle!)
        let match = try SesameProcess.run(arguments(fixture, signCount: 0, ["--user-handle", owner]), stdin: input)
        #expect(match.status == 0, "\(match.stdout) \(match.stderr)")
        #expect(reportedHandle(match) == owner)
        let mismatch = try SesameProcess.run(arguments(fixture, signCount: 0, ["--user-handle", Base64URL.encode([1])]), stdin: input)
        #expect(mismatch.status == 1)
        #expect(mismatch.json["verified"] as? Bool == false)
        #expect(mismatch.json["error"] as? String == "user_handle_mismatch")
        #expect((mismatch.json["message"] as? String)?.contains("§7.2 step 6") == true)
        var anonymous = fixture
        anonymous.userHandle = nil
        let none = try SesameProcess.run(arguments(fixture, signCount: 0, ["--user-handle", Base64URL.encode([1])]),
                                         stdin: CeremonyFixture.json(anonymous.authentication()))
        #expect(none.status == 0, "\(none.stdout) \(none.stderr)")
        #expect(reportedHandle(none) == nil)
    }

    @Test("--usernameless: the response must carry userHandle, and with --user-handle it must be that one")
    func usernameless() throws {
        let fixture = CeremonyFixture()
        let input = CeremonyFixture.json(fixture.authentication())
        let owner = Base64URL.encode(fixture.userHandle!)
        let present = try SesameProcess.run(arguments(fixture, signCount: 0, ["--usernameless"]), stdin: input)
        #expect(present.status == 0, "\(present.stdout) \(present.stderr)")
        #expect(reportedHandle(present) == owner)
        var anonymous = fixture
        anonymous.userHandle = nil
        let anonymousInput = CeremonyFixture.json(anonymous.authentication())
        let missing = try SesameProcess.run(arguments(fixture, signCount: 0, ["--usernameless"]), stdin: anonymousInput)
        #expect(missing.status == 1)
        #expect(missing.json["error"] as? String == "user_handle_missing")
        #expect((missing.json["message"] as? String)?.contains("§7.2 step 6") == true)
        let owned = try SesameProcess.run(arguments(fixture, signCount: 0, ["--usernameless", "--user-handle", owner]), stdin: input)
        #expect(owned.status == 0, "\(owned.stdout) \(owned.stderr)")
        #expect(reportedHandle(owned) == owner)
        let other = try SesameProcess.run(arguments(fixture, signCount: 0, ["--user-handle", Base64URL.encode([1]), "--usernameless"]),
                                          stdin: input)
        #expect(other.status == 1)
        #expect(other.json["error"] as? String == "user_handle_mismatch")
        let ownedMissing = try SesameProcess.run(arguments(fixture, signCount: 0, ["--usernameless", "--user-handle", owner]),
                                                 stdin: anonymousInput)
        #expect(ownedMissing.json["error"] as? String == "user_handle_missing")
    }

    @Test("exits 2 for a bad --user-handle or --usernameless", arguments: [
        (["--user-handle", "A"], "--user-handle is not base64url"),
        (["--user-handle", "AA", "--user-handle", "AQ"], "--user-handle given more than once"),
        (["--usernameless", "true"], "unexpected argument 'true'"),
    ])
    func userHandleUsageErrors(extra: [String], message: String) throws {
        let fixture = CeremonyFixture()
        let outcome = try SesameProcess.run(arguments(fixture, signCount: 0, extra), stdin: CeremonyFixture.json(fixture.authentication()))
        #expect(outcome.status == 2)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
    }

    @Test("--usernameless belongs to verify-authentication only")
    func usernamelessOnRegistration() throws {
        let fixture = CeremonyFixture()
        let outcome = try SesameProcess.run(
            ["webauthn", "verify-registration", "--rp-id", fixture.rpID, "--origin", fixture.origin,
             "--challenge", Base64URL.encode(fixture.challenge), "--usernameless"], stdin: CeremonyFixture.json(fixture.registration()))
        #expect(outcome.status == 2)
        // verify-registration does not know the switch, so it reads it as a flag that lacks its value.
        #expect(outcome.stderr.contains("--usernameless needs a value"), "\(outcome.stderr)")
    }

    @Test("the usage text documents the three ways of identifying the user")
    func usage() throws {
        let outcome = try SesameProcess.run(["webauthn", "--help"])
        #expect(outcome.status == 0)
        for needle in ["--usernameless", "--user-handle", "(default)", "user_handle_missing", "user_handle_mismatch", "\"userHandle\""] {
            #expect(outcome.stdout.contains(needle), "\(needle)")
        }
    }
}

/// The W3C WebAuthn L3 authentication vectors (Tests/WebAuthnTests/Vectors), whose assertions carry no userHandle,
/// through the real command as a relying party holding each credential record would run it.
@Suite struct VerifyAuthenticationVectorTests {
    struct Vector: Decodable, CustomTestStringConvertible, Sendable {
        struct Expected: Decodable, Sendable {
            let alg: Int
            let signCount: Int
            let userVerified: Bool
            let backupEligible: Bool
            let backedUp: Bool
            let crossOrigin: Bool?
        }

        var file = ""
        let rpId: String
        let origin: String
        let topOrigin: String?
        let challenge: String
        let credentialId: String
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String
        let credentialPublicKey: String
        let expected: Expected

        var testDescription: String { file }

        private enum CodingKeys: String, CodingKey {
            case rpId, origin, topOrigin, challenge, credentialId, clientDataJSON, authenticatorData, signature
            case credentialPublicKey, expected
        }

        /// Ed448 (-53) is not verified by Sesame at all.
        var isUnsupportedAlgorithm: Bool { expected.alg == -53 }

        func arguments(_ extra: [String] = []) -> [String] {
            var arguments = ["webauthn", "verify-authentication", "--rp-id", rpId, "--origin", origin, "--challenge", challenge,
                             "--public-key", credentialPublicKey, "--sign-count", "0",
                             "--backup-eligible", expected.backupEligible ? "true" : "false"]
            if expected.crossOrigin == true { arguments += ["--top-origin", topOrigin ?? "https://example.com"] }
            return arguments + extra
        }

        func json(signature: String? = nil) -> [UInt8] {
            Array("""
                {"id":"\(credentialId)","rawId":"\(credentialId)","type":"public-key","response":{\
                "clientDataJSON":"\(clientDataJSON)","authenticatorData":"\(authenticatorData)",\
                "signature":"\(signature ?? self.signature)"},"clientExtensionResults":{}}
                """.utf8)
        }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../WebAuthnTests/Vectors/w3c-webauthn-l3").standardizedFileURL

    static let vectors: [Vector] = ["", "later"].flatMap { subfolder -> [Vector] in
        let folder = subfolder.isEmpty ? directory : directory.appendingPathComponent(subfolder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasPrefix("authentication-") && $0.hasSuffix(".json") }.sorted().map { name in
            var vector = try! JSONDecoder().decode(Vector.self, from: Data(contentsOf: folder.appendingPathComponent(name)))
            vector.file = subfolder.isEmpty ? name : "\(subfolder)/\(name)"
            return vector
        }
    }

    @Test("all 15 authentication vectors are there, 14 in algorithms Sesame verifies")
    func present() {
        #expect(Self.vectors.count == 15)
        #expect(Self.vectors.filter { !$0.isUnsupportedAlgorithm }.count == 14)
    }

    @Test("verify without userHandle in the default mode, with the spec's counter and flags", arguments: vectors)
    func verifies(_ vector: Vector) throws {
        let outcome = try SesameProcess.run(vector.arguments(), stdin: vector.json())
        if vector.isUnsupportedAlgorithm {
            #expect(outcome.status == 1)
            #expect(outcome.json["error"] as? String == "unsupported_algorithm")
            return
        }
        #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
        let json = outcome.json
        #expect(json["verified"] as? Bool == true)
        #expect(json["credentialId"] as? String == vector.credentialId)
        #expect(json["newSignCount"] as? Int == vector.expected.signCount)
        #expect(json["userVerified"] as? Bool == vector.expected.userVerified)
        #expect(json["backupEligible"] as? Bool == vector.expected.backupEligible)
        #expect(json["backedUp"] as? Bool == vector.expected.backedUp)
        #expect(json.keys.contains("userHandle") == false)
    }

    @Test("are refused as user_handle_missing under --usernameless, and fail with a flipped signature bit",
          arguments: vectors.filter { !$0.isUnsupportedAlgorithm })
    func refusals(_ vector: Vector) throws {
        let usernameless = try SesameProcess.run(vector.arguments(["--usernameless"]), stdin: vector.json())
        #expect(usernameless.status == 1)
        #expect(usernameless.json["error"] as? String == "user_handle_missing")
        var signature = try Base64URL.decode(vector.signature)
        signature[signature.count / 2] ^= 0x01
        let tampered = try SesameProcess.run(vector.arguments(), stdin: vector.json(signature: Base64URL.encode(signature)))
        #expect(tampered.status == 1)
        #expect(tampered.json["error"] as? String == "invalid_signature")
    }
}
