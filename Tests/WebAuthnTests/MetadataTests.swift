import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// One test metadata service for the whole run, and the fixtures' authenticators.
private enum MDS {
    static let service = TestMetadataService()
    static let now = ISO8601DateFormatter().date(from: "2030-01-15T12:00:00Z") ?? .distantPast
    static let packedAAGUID = "5e5a4e30-0000-4000-8000-000000000001"

    static func attestationRoot() throws -> Certificate { try AttestationFixtures.certificate("attestation-root") }

    /// The U2F fixture certificate's key identifier, computed independently: SHA-1 of the uncompressed P-256 point.
    static func u2fKeyIdentifier() throws -> String {
        let key = try AttestationFixtures.certificate("attestation-u2f").publicKey()
        let point = try #require(key.ellipticCurvePoint)
        return Digest.sha1([0x04] + point.x + point.y).map { String(format: "%02x", $0) }.joined()
    }

    static func load(_ blob: String, roots: [Certificate]? = nil, at time: Date = now) throws(WebAuthnError) -> MetadataBLOB {
        try MetadataBLOB(jwsCompactSerialization: Array(blob.utf8), rootCertificates: roots ?? [service.root.certificate], at: time)
    }

    static func blob(entries: [String], nextUpdate: String = "2030-02-01") -> String {
        service.blob(payload: TestMetadataService.payload(nextUpdate: nextUpdate, entries: entries))
    }

    static func packedRegistration() throws -> VerifiedRegistration {
        var fixture = CeremonyFixture()
        fixture.aaguid = AttestationFixtures.packedAAGUID
        fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                          certificates: [try AttestationFixtures.certificate("attestation-packed")])
        // No anchors: the verifier reports the chain and metadata judges it.
        let expectations = RegistrationExpectations(policy: fixture.policy, challenge: fixture.challenge)
        return try RegistrationVerifier.verify(fixture.registration(), expectations: expectations, at: now)
    }

    static func u2fRegistration() throws -> VerifiedRegistration {
        var fixture = CeremonyFixture()
        fixture.flags = [.userPresent]
        fixture.attestation = .fidoU2F(key: try AttestationFixtures.key("attestation-u2f"),
                                       certificate: try AttestationFixtures.certificate("attestation-u2f"))
        let policy = RelyingPartyPolicy(id: fixture.rpID, origins: [fixture.origin], requiresUserVerification: false)
        return try RegistrationVerifier.verify(fixture.registration(), expectations: RegistrationExpectations(policy: policy, challenge: fixture.challenge), at: now)
    }
}

/// Expects `body` to throw a WebAuthnError with `code`.
private func expectCode(_ code: WebAuthnError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                        _ body: () throws -> Void) {
    let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, "\(error.map(String.init(reflecting:)) ?? "no error")", sourceLocation: sourceLocation)
}

@Suite("FIDO metadata BLOB: verification and parsing")
struct MetadataBLOBTests {
    @Test("accepts an ES256 and an RS256 BLOB whose chain reaches the root, and reads its payload")
    func accepts() throws {
        let entry = TestMetadataService.entry(aaguid: MDS.packedAAGUID, description: "Sesame Packed Key", roots: [try MDS.attestationRoot()])
        for algorithm in [TestMetadataService.Algorithm.es256, .rs256] {
            let text = MDS.service.blob(payload: TestMetadataService.payload(number: 42, entries: [entry]), algorithm: algorithm)
            let blob = try MDS.load(text)
            #expect(blob.number == 42)
            #expect(blob.legalHeader == "Test metadata, no rights reserved.")
            #expect(blob.nextUpdate == ISO8601DateFormatter().date(from: "2030-02-01T00:00:00Z"))
            #expect(blob.entries.count == 1)
            let found = try #require(blob.entry(aaguid: MDS.packedAAGUID.uppercased()))
            #expect(found.metadataStatement?.description == "Sesame Packed Key")
            #expect(found.metadataStatement?.protocolFamily == "fido2")
            #expect(found.trustAnchors == [try MDS.attestationRoot()])
            #expect(found.statusReports.map(\.status) == [.fidoCertifiedL1])
            #expect(try MetadataEntry(jsonEncoded: found.jsonText).aaguid == MDS.packedAAGUID)
        }
    }

