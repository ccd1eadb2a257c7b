import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Synchronization
import Testing
import WebAuthn

/// A project's attestation policy through the Appwrite face: the creation options ask for `direct` only when the
/// policy needs an attestation, a refused registration is the generic `user_passkey_invalid` for the client and its
/// policy reason code in `/metrics` and the request log.
@Suite struct AttestationPolicyRoutesTests {
    static let packedAAGUID = "5e5a4e30-0000-4000-8000-000000000001"

    /// How one test's authenticator attests.
    enum Attested: Sendable { case none, selfSigned, packed }

    /// One rule, broken: the policy, what metadata is loaded (statuses and user verification details), how the
    /// authenticator attests, and the reason the operator sees.
    struct Rule: Sendable, CustomTestStringConvertible {
        let policy: AttestationPolicy
        let statuses: [(String, String?)]?
        var userVerification: [[String]]? = nil
        let attested: Attested
        let reason: String
        var testDescription: String { reason }
    }

    static let certifiedL1: [(String, String?)] = [("FIDO_CERTIFIED_L1", "2025-01-01")]

    static let rules: [Rule] = [
        Rule(policy: AttestationPolicy(acceptsNoneAttestation: false), statuses: nil, attested: .none, reason: "attestation_none_refused"),
        Rule(policy: AttestationPolicy(acceptsSelfAttestation: false), statuses: nil, attested: .selfSigned, reason: "attestation_self_refused"),
        Rule(policy: AttestationPolicy(deniedAAGUIDs: [packedAAGUID]), statuses: certifiedL1, attested: .packed, reason: "aaguid_denied"),
        Rule(policy: AttestationPolicy(allowedAAGUIDs: ["0bb1e7a5-0000-4000-8000-0000000000aa"]), statuses: certifiedL1, attested: .packed,
             reason: "aaguid_not_allowed"),
        Rule(policy: AttestationPolicy(allowedAAGUIDs: [packedAAGUID]), statuses: nil, attested: .packed, reason: "authenticator_not_in_metadata"),
        Rule(policy: AttestationPolicy(allowedAAGUIDs: [packedAAGUID]), statuses: certifiedL1, attested: .none, reason: "authenticator_not_attested"),
        Rule(policy: AttestationPolicy(minimumCertificationLevel: .l2), statuses: certifiedL1, attested: .packed,
             reason: "certification_level_too_low"),
        Rule(policy: AttestationPolicy(userVerificationMethods: ["fingerprint_internal"]), statuses: certifiedL1,
             userVerification: [["passcode_internal"]], attested: .packed, reason: "user_verification_method_not_allowed"),
    ]

    static let cases: [(Backend, Int)] = Backend.allCases.flatMap { backend in rules.indices.map { (backend, $0) } }

    /// A harness whose project has `policy`, with a metadata BLOB for the packed fixture loaded when `statuses` is set.
    static func harness(_ backend: Backend, policy: AttestationPolicy, statuses: [(String, String?)]?, userVerification: [[String]]? = nil,
                        log: RequestLog? = nil) throws -> Harness {
        let harness = try Harness(backend, log: log)
        if let statuses {
            let service = TestMetadataService()
            let entry = TestMetadataService.entry(aaguid: packedAAGUID, roots: [try AttestationFixtures.certificate("attestation-root")],
                                                  statuses: statuses, userVerification: userVerification)
            try harness.sesame.metadata.load(Array(service.blob(payload: TestMetadataService.payload(entries: [entry])).utf8),
                                             rootCertificates: [service.root.certificate])
        }
        _ = try harness.sesame.projects.setAttestationPolicy(projectID: harness.projectID, policy)
        return harness
    }

