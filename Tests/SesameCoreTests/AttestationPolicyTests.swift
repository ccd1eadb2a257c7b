import Foundation
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn
@testable import SesameCore

/// A project's attestation policy, enforced by the ceremony engine at registration on each backend: one negative
/// test per rule with its reason code, the positive cases, and a policy change seen by the next registration.
@Suite struct AttestationPolicyEngineTests {
    static let packedAAGUID = "5e5a4e30-0000-4000-8000-000000000001"
    static let otherAAGUID = "0bb1e7a5-0000-4000-8000-0000000000aa"

    /// How the fixture authenticator attests.
    enum Attested { case none, selfSigned, packed }

    /// A world whose project has `policy`, with metadata for the packed AAGUID loaded when `statuses` is given.
    struct PolicyWorld {
        var world: CeremonyEngineTests.World

        /// - Parameter roots: the fixture certificates the entry names as its attestation roots.
        init(_ backend: Backend, policy: AttestationPolicy = .default, statuses: [(String, String?)]? = nil,
             userVerification: [[String]]? = nil, roots: [String] = ["attestation-root"]) throws {
            world = try CeremonyEngineTests.World(backend)
            if let statuses {
                let service = TestMetadataService()
                let entry = TestMetadataService.entry(aaguid: AttestationPolicyEngineTests.packedAAGUID, description: "Sesame Packed Key",
                                                      roots: try roots.map(AttestationFixtures.certificate), statuses: statuses,
                                                      userVerification: userVerification)
                try world.sesame.metadata.load(Array(service.blob(payload: TestMetadataService.payload(entries: [entry])).utf8),
                                               rootCertificates: [service.root.certificate])
            }
            _ = try world.sesame.projects.setAttestationPolicy(projectID: world.project.id, policy)
        }