    @Test("refuses a BLOB whose signature does not verify")
    func badSignature() throws {
        let text = MDS.blob(entries: [])
        var parts = text.split(separator: ".").map(String.init)
        // Another payload under the same header and signature.
        parts[1] = Base64URL.encode(Array(TestMetadataService.payload(number: 8, entries: []).utf8))
        expectCode(.metadataInvalidSignature) { _ = try MDS.load(parts.joined(separator: ".")) }
        // A signature from another key.
        let other = TestMetadataService().blob(payload: TestMetadataService.payload(entries: []))
        parts = text.split(separator: ".").map(String.init)
        parts[2] = String(other.split(separator: ".")[2])
        expectCode(.metadataInvalidSignature) { _ = try MDS.load(parts.joined(separator: ".")) }
        // RS256: one flipped bit of the signature, and an ES256 signature under an RS256 header.
        let rsa = MDS.service.blob(payload: TestMetadataService.payload(entries: []), algorithm: .rs256)
        #expect(throws: Never.self) { _ = try MDS.load(rsa) }
        var rsaParts = rsa.split(separator: ".").map(String.init)
        var signature = try Base64URL.decode(rsaParts[2])
        signature[17] ^= 0x01
        rsaParts[2] = Base64URL.encode(signature)
        expectCode(.metadataInvalidSignature) { _ = try MDS.load(rsaParts.joined(separator: ".")) }
        rsaParts[2] = parts[2]
        expectCode(.metadataInvalidSignature) { _ = try MDS.load(rsaParts.joined(separator: ".")) }
    }

    @Test("refuses an alg other than RS256 and ES256, including none")
    func badAlgorithm() throws {
        let chain = [MDS.service.signingCertificate, MDS.service.intermediate.certificate]
            .map { "\"\(Data($0.derRepresentation).base64EncodedString())\"" }.joined(separator: ",")
        for alg in ["none", "HS256", "ES384", "PS256"] {
            let text = MDS.service.blob(payload: TestMetadataService.payload(entries: []), headerJSON: #"{"alg":"\#(alg)","x5c":[\#(chain)]}"#)
            expectCode(.metadataInvalidSignature) { _ = try MDS.load(text) }
        }
    }

    @Test("refuses a chain to another root, an empty root list, and a chain judged outside its validity")
    func untrustedChain() throws {
        let text = MDS.blob(entries: [])
        expectCode(.metadataUntrustedChain) { _ = try MDS.load(text, roots: [TestCertificateAuthority.root().certificate]) }
        expectCode(.metadataUntrustedChain) { _ = try MDS.load(text, roots: []) }
        expectCode(.metadataUntrustedChain) { _ = try MDS.load(text, roots: [FIDOMetadataRoot.certificate]) }
        // The signer's certificate expired on 2029-06-01; the BLOB itself would still be current.
        let expiring = TestMetadataService(notAfter: ISO8601DateFormatter().date(from: "2029-06-01T00:00:00Z") ?? .distantPast)
        let stale = expiring.blob(payload: TestMetadataService.payload(entries: []))
        expectCode(.metadataUntrustedChain) { _ = try MDS.load(stale, roots: [expiring.root.certificate]) }
        #expect(throws: Never.self) {
            _ = try MDS.load(stale, roots: [expiring.root.certificate], at: ISO8601DateFormatter().date(from: "2029-05-01T00:00:00Z") ?? .distantPast)
        }
    }

    @Test("refuses a BLOB whose nextUpdate day has passed, and accepts it on that day")
    func expired() throws {
        let text = MDS.blob(entries: [], nextUpdate: "2030-01-15")
        #expect(throws: Never.self) { _ = try MDS.load(text) }  // 12:00 on the day itself
        expectCode(.metadataExpired) { _ = try MDS.load(text, at: MDS.now.addingTimeInterval(12 * 3600)) }
        expectCode(.metadataExpired) { _ = try MDS.load(MDS.blob(entries: [], nextUpdate: "2029-12-31")) }
    }