    /// Starts a registration for the session `secret` and answers it with the fixture authenticator, attested as asked.
    static func register(_ harness: Harness, _ secret: String, _ attested: Attested) throws -> (start: Reply, finish: Reply) {
        let start = harness.startRegistration(secret)
        #expect(start.status == 201, "\(start.text)")
        let publicKey = try #require(start.object["publicKey"] as? [String: Any])
        var fixture = CeremonyFixture()
        fixture.rpID = "shop.example"
        fixture.origin = shopOrigin
        fixture.challenge = try Base64URL.decode(try #require(publicKey["challenge"] as? String))
        fixture.credentialID = (0..<16).map { _ in UInt8.random(in: 0...255) }
        fixture.aaguid = AttestationFixtures.packedAAGUID
        switch attested {
        case .none: fixture.attestation = .none
        case .selfSigned: fixture.attestation = .packedSelf
        case .packed:
            fixture.attestation = .packedFull(key: try AttestationFixtures.key("attestation-packed"),
                                              certificates: [try AttestationFixtures.certificate("attestation-packed")])
        }
        let credential = String(decoding: CeremonyFixture.json(fixture.registration()), as: UTF8.self)
        let id = try #require(start.object["passkeyId"] as? String)
        let finish = harness.send(.PUT, "/v1/account/passkeys/\(id)/verification", json: #"{"credential":\#(credential)}"#,
                                  headers: [("X-Appwrite-Session", secret)])
        return (start, finish)
    }

    @Test("each rule refuses: user_passkey_invalid for the client, its reason in /metrics and the request log", arguments: cases)
    func refused(backend: Backend, index: Int) throws {
        let rule = Self.rules[index]
        let collector = CeremonyReasonTests.Collector()
        let log = RequestLog { batch in collector.bytes.withLock { $0 += batch } }
        let harness = try Self.harness(backend, policy: rule.policy, statuses: rule.statuses, userVerification: rule.userVerification, log: log)
        let secret = try harness.signUpAndIn()
        let (start, finish) = try Self.register(harness, secret, rule.attested)
        let expected = rule.policy.attestationConveyance
        #expect((start.object["publicKey"] as? [String: Any])?["attestation"] as? String == expected)
        finish.expectError(401, "user_passkey_invalid")
        #expect(!finish.text.contains(rule.reason) && !finish.text.contains("attestation policy"), "no reason reaches the client: \(finish.text)")
        let metrics = harness.send(.GET, "/metrics").text
        #expect(CeremonyReasonTests.count(metrics, CeremonyReasonTests.series("failure", rule.reason, ceremony: "registration")) == 1, "\(metrics)")
        log.flush()
        let line = try #require(collector.lines.first { $0.contains(#""method":"PUT""#) && $0.contains("/verification") }, "\(collector.lines)")
        #expect(line.contains(#""reason":"\#(rule.reason)""#) && line.contains(#""status":401"#), "\(line)")
        // Nothing was stored: the user has no passkey.
        #expect(try harness.sesame.passkeys.list(userID: "alice").isEmpty)
    }

    @Test("a strict policy accepts a certified, attested, allowed authenticator with a listed method; the default keeps none",
          arguments: Backend.allCases)
    func accepted(backend: Backend) throws {
        let strict = AttestationPolicy(acceptsNoneAttestation: false, acceptsSelfAttestation: false, allowedAAGUIDs: [Self.packedAAGUID],
                                       deniedAAGUIDs: ["0bb1e7a5-0000-4000-8000-0000000000aa"], minimumCertificationLevel: .l1Plus,
                                       userVerificationMethods: ["fingerprint_internal", "passcode_internal"])
        let harness = try Self.harness(backend, policy: strict, statuses: [("FIDO_CERTIFIED_L1", "2024-01-01"), ("FIDO_CERTIFIED_L2", "2025-01-01")],
                                       userVerification: [["presence_internal"], ["fingerprint_internal", "presence_internal"]])
        let secret = try harness.signUpAndIn()
        let (start, finish) = try Self.register(harness, secret, .packed)
        #expect((start.object["publicKey"] as? [String: Any])?["attestation"] as? String == "direct")
        #expect(finish.status == 200, "\(finish.text)")
        #expect(try harness.sesame.passkeys.list(userID: "alice").count == 1)
        let metrics = harness.send(.GET, "/metrics").text
        #expect(CeremonyReasonTests.count(metrics, CeremonyReasonTests.series("success", "", ceremony: "registration")) == 1, "\(metrics)")

        // Back to the default: options ask for none again, and a synced passkey without attestation registers.
        _ = try harness.sesame.projects.setAttestationPolicy(projectID: harness.projectID, .default)
        let plain = harness.startRegistration(secret)
        #expect((plain.object["publicKey"] as? [String: Any])?["attestation"] as? String == "none", "\(plain.text)")
        try harness.finishRegistration(secret, plain, SoftwareAuthenticator()).expectStatus(200)
    }

    @Test("the creation options ask for direct exactly when the policy needs an attestation, and the change shows at once")
    func conveyance() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let cases: [(AttestationPolicy, String)] = [
            (.default, "none"), (AttestationPolicy(acceptsSelfAttestation: false), "none"), (AttestationPolicy(deniedAAGUIDs: [Self.packedAAGUID]), "none"),
            (AttestationPolicy(acceptsNoneAttestation: false), "direct"), (AttestationPolicy(allowedAAGUIDs: [Self.packedAAGUID]), "direct"),
            (AttestationPolicy(minimumCertificationLevel: .l3), "direct"), (AttestationPolicy(userVerificationMethods: ["faceprint_internal"]), "direct"),
        ]
        for (policy, expected) in cases {
            _ = try harness.sesame.projects.setAttestationPolicy(projectID: harness.projectID, policy)
            let start = harness.startRegistration(secret)
            #expect(start.status == 201, "\(start.text)")
            #expect((start.object["publicKey"] as? [String: Any])?["attestation"] as? String == expected, "\(policy.jsonText): \(start.text)")
        }
    }
}