        /// Registers the fixture authenticator for alice, attested as `attested`, claiming the packed AAGUID unless
        /// `aaguid` says otherwise; the project is read as a face reads it (through the configuration cache).
        mutating func register(_ attested: Attested, aaguid: [UInt8] = AttestationFixtures.packedAAGUID) throws(SesameError) -> VerifiedRegistration {
            do {
                world.fixture.aaguid = aaguid
                switch attested {
                case .none: world.fixture.attestation = .none
                case .selfSigned: world.fixture.attestation = .packedSelf
                case .packed:
                    world.fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                                            certificates: [try AttestationFixtures.certificate("attestation-packed")])
                }
            } catch {
                preconditionFailure("fixture: \(error)")
            }
            let binding = ChallengeBinding.accountSession(userID: "alice", sessionID: "s1")
            let consumed: ChallengeRecord
            do {
                let challenge = try world.challenge(binding, userID: "alice")
                consumed = try world.engine.consume(challenge.id, binding: binding, project: world.project)
            } catch {
                preconditionFailure("challenge: \(error)")
            }
            let project = try world.sesame.projects.get(world.project.id)
            return try world.engine.finishRegistration(CeremonyFixture.json(world.fixture.registration()), challenge: consumed, project: project,
                                                       policy: world.policy)
        }
    }

    /// Expects the registration to be refused as `verification_failed` with `reason`.
    static func expectRefused(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation,
                              _ body: () throws(SesameError) -> VerifiedRegistration) {
        do {
            let verified = try body()
            Issue.record("registered \(verified.aaguid), expected \(reason)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .verificationFailed, "\(error.debugDescription)", sourceLocation: sourceLocation)
            #expect(error.reason == reason, "\(error.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    @Test("the default policy accepts none, self and packed attestation, with and without metadata", arguments: Backend.allCases)
    func defaults(backend: Backend) throws {
        var plain = try PolicyWorld(backend)
        #expect(try plain.register(.none).attestationType == .none)
        #expect(try plain.register(.selfSigned).attestationType == .self)
        #expect(try plain.register(.packed).attestationType == .basic)
        var known = try PolicyWorld(backend, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01")])
        #expect(try known.register(.packed).attestationType == .basic)
    }

    @Test("none refused: a none attestation is attestation_none_refused; self and packed pass", arguments: Backend.allCases)
    func noneRefused(backend: Backend) throws {
        var world = try PolicyWorld(backend, policy: AttestationPolicy(acceptsNoneAttestation: false))
        Self.expectRefused("attestation_none_refused") { () throws(SesameError) in try world.register(.none) }
        #expect(try world.register(.selfSigned).attestationType == .self)
        #expect(try world.register(.packed).attestationType == .basic)
    }

    @Test("self refused: a self attestation is attestation_self_refused; none and packed pass", arguments: Backend.allCases)
    func selfRefused(backend: Backend) throws {
        var world = try PolicyWorld(backend, policy: AttestationPolicy(acceptsSelfAttestation: false))
        Self.expectRefused("attestation_self_refused") { () throws(SesameError) in try world.register(.selfSigned) }
        #expect(try world.register(.none).attestationType == .none)
        #expect(try world.register(.packed).attestationType == .basic)
    }

    @Test("deny list: a denied AAGUID is aaguid_denied whatever the attestation; another AAGUID passes", arguments: Backend.allCases)
    func denyList(backend: Backend) throws {
        var world = try PolicyWorld(backend, policy: AttestationPolicy(deniedAAGUIDs: [Self.packedAAGUID.uppercased()]))
        Self.expectRefused("aaguid_denied") { () throws(SesameError) in try world.register(.packed) }
        Self.expectRefused("aaguid_denied") { () throws(SesameError) in try world.register(.none) }
        #expect(try world.register(.none, aaguid: Array(repeating: 0, count: 16)).attestationType == .none)
    }

    @Test("allow list: another AAGUID is aaguid_not_allowed; a listed one passes only when metadata proves it",
          arguments: Backend.allCases)
    func allowList(backend: Backend) throws {
        let policy = AttestationPolicy(allowedAAGUIDs: [Self.packedAAGUID])
        var world = try PolicyWorld(backend, policy: policy, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01")])
        #expect(try world.register(.packed).aaguid == Self.packedAAGUID)
        let other: [UInt8] = [0x0B, 0xB1, 0xE7, 0xA5, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0xAA]
        Self.expectRefused("aaguid_not_allowed") { () throws(SesameError) in try world.register(.none, aaguid: other) }
        // A listed AAGUID merely claimed: by a none or a self attestation, nothing proves it.
        Self.expectRefused("authenticator_not_attested") { () throws(SesameError) in try world.register(.none) }
        Self.expectRefused("authenticator_not_attested") { () throws(SesameError) in try world.register(.selfSigned) }
        // Without metadata for it, even a packed attestation's chain reaches nothing the server trusts.
        var unknown = try PolicyWorld(backend, policy: policy)
        Self.expectRefused("authenticator_not_in_metadata") { () throws(SesameError) in try unknown.register(.packed) }
    }

    @Test("minimum certification: below it is certification_level_too_low, at or above passes, no metadata is refused",
          arguments: Backend.allCases)
    func certification(backend: Backend) throws {
        let policy = AttestationPolicy(minimumCertificationLevel: .l2)
        var low = try PolicyWorld(backend, policy: policy, statuses: [("FIDO_CERTIFIED_L1plus", "2025-01-01")])
        Self.expectRefused("certification_level_too_low") { () throws(SesameError) in try low.register(.packed) }
        var uncertified = try PolicyWorld(backend, policy: policy, statuses: [("NOT_FIDO_CERTIFIED", "2025-01-01")])
        Self.expectRefused("certification_level_too_low") { () throws(SesameError) in try uncertified.register(.packed) }
        var exact = try PolicyWorld(backend, policy: policy, statuses: [("FIDO_CERTIFIED_L2", "2025-01-01")])
        #expect(try exact.register(.packed).attestationType == .basic)
        var higher = try PolicyWorld(backend, policy: policy, statuses: [("FIDO_CERTIFIED_L1", "2024-01-01"), ("FIDO_CERTIFIED_L3", "2025-01-01")])
        #expect(try higher.register(.packed).attestationType == .basic)
        var unknown = try PolicyWorld(backend, policy: policy)
        Self.expectRefused("authenticator_not_in_metadata") { () throws(SesameError) in try unknown.register(.packed) }
    }

    @Test("user verification methods: none of them offered is user_verification_method_not_allowed; an alternative with one passes",
          arguments: Backend.allCases)
    func userVerificationMethods(backend: Backend) throws {
        let policy = AttestationPolicy(userVerificationMethods: ["fingerprint_internal", "faceprint_internal"])
        let certified = [("FIDO_CERTIFIED_L1", Optional("2025-01-01"))]
        var pinOnly = try PolicyWorld(backend, policy: policy, statuses: certified,
                                      userVerification: [["passcode_external", "presence_internal"], ["presence_internal"]])
        Self.expectRefused("user_verification_method_not_allowed") { () throws(SesameError) in try pinOnly.register(.packed) }
        var silent = try PolicyWorld(backend, policy: policy, statuses: certified)
        Self.expectRefused("user_verification_method_not_allowed") { () throws(SesameError) in try silent.register(.packed) }
        var biometric = try PolicyWorld(backend, policy: policy, statuses: certified,
                                        userVerification: [["passcode_internal"], ["fingerprint_internal", "presence_internal"]])
        #expect(try biometric.register(.packed).attestationType == .basic)
        var unknown = try PolicyWorld(backend, policy: policy)
        Self.expectRefused("authenticator_not_in_metadata") { () throws(SesameError) in try unknown.register(.packed) }
    }

    @Test("metadata still judges first: a revoked authenticator on the allow list is authenticator_revoked", arguments: Backend.allCases)
    func metadataFirst(backend: Backend) throws {
        var world = try PolicyWorld(backend, policy: AttestationPolicy(allowedAAGUIDs: [Self.packedAAGUID]),
                                    statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), ("REVOKED", "2026-06-01")])
        Self.expectRefused("authenticator_revoked") { () throws(SesameError) in try world.register(.packed) }
    }

    @Test("a policy change is seen by the next registration on this node, and on another over the same database within its refresh interval",
          arguments: Backend.allCases)
    func changeSeen(backend: Backend) throws {
        var world = try PolicyWorld(backend)
        let other = Sesame(store: world.world.sesame.store, clock: world.world.sesame.clock, masterKeys: world.world.sesame.masterKeys)
        // Both nodes have the project (and its default policy) in memory.
        #expect(try other.projects.get(world.world.project.id).attestationPolicy == .default)
        #expect(try world.register(.none).attestationType == .none)
        _ = try other.projects.setAttestationPolicy(projectID: world.world.project.id, AttestationPolicy(acceptsNoneAttestation: false))
        waitOut(Sesame.defaultConfigurationRefresh)
        Self.expectRefused("attestation_none_refused") { () throws(SesameError) in try world.register(.none) }
        _ = try world.world.sesame.projects.setAttestationPolicy(projectID: world.world.project.id, .default)
        waitOut(Sesame.defaultConfigurationRefresh)
        #expect(try other.projects.get(world.world.project.id).attestationPolicy == .default)
        #expect(try world.register(.none).attestationType == .none)
        #expect(try world.world.sesame.store.projects.get(id: world.world.project.id)?.attestationPolicy == nil,
                "the default policy is stored as none")
    }

    @Test("a stored policy that no longer reads refuses registrations (attestation_policy_unreadable)", arguments: Backend.allCases)
    func unreadable(backend: Backend) throws {
        var world = try PolicyWorld(backend)
        try world.world.sesame.store.projects.setAttestationPolicy(projectID: world.world.project.id, json: #"{"acceptNoneAttestation":"maybe"}"#,
                                                                   at: Date())
        waitOut(Sesame.defaultConfigurationRefresh)  // written beside the services, as an older version would have
        do {
            _ = try world.register(.packed)
            Issue.record("registered under an unreadable policy")
        } catch {
            #expect(error.reason == "attestation_policy_unreadable", "\(error.debugDescription)")
        }
    }

    @Test("registration options ask for direct attestation exactly when the policy needs one", arguments: Backend.allCases)
    func conveyance(backend: Backend) throws {
        let world = try CeremonyEngineTests.World(backend)
        let cases: [(AttestationPolicy, String)] = [
            (.default, "none"),
            (AttestationPolicy(acceptsSelfAttestation: false), "none"),
            (AttestationPolicy(deniedAAGUIDs: [Self.packedAAGUID]), "none"),
            (AttestationPolicy(acceptsNoneAttestation: false), "direct"),
            (AttestationPolicy(allowedAAGUIDs: [Self.packedAAGUID]), "direct"),
            (AttestationPolicy(minimumCertificationLevel: .l1), "direct"),
            (AttestationPolicy(userVerificationMethods: ["passcode_internal"]), "direct"),
        ]
        let session = try world.sesame.sessions.create(projectID: world.project.id, userID: world.alice.id, provider: "server", factors: ["server"],
                                                       client: ClientInfo(ip: "127.0.0.1", userAgent: "test"))
        for (policy, expected) in cases {
            #expect(policy.attestationConveyance == expected, "\(policy.jsonText)")
            let project = try world.sesame.projects.setAttestationPolicy(projectID: world.project.id, policy)
            let start = try world.sesame.passkeys.beginRegistration(project: project, user: world.alice, session: session.session,
                                                                    passkeyID: nil, name: nil, requestOrigin: "https://example.org")
            #expect(start.attestation == expected)
            #expect(start.options.attestation == expected)
            #expect(String(decoding: start.options.jsonBytes, as: UTF8.self).contains(#""attestation":"\#(expected)""#))
        }
    }
}

/// The policy's JSON form and its checks: what `sesame project policy set --file` and the stored column read.
@Suite struct AttestationPolicyJSONTests {
    @Test("reads every member, normalizes the lists, and writes what it reads back")
    func roundTrip() throws {
        let text = #"""
            {"acceptNoneAttestation": false, "acceptSelfAttestation": false,
             "allowedAAGUIDs": ["CB69481E-8FF7-4039-93EC-0A2729A154A8", "cb69481e-8ff7-4039-93ec-0a2729a154a8", "00000000-0000-0000-0000-000000000001"],
             "deniedAAGUIDs": ["ee882879-721c-4913-9775-3dfcce97072a"], "minimumCertificationLevel": "FIDO_CERTIFIED_L1plus",
             "userVerificationMethods": ["passcode_external", "fingerprint_internal", "passcode_external"]}
            """#
        let policy = try AttestationPolicy(jsonEncoded: Array(text.utf8))
        #expect(!policy.acceptsNoneAttestation && !policy.acceptsSelfAttestation)
        #expect(policy.allowedAAGUIDs == ["00000000-0000-0000-0000-000000000001", "cb69481e-8ff7-4039-93ec-0a2729a154a8"])
        #expect(policy.deniedAAGUIDs == ["ee882879-721c-4913-9775-3dfcce97072a"])
        #expect(policy.minimumCertificationLevel == .l1Plus)
        #expect(policy.userVerificationMethods == ["fingerprint_internal", "passcode_external"])
        #expect(try AttestationPolicy(jsonEncoded: Array(policy.jsonText.utf8)) == policy)
        #expect(try AttestationPolicy(jsonEncoded: Array("{}".utf8)) == .default)
        #expect(try AttestationPolicy(jsonEncoded: Array(#"{"minimumCertificationLevel":null}"#.utf8)) == .default)
        #expect(AttestationPolicy.default.jsonText == #"{"acceptNoneAttestation":true,"acceptSelfAttestation":true,"allowedAAGUIDs":[],"#
            + #""deniedAAGUIDs":[],"minimumCertificationLevel":null,"userVerificationMethods":[]}"#)
    }

    @Test("refuses malformed policies with invalid_argument naming what is wrong", arguments: [
        ("[]", "not one JSON object"),
        (#"{"acceptNoneAttestation": false"#, "not one JSON object"),
        (#"{"acceptNoneAttestation": false, "acceptNoneAttestation": true}"#, "not one JSON object"),
        (#"{"acceptNone": false}"#, "unknown member \"acceptNone\""),
        (#"{"acceptNoneAttestation": "no"}"#, "acceptNoneAttestation must be true or false"),
        (#"{"acceptSelfAttestation": 0}"#, "acceptSelfAttestation must be true or false"),
        (#"{"allowedAAGUIDs": "cb69481e-8ff7-4039-93ec-0a2729a154a8"}"#, "allowedAAGUIDs must be an array of strings"),
        (#"{"deniedAAGUIDs": [7]}"#, "deniedAAGUIDs must be an array of strings"),
        (#"{"allowedAAGUIDs": ["yubikey"]}"#, "\"yubikey\" is not an AAGUID"),
        (#"{"allowedAAGUIDs": ["cb69481e-8ff7-4039-93ec-0a2729a154a8"], "deniedAAGUIDs": ["CB69481E-8FF7-4039-93EC-0A2729A154A8"]}"#,
         "both allowed and denied"),
        (#"{"minimumCertificationLevel": "L2"}"#, "minimumCertificationLevel must be null or one of FIDO_CERTIFIED_L1"),
        (#"{"minimumCertificationLevel": "FIDO_CERTIFIED"}"#, "minimumCertificationLevel must be null or one of"),
        (#"{"minimumCertificationLevel": 2}"#, "minimumCertificationLevel must be null or one of"),
        (#"{"userVerificationMethods": ["retina"]}"#, "\"retina\" is not one of presence_internal"),
        (#"{"userVerificationMethods": ["none"]}"#, "\"none\" is not one of"),
    ])
    func malformed(text: String, message: String) throws {
        let error = try #require(throws: SesameError.self) { try AttestationPolicy(jsonEncoded: Array(text.utf8)) }
        #expect(error.code == .invalidArgument)
        #expect(error.detail.contains(message), "\(error.detail)")
    }

    @Test("refuses lists longer than the limit")
    func limits() throws {
        let many = (0...AttestationPolicy.maximumListCount).map { String(format: "00000000-0000-4000-8000-%012x", $0) }
        let error = try #require(throws: SesameError.self) { try AttestationPolicy(deniedAAGUIDs: many).validated() }
        #expect(error.code == .invalidArgument && error.detail.contains("more than"))
        #expect(try AttestationPolicy(deniedAAGUIDs: Array(many.dropLast())).validated().deniedAAGUIDs.count == AttestationPolicy.maximumListCount)
    }

    @Test("every refusal code is distinct and snake_case")
    func codes() {
        #expect(Set(AttestationPolicy.Refusal.all).count == AttestationPolicy.Refusal.all.count)
        #expect(AttestationPolicy.Refusal.all.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "_" } })
    }
}