    @Test("refuses what is not a JWS with an x5c chain")
    func notAJWS() throws {
        let good = MDS.blob(entries: [])
        let parts = good.split(separator: ".").map(String.init)
        let cases = [
            "", "abc", parts[0] + "." + parts[1], good + ".x", parts[0] + ".!!." + parts[2],
            Base64URL.encode(Array("[1]".utf8)) + "." + parts[1] + "." + parts[2],
            MDS.service.blob(payload: "{}", headerJSON: #"{"alg":"ES256"}"#),
            MDS.service.blob(payload: "{}", headerJSON: #"{"alg":"ES256","x5u":"https://mds.example.test/chain"}"#),
            MDS.service.blob(payload: "{}", headerJSON: #"{"alg":"ES256","x5c":["AAAA"]}"#),
            MDS.service.blob(payload: "{}", headerJSON: #"{"alg":"ES256","alg":"ES256","x5c":[]}"#),
        ]
        for text in cases { expectCode(.metadataMalformed) { _ = try MDS.load(text) } }
        // crit: nothing is understood, so it fails even when the signature is good.
        let chain = [MDS.service.signingCertificate, MDS.service.intermediate.certificate]
            .map { "\"\(Data($0.derRepresentation).base64EncodedString())\"" }.joined(separator: ",")
        let crit = MDS.service.blob(payload: TestMetadataService.payload(entries: []), headerJSON: #"{"alg":"ES256","crit":["exp"],"x5c":[\#(chain)]}"#)
        expectCode(.metadataMalformed) { _ = try MDS.load(crit) }
        // Surrounding whitespace (a trailing newline from a download) is fine.
        #expect(throws: Never.self) { _ = try MDS.load("\n" + good + "\r\n") }
    }

    @Test("refuses a signed payload that is not a valid MetadataBLOBPayload", arguments: [
        "not json", "[]", #"{"no":1,"nextUpdate":"2030-02-01","entries":[]}"#,
        #"{"legalHeader":"x","no":"1","nextUpdate":"2030-02-01","entries":[]}"#,
        #"{"legalHeader":"x","no":1.5,"nextUpdate":"2030-02-01","entries":[]}"#,
        #"{"legalHeader":"x","no":-1,"nextUpdate":"2030-02-01","entries":[]}"#,
        #"{"legalHeader":"x","no":1,"nextUpdate":"2030-2-01","entries":[]}"#,
        #"{"legalHeader":"x","no":1,"nextUpdate":"2030-02-30","entries":[]}"#,
        #"{"legalHeader":"x","no":1,"nextUpdate":"2030-02-01"}"#,
        #"{"legalHeader":"x","no":1,"nextUpdate":"2030-02-01","entries":[1]}"#,
        #"{"legalHeader":"x","no":1,"no":2,"nextUpdate":"2030-02-01","entries":[]}"#,
        #"{"legalHeader":"x","no":1,"nextUpdate":"2030-02-01","entries":[{"statusReports":[],"timeOfLastStatusChange":"2025-01-01"}]}"#,
    ])
    func malformedPayload(payload: String) throws {
        expectCode(.metadataMalformed) { _ = try MDS.load(MDS.service.blob(payload: payload)) }
    }

    @Test("refuses malformed entries and statements")
    func malformedEntries() throws {
        let root = try MDS.attestationRoot()
        let good = TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: [root])
        let mutations: [(String, String)] = [
            (#""aaguid":"5e5a4e30-0000-4000-8000-000000000001","#, #""aaguid":"5e5a4e30000040008000000000000001","#),
            (#""timeOfLastStatusChange":"2025-06-01""#, #""timeOfLastStatusChange":20250601"#),
            (#""statusReports":["#, #""statusReports":[1,"#),
            (#""effectiveDate":"2025-06-01""#, #""effectiveDate":"yesterday""#),
            (#""description":"Test Authenticator""#, #""description":null"#),
            (#""attestationTypes":["basic_full"]"#, #""attestationTypes":"basic_full""#),
            (#""attestationRootCertificates":["#, #""attestationRootCertificates":["AAAA","#),
            (#""status":"FIDO_CERTIFIED_L1""#, #""status":7"#),
        ]
        for (from, to) in mutations {
            let broken = good.replacingOccurrences(of: from, with: to)
            #expect(broken != good, "mutation \(from) did not apply")
            expectCode(.metadataMalformed) { _ = try MDS.load(MDS.blob(entries: [broken])) }
        }
        let badKeyID = TestMetadataService.entry(keyIdentifiers: ["not-hex"], roots: [root])
        expectCode(.metadataMalformed) { _ = try MDS.load(MDS.blob(entries: [badKeyID])) }
        // Two entries for one AAGUID, or for one key identifier, are ambiguous.
        expectCode(.metadataMalformed) { _ = try MDS.load(MDS.blob(entries: [good, good])) }
        let keyID = String(repeating: "5a", count: 20)
        expectCode(.metadataMalformed) {
            _ = try MDS.load(MDS.blob(entries: [TestMetadataService.entry(keyIdentifiers: [keyID], roots: [root]),
                                                TestMetadataService.entry(keyIdentifiers: [keyID.uppercased()], roots: [root])]))
        }
        // Required members of an entry.
        for member in [#""statusReports":[{"status":"FIDO_CERTIFIED_L1","effectiveDate":"2025-06-01"}],"#,
                       #","timeOfLastStatusChange":"2025-06-01""#] {
            let broken = good.replacingOccurrences(of: member, with: "")
            #expect(broken != good, "removal of \(member) did not apply")
            expectCode(.metadataMalformed) { _ = try MDS.load(MDS.blob(entries: [broken])) }
        }
    }

    @Test("refuses a status MDS3 does not define, and reads every one it does")
    func statuses() throws {
        let root = try MDS.attestationRoot()
        for unknown in ["HACKED", "revoked", "FIDO_CERTIFIED_L4", ""] {
            let entry = TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: [root], statuses: [(unknown, nil)])
            expectCode(.metadataUnknownStatus) { _ = try MDS.load(MDS.blob(entries: [entry])) }
        }
        let all = AuthenticatorStatus.all.map { ($0.rawValue, Optional("2025-01-01")) }
        let entry = TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: [root], statuses: all)
        let blob = try MDS.load(MDS.blob(entries: [entry]))
        #expect(blob.entries.first?.statusReports.map(\.status) == AuthenticatorStatus.all)
        #expect(AuthenticatorStatus.all.count == 15)
    }

    @Test("looks entries up by AAGUID and by attestation certificate key identifier")
    func lookups() throws {
        let root = try MDS.attestationRoot()
        let keyID = try MDS.u2fKeyIdentifier()
        let blob = try MDS.load(MDS.blob(entries: [
            TestMetadataService.entry(aaguid: MDS.packedAAGUID, description: "Packed", roots: [root]),
            TestMetadataService.entry(keyIdentifiers: [String(repeating: "ab", count: 20), keyID.uppercased()], description: "U2F", roots: [root]),
        ]))
        #expect(blob.entry(aaguid: MDS.packedAAGUID)?.metadataStatement?.description == "Packed")
        #expect(blob.entry(aaguid: "5e5a4e30-0000-4000-8000-000000000002") == nil)
        #expect(blob.entry(aaguid: "not a uuid") == nil)
        #expect(blob.entry(attestationCertificateKeyIdentifier: keyID)?.metadataStatement?.description == "U2F")
        #expect(blob.entry(attestationCertificateKeyIdentifier: String(repeating: "AB", count: 20))?.metadataStatement?.description == "U2F")
        #expect(blob.entry(attestationCertificateKeyIdentifier: String(repeating: "cd", count: 20)) == nil)
        // From registrations: the packed one by its AAGUID, the U2F one (AAGUID all zeros) by its certificate's key.
        #expect(blob.entry(for: try MDS.packedRegistration())?.metadataStatement?.description == "Packed")
        let u2f = try MDS.u2fRegistration()
        #expect(MetadataIdentifier(u2f) == .attestationCertificateKeyIdentifier(keyID))
        #expect(blob.entry(for: u2f)?.metadataStatement?.description == "U2F")
    }

    @Test("ships the FIDO Alliance MDS root: GlobalSign Root CA - R3")
    func fidoRoot() throws {
        let root = FIDOMetadataRoot.certificate
        let fingerprint = Digest.sha256(root.derRepresentation).map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(fingerprint == "CB:B5:22:D7:B7:F1:27:AD:6A:01:13:86:5B:DF:1C:D4:10:2E:7D:07:59:AF:63:5A:7C:F4:72:0D:C9:63:C5:3B")
        #expect(root.subject.commonName == "GlobalSign")
        #expect(root.notAfter == ISO8601DateFormatter().date(from: "2029-03-18T10:00:00Z"))
    }
}

@Suite("FIDO metadata: judging a registration")
struct MetadataTrustTests {
    static let refusals: [(String, WebAuthnError.Code)] = [
        ("REVOKED", .authenticatorRevoked),
        ("USER_VERIFICATION_BYPASS", .authenticatorUserVerificationBypass),
        ("ATTESTATION_KEY_COMPROMISE", .authenticatorAttestationKeyCompromise),
        ("USER_KEY_REMOTE_COMPROMISE", .authenticatorUserKeyRemoteCompromise),
        ("USER_KEY_PHYSICAL_COMPROMISE", .authenticatorUserKeyPhysicalCompromise),
    ]

    private func entry(statuses: [(String, String?)], roots: [Certificate]? = nil) throws -> MetadataEntry {
        let blob = try MDS.load(MDS.blob(entries: [
            TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: try roots ?? [MDS.attestationRoot()], statuses: statuses),
        ]))
        return try #require(blob.entries.first)
    }

    @Test("accepts a certified authenticator whose chain reaches the statement's root")
    func accepts() throws {
        let verdict = try MetadataTrust.evaluate(try MDS.packedRegistration(), entry: try entry(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")]), at: MDS.now)
        #expect(verdict.chainValidated)
        #expect(verdict.status?.status == .fidoCertifiedL2)
    }

    @Test("each refusing status refuses with its own code", arguments: 0..<5)
    func refuses(index: Int) throws {
        let (status, code) = Self.refusals[index]
        let registration = try MDS.packedRegistration()
        let entry = try entry(statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), (status, "2027-06-01")])
        expectCode(code) { _ = try MetadataTrust.evaluate(registration, entry: entry, at: MDS.now) }
        #expect(code.rawValue.hasPrefix("authenticator_"))
        // Before the report took effect, the earlier status is the one in force.
        let before = ISO8601DateFormatter().date(from: "2027-05-01T00:00:00Z") ?? .distantPast
        #expect(throws: Never.self) { _ = try MetadataTrust.evaluate(registration, entry: entry, at: before) }
    }

    @Test("only the latest status counts: certification after a revocation does not refuse, and the reverse does")
    func latest() throws {
        let registration = try MDS.packedRegistration()
        let recertified = try entry(statuses: [("FIDO_CERTIFIED_L1", "2027-01-01"), ("REVOKED", "2026-01-01")])
        #expect(recertified.latestStatusReport(at: MDS.now)?.status == .fidoCertifiedL1)
        #expect(throws: Never.self) { _ = try MetadataTrust.evaluate(registration, entry: recertified, at: MDS.now) }
        let revoked = try entry(statuses: [("REVOKED", "2027-01-01"), ("FIDO_CERTIFIED_L1", "2026-01-01")])
        expectCode(.authenticatorRevoked) { _ = try MetadataTrust.evaluate(registration, entry: revoked, at: MDS.now) }
        // Not-dated reports count as the earliest; same-day reports, the later in order.
        let undated = try entry(statuses: [("FIDO_CERTIFIED", "2026-01-01"), ("REVOKED", nil)])
        #expect(undated.latestStatusReport(at: MDS.now)?.status == .fidoCertified)
        let sameDay = try entry(statuses: [("FIDO_CERTIFIED", "2026-01-01"), ("UPDATE_AVAILABLE", "2026-01-01")])
        #expect(sameDay.latestStatusReport(at: MDS.now)?.status == .updateAvailable)
        let none = try entry(statuses: [])
        #expect(none.latestStatusReport(at: MDS.now) == nil)
    }

    @Test("refuses a chain that does not reach the statement's roots, or a statement without roots")
    func untrusted() throws {
        let registration = try MDS.packedRegistration()
        let other = try AttestationFixtures.certificate("other-root")
        expectCode(.untrustedAttestation) {
            _ = try MetadataTrust.evaluate(registration, entry: try entry(statuses: [("FIDO_CERTIFIED", nil)], roots: [other]), at: MDS.now)
        }
        expectCode(.untrustedAttestation) {
            _ = try MetadataTrust.evaluate(registration, entry: try entry(statuses: [("FIDO_CERTIFIED", nil)], roots: []), at: MDS.now)
        }
    }

    @Test("a U2F registration is judged by the entry of its attestation certificate's key identifier")
    func u2f() throws {
        let registration = try MDS.u2fRegistration()
        let blob = try MDS.load(MDS.blob(entries: [
            TestMetadataService.entry(keyIdentifiers: [try MDS.u2fKeyIdentifier()], roots: [try MDS.attestationRoot()],
                                      statuses: [("USER_KEY_PHYSICAL_COMPROMISE", "2026-01-01")]),
        ]))
        let entry = try #require(blob.entry(for: registration))
        expectCode(.authenticatorUserKeyPhysicalCompromise) { _ = try MetadataTrust.evaluate(registration, entry: entry, at: MDS.now) }
    }
}

@Suite("FIDO metadata: certification level and user verification details")
struct MetadataCertificationTests {
    private func entry(statuses: [(String, String?)], userVerification: [[String]]? = nil) throws -> MetadataEntry {
        let blob = try MDS.load(MDS.blob(entries: [
            TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: [try MDS.attestationRoot()], statuses: statuses,
                                      userVerification: userVerification),
        ]))
        return try #require(blob.entries.first)
    }

    @Test("each certification status grants its level, FIDO_CERTIFIED counts as L1, the levels are ordered")
    func levels() throws {
        let expected: [(String, CertificationLevel)] = [
            ("FIDO_CERTIFIED", .l1), ("FIDO_CERTIFIED_L1", .l1), ("FIDO_CERTIFIED_L1plus", .l1Plus), ("FIDO_CERTIFIED_L2", .l2),
            ("FIDO_CERTIFIED_L2plus", .l2Plus), ("FIDO_CERTIFIED_L3", .l3), ("FIDO_CERTIFIED_L3plus", .l3Plus),
        ]
        for (status, level) in expected {
            #expect(try entry(statuses: [(status, "2025-01-01")]).certificationLevel(at: MDS.now) == level, "\(status)")
        }
        #expect(CertificationLevel.allCases == CertificationLevel.allCases.sorted())
        #expect(CertificationLevel.l1 < .l1Plus && CertificationLevel.l2Plus < .l3)
        #expect(CertificationLevel(name: "FIDO_CERTIFIED_L2plus") == .l2Plus)
        for name in ["FIDO_CERTIFIED", "fido_certified_l1", "L1", "REVOKED", ""] {
            #expect(CertificationLevel(name: name) == nil, "\(name)")
        }
    }

    @Test("the latest certification report in force decides; NOT_FIDO_CERTIFIED ends it, other statuses keep it")
    func latestCertification() throws {
        #expect(try entry(statuses: []).certificationLevel(at: MDS.now) == nil)
        #expect(try entry(statuses: [("NOT_FIDO_CERTIFIED", "2025-01-01")]).certificationLevel(at: MDS.now) == nil)
        let upgraded = try entry(statuses: [("FIDO_CERTIFIED_L2", "2026-01-01"), ("FIDO_CERTIFIED_L1", "2025-01-01")])
        #expect(upgraded.certificationLevel(at: MDS.now) == .l2)
        let kept = try entry(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01"), ("UPDATE_AVAILABLE", "2026-01-01")])
        #expect(kept.certificationLevel(at: MDS.now) == .l2)
        let withdrawn = try entry(statuses: [("FIDO_CERTIFIED_L2", "2025-01-01"), ("NOT_FIDO_CERTIFIED", "2026-01-01")])
        #expect(withdrawn.certificationLevel(at: MDS.now) == nil)
        // A report not yet in force does not count.
        let future = try entry(statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), ("FIDO_CERTIFIED_L3", "2031-01-01")])
        #expect(future.certificationLevel(at: MDS.now) == .l1)
    }

    @Test("reads userVerificationDetails as alternatives of methods; absent is nil; a malformed one refuses the BLOB")
    func userVerificationDetails() throws {
        let details = [["fingerprint_internal"], ["passcode_external", "presence_internal"]]
        #expect(try entry(statuses: [], userVerification: details).metadataStatement?.userVerificationDetails == details)
        #expect(try entry(statuses: []).metadataStatement?.userVerificationDetails == nil)
        let good = TestMetadataService.entry(aaguid: MDS.packedAAGUID, roots: [try MDS.attestationRoot()], userVerification: details)
        for (from, to) in [(#""userVerificationDetails":[["#, #""userVerificationDetails":[7,["#),
                           (#"{"userVerificationMethod":"fingerprint_internal"}"#, #"{"userVerificationMethod":1}"#),
                           (#"{"userVerificationMethod":"fingerprint_internal"}"#, #""fingerprint_internal""#),
                           (#"{"userVerificationMethod":"fingerprint_internal"}"#, #"{"method":"fingerprint_internal"}"#)] {
            let broken = good.replacingOccurrences(of: from, with: to)
            #expect(broken != good, "mutation \(from) did not apply")
            expectCode(.metadataMalformed) { _ = try MDS.load(MDS.blob(entries: [broken])) }
        }
    }
}