/// `GET` and `PUT /api/v1/project/attestation-policy`: the management API reads and replaces the policy with a
/// project API key (`project.read`, `project.write`), strictly, and the next registration is judged by it.
@Suite struct AttestationPolicyManagementTests {
    static let defaultJSON = AttestationPolicy.default.jsonText

    func call(_ harness: Harness, _ method: HTTPMethod, body: String? = nil, key: String? = nil) -> Reply {
        harness.send(method, "/api/v1/project/attestation-policy", json: body, headers: [("Authorization", "Bearer \(key ?? harness.key)")])
    }

    @Test("reads the default, replaces it, and the next registration asks for direct", arguments: Backend.allCases)
    func replace(backend: Backend) throws {
        let harness = try Harness(backend)
        let initial = call(harness, .GET)
        #expect(initial.status == 200 && initial.text == Self.defaultJSON, "\(initial.text)")
        #expect(initial.contentType == "application/json; charset=utf-8")
        let put = call(harness, .PUT, body: #"{"acceptNoneAttestation":false,"deniedAAGUIDs":["EE882879-721C-4913-9775-3DFCCE97072A"]}"#)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.object["acceptNoneAttestation"] as? Bool == false)
        #expect(put.object["deniedAAGUIDs"] as? [String] == ["ee882879-721c-4913-9775-3dfcce97072a"])
        #expect(call(harness, .GET).text == put.text)
        #expect(try harness.sesame.projects.get(harness.projectID).attestationPolicy.deniedAAGUIDs == ["ee882879-721c-4913-9775-3dfcce97072a"])
        let secret = try harness.signUpAndIn()
        let start = harness.startRegistration(secret)
        #expect((start.object["publicKey"] as? [String: Any])?["attestation"] as? String == "direct", "\(start.text)")
        // A PUT of the whole policy: absent members are the defaults again.
        #expect(call(harness, .PUT, body: "{}").text == Self.defaultJSON)
    }

    @Test("refuses malformed policies with 400 in the management error shape, and stores nothing", arguments: [
        ("", "invalid_json"), ("not json", "invalid_argument"), ("[]", "invalid_argument"), (#"{"acceptNone":false}"#, "invalid_argument"),
        (#"{"allowedAAGUIDs":["yubikey"]}"#, "invalid_argument"), (#"{"minimumCertificationLevel":"L2"}"#, "invalid_argument"),
        (#"{"userVerificationMethods":["none"]}"#, "invalid_argument"), (#"{"acceptNoneAttestation":0}"#, "invalid_argument"),
        (#"{"acceptNoneAttestation":false,"acceptNoneAttestation":true}"#, "invalid_argument"),
    ])
    func malformed(body: String, code: String) throws {
        let harness = try Harness()
        let refused = harness.send(.PUT, "/api/v1/project/attestation-policy", json: body.isEmpty ? "" : body,
                                   headers: [("Authorization", "Bearer \(harness.key)")])
        #expect(refused.status == 400, "\(refused.text)")
        let error = try #require(refused.object["error"] as? [String: Any], "\(refused.text)")
        #expect(error["code"] as? String == code && !(error["message"] as? String ?? "").isEmpty, "\(refused.text)")
        #expect(call(harness, .GET).text == Self.defaultJSON)
    }

    @Test("a stored policy that no longer reads is a 500 on GET, not the default; a PUT repairs it")
    func unreadable() throws {
        let harness = try Harness()
        try harness.sesame.store.projects.setAttestationPolicy(projectID: harness.projectID, json: "{", at: Date())
        let broken = call(harness, .GET)
        #expect(broken.status == 500 && !broken.text.contains("acceptNoneAttestation"), "\(broken.text)")
        #expect(call(harness, .PUT, body: #"{"acceptSelfAttestation":false}"#).status == 200)
        #expect(call(harness, .GET).object["acceptSelfAttestation"] as? Bool == false)
    }

    @Test("needs a key: none is 401, a read-only key reads but cannot replace (403)")
    func scopes() throws {
        let harness = try Harness()
        let reader = try harness.sesame.apiKeys.create(projectID: harness.projectID, name: "reader", scopes: [.projectRead]).secret
        #expect(call(harness, .GET, key: reader).status == 200)
        #expect(call(harness, .PUT, body: #"{"acceptNoneAttestation":false}"#, key: reader).status == 403)
        #expect(harness.send(.GET, "/api/v1/project/attestation-policy").status == 401)
        #expect(try harness.sesame.projects.get(harness.projectID).attestationPolicy == .default)
    }
}

extension Reply {
    /// Checks the status, showing the body when it differs.
    func expectStatus(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(text)", sourceLocation: sourceLocation)
    }
}
