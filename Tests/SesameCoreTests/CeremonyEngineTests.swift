import Foundation
@testable import SesameStore
import SesameTestSupport
import Synchronization
import Testing
import WebAuthn
@testable import SesameCore

/// The ceremony engine on each backend: every binding and identification mode, every refusal with its reason code,
/// the sign count refused when it does not move forward on every path, and one winner among concurrent finishes.
@Suite struct CeremonyEngineTests {
    /// A project on `example.org` with one person (`alice`) holding the fixture's passkey, and another (`bob`).
    struct World {
        let sesame: Sesame
        let project: Project
        let alice: User
        let bob: User
        var fixture: CeremonyFixture
        let passkeyID: String

        init(_ backend: Backend, storedSignCount: Int64 = 0) throws {
            sesame = try backend.makeSesame()
            project = try sesame.projects.create(name: "Shop", relyingPartyID: "example.org")
            _ = try sesame.projects.addPlatform(projectID: project.id, .web(hostname: "example.org"))
            alice = try sesame.users.create(projectID: project.id, id: "alice", email: nil, password: nil, name: nil)
            bob = try sesame.users.create(projectID: project.id, id: "bob", email: nil, password: nil, name: nil)
            fixture = CeremonyFixture()
            fixture.userHandle = alice.userHandle
            passkeyID = Identifiers.unique()
            try sesame.store.credentials.create(SesameStore.CredentialRecord(
                id: passkeyID, projectID: project.id, userID: alice.id, rpID: "example.org", credentialID: fixture.credentialID,
                publicKey: fixture.coseKey, algorithm: Int64(fixture.algorithm.rawValue), signCount: storedSignCount, createdAt: Date()
            ))
        }

        var engine: CeremonyEngine { sesame.ceremonies }
        var policy: RelyingPartyPolicy { RelyingPartyPolicy(id: "example.org", origins: ["https://example.org"]) }

        /// A stored challenge for `binding` whose bytes the fixture signs.
        mutating func challenge(_ binding: ChallengeBinding, rpID: String = "example.org", userID: String? = nil) throws -> ChallengeRecord {
            let record = try engine.start(binding, id: Identifiers.uuid(), project: project, rpID: rpID, userID: userID)
            fixture.challenge = record.challenge
            return record
        }

        /// Finishes an authentication of `challenge` for `binding` with the fixture's assertion.
        func finish(_ challenge: ChallengeRecord, _ binding: ChallengeBinding, _ identification: CeremonyIdentification,
                    _ userVerification: UserVerificationPolicy = .required) throws(SesameError) -> AuthenticatedPasskey {
            try engine.finishRecordingUse(CeremonyFixture.json(fixture.authentication()), challengeID: challenge.id, binding: binding,
                                          project: project, policy: policy, identification: identification, userVerification: userVerification)
        }

        func storedSignCount() throws -> Int64? { try sesame.store.credentials.get(id: passkeyID)?.signCount }
    }

    /// Every binding with the identification mode it is used with.
    static let paths: [(ChallengeBinding, CeremonyIdentification, UserVerificationPolicy)] = [
        (.signIn, .usernameless, .required),
        (.verificationRequest(requestID: "req_1"), .linkedPerson(userID: "alice"), .afterIdentity),
        (.handOff(requestID: "req_1"), .linkedPerson(userID: nil), .afterIdentity),
        (.handOff(requestID: "req_1"), .identifiedUser(userID: "alice"), .required),
        (.action(actionID: "act_1"), .usernameless, .required),
        (.action(actionID: "act_1"), .identifiedUser(userID: "alice"), .required),
    ]

    static let cases: [(Backend, Int)] = Backend.allCases.flatMap { backend in paths.indices.map { (backend, $0) } }

    @Test("each binding and identification mode verifies a genuine assertion and records its use", arguments: cases)
    func genuine(backend: Backend, path: Int) throws {
        let (binding, identification, uv) = Self.paths[path]
        var world = try World(backend)
        world.fixture.signCount = 7
        let challenge = try world.challenge(binding, userID: "alice")
        let result = try world.finish(challenge, binding, identification, uv)
        #expect(result.owner.id == "alice" && result.passkeyID == world.passkeyID && result.verified.newSignCount == 7)
        #expect(try world.storedSignCount() == 7)
        #expect(try world.sesame.store.credentials.get(id: world.passkeyID)?.lastUsedAt != nil)
        // Single use: the same challenge again is refused before anything is verified.
        #expect(throws: SesameError.code(.expired)) { try world.finish(challenge, binding, identification, uv) }
    }

    @Test("a sign count that did not move forward is refused on every path, and the stored count stays", arguments: cases)
    func signCountRegression(backend: Backend, path: Int) throws {
        let (binding, identification, uv) = Self.paths[path]
        var world = try World(backend, storedSignCount: 5)
        for presented: UInt32 in [5, 3] {
            world.fixture.signCount = presented
            let challenge = try world.challenge(binding, userID: "alice")
            let error = try #require(throws: SesameError.self) { try world.finish(challenge, binding, identification, uv) }
            #expect(error.code == .verificationFailed && error.reason == "sign_count_regression", "\(error.debugDescription)")
        }
        #expect(try world.storedSignCount() == 5)
    }

    @Test("concurrent uses of one sign count: exactly one wins, the rest are sign_count_regression", arguments: Backend.allCases)
    func signCountRace(backend: Backend) throws {
        var world = try World(backend, storedSignCount: 1)
        world.fixture.signCount = 2
        var assertions: [(ChallengeRecord, [UInt8])] = []
        for _ in 0..<20 {
            let challenge = try world.challenge(.signIn)
            assertions.append((challenge, CeremonyFixture.json(world.fixture.authentication())))
        }
        let engine = world.engine, project = world.project, policy = world.policy, prepared = assertions
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: prepared.count) { index in
            let (challenge, json) = prepared[index]
            do {
                _ = try engine.finishRecordingUse(json, challengeID: challenge.id, binding: .signIn, project: project, policy: policy,
                                                  identification: .usernameless, userVerification: .required)
                outcomes.add("success")
            } catch {
                outcomes.add((error as? SesameError)?.reason ?? "\(error)")
            }
        }
        #expect(outcomes.all.filter { $0 == "success" }.count == 1, "\(outcomes.all)")
        #expect(outcomes.all.filter { $0 == "sign_count_regression" }.count == 19, "\(outcomes.all)")
        #expect(try world.storedSignCount() == 2)
    }

    @Test("20 concurrent finishes of one challenge: exactly one wins, the others find it used", arguments: Backend.allCases)
    func oneChallengeOneWinner(backend: Backend) throws {
        var world = try World(backend)
        let challenge = try world.challenge(.verificationRequest(requestID: "req_1"), userID: "alice")
        let json = CeremonyFixture.json(world.fixture.authentication())
        let engine = world.engine, project = world.project, policy = world.policy
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                _ = try engine.finishRecordingUse(json, challengeID: challenge.id, binding: .verificationRequest(requestID: "req_1"),
                                                  project: project, policy: policy, identification: .linkedPerson(userID: "alice"),
                                                  userVerification: .afterIdentity)
                outcomes.add("success")
            } catch {
                outcomes.add((error as? SesameError)?.reason ?? "\(error)")
            }
        }
        #expect(outcomes.all.filter { $0 == "success" }.count == 1, "\(outcomes.all)")
        #expect(outcomes.all.filter { $0 == "challenge_expired" }.count == 19, "\(outcomes.all)")
    }

    /// One refusal: how to provoke it, and the code and reason it must give.
    struct Refusal: CustomTestStringConvertible, Sendable {
        let reason: String
        let code: SesameError.Code
        let binding: ChallengeBinding
        let identification: CeremonyIdentification
        let userVerification: UserVerificationPolicy
        let challengeRPID: String
        let mutate: @Sendable (inout CeremonyFixture, World) throws -> Void
        var testDescription: String { reason }

        init(_ reason: String, _ code: SesameError.Code, binding: ChallengeBinding = .signIn, identification: CeremonyIdentification = .usernameless,
             userVerification: UserVerificationPolicy = .required, challengeRPID: String = "example.org",
             mutate: @escaping @Sendable (inout CeremonyFixture, World) throws -> Void = { _, _ in }) {
            self.reason = reason
            self.code = code
            self.binding = binding
            self.identification = identification
            self.userVerification = userVerification
            self.challengeRPID = challengeRPID
            self.mutate = mutate
        }
    }

    static let refusals: [Refusal] = [
        Refusal("origin_mismatch", .verificationFailed) { fixture, _ in fixture.clientData["origin"] = .string("https://evil.example") },
        Refusal("challenge_mismatch", .verificationFailed) { fixture, _ in fixture.challenge = Array(repeating: 1, count: 32) },
        Refusal("invalid_signature", .verificationFailed) { fixture, _ in fixture.credentialKey = CeremonyFixture().credentialKey },
        Refusal("unknown_credential", .verificationFailed) { fixture, _ in fixture.credentialID = Array(100..<116) },
        Refusal("user_handle_missing", .verificationFailed) { fixture, _ in fixture.userHandle = nil },
        Refusal("user_handle_mismatch", .verificationFailed, binding: .handOff(requestID: "req_1"),
                identification: .identifiedUser(userID: "bob")),
        Refusal("user_verification_required", .verificationFailed) { fixture, _ in fixture.flags = [.userPresent] },
        Refusal("user_not_verified", .userNotVerified, binding: .verificationRequest(requestID: "req_1"),
                identification: .linkedPerson(userID: "alice"), userVerification: .afterIdentity) { fixture, _ in fixture.flags = [.userPresent] },
        Refusal("wrong_identity", .wrongIdentity, binding: .verificationRequest(requestID: "req_1"),
                identification: .linkedPerson(userID: "bob"), userVerification: .afterIdentity),
        Refusal("relying_party_changed", .expired, challengeRPID: "localhost"),
        Refusal("blocked", .blocked) { _, world in _ = try world.sesame.users.setStatus(projectID: world.project.id, id: "alice", active: false) },
        Refusal("malformed_response", .verificationFailed),
    ]

    @Test("each refusal has its code and reason, and a refused assertion before the signature check records nothing",
          arguments: Backend.allCases, refusals)
    func refusal(backend: Backend, refusal: Refusal) throws {
        var world = try World(backend)
        let challenge = try world.challenge(refusal.binding, rpID: refusal.challengeRPID, userID: "alice")
        try refusal.mutate(&world.fixture, world)
        let json = refusal.reason == "malformed_response" ? Array(#"{"id":1}"#.utf8) : CeremonyFixture.json(world.fixture.authentication())
        let error = try #require(throws: SesameError.self) {
            try world.engine.finishRecordingUse(json, challengeID: challenge.id, binding: refusal.binding, project: world.project,
                                                policy: world.policy, identification: refusal.identification,
                                                userVerification: refusal.userVerification)
        }
        #expect(error.code == refusal.code && error.reason == refusal.reason, "\(error.debugDescription)")
        if !["wrong_identity", "user_not_verified"].contains(refusal.reason) {
            #expect(try world.sesame.store.credentials.get(id: world.passkeyID)?.lastUsedAt == nil)
        }
    }

    @Test("challenges are bound: another project, purpose, request or session is refused, a used one too", arguments: Backend.allCases)
    func bindings(backend: Backend) throws {
        var world = try World(backend)
        let other = try world.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        let signIn = try world.challenge(.signIn)
        #expect(throws: SesameError.code(.expired)) { try world.engine.consume(signIn.id, binding: .signIn, project: other) }
        #expect(throws: SesameError.code(.expired)) { try world.engine.consume(signIn.id, binding: .signIn, project: world.project) }

        let inline = try world.challenge(.verificationRequest(requestID: "req_1"))
        #expect(throws: SesameError.code(.expired)) {
            try world.engine.consume(inline.id, binding: .handOff(requestID: "req_1"), project: world.project)
        }
        #expect(throws: SesameError.code(.expired)) {
            try world.engine.consume(inline.id, binding: .verificationRequest(requestID: "req_2"), project: world.project)
        }
        // Refused on another path, it is still usable on its own.
        #expect(try world.engine.consume(inline.id, binding: .verificationRequest(requestID: "req_1"), project: world.project).id == inline.id)

        let registration = try world.challenge(.accountSession(userID: "alice", sessionID: "s1"), userID: "alice")
        #expect(throws: SesameError.code(.notFound)) {
            try world.engine.consume(registration.id, binding: .accountSession(userID: "bob", sessionID: "s1"), project: world.project)
        }
        let error = try #require(throws: SesameError.self) {
            try world.engine.consume(registration.id, binding: .accountSession(userID: "alice", sessionID: "s2"), project: world.project)
        }
        #expect(error.code == .expired && error.reason == "session_mismatch")
        #expect(throws: SesameError.code(.notFound)) {
            try world.engine.consume(registration.id, binding: .accountSession(userID: "alice", sessionID: "s1"), project: world.project)
        }

        // An action's challenges: only its own action and ceremony take them back.
        let action = try world.challenge(.action(actionID: "act_1"))
        for wrong: ChallengeBinding in [.action(actionID: "act_2"), .actionRegistration(actionID: "act_1"), .handOff(requestID: "act_1")] {
            #expect(throws: SesameError.code(.expired)) { try world.engine.consume(action.id, binding: wrong, project: world.project) }
        }
        #expect(try world.engine.consume(action.id, binding: .action(actionID: "act_1"), project: world.project).id == action.id)
        #expect(throws: SesameError.code(.expired)) {
            try world.engine.consume(action.id, binding: .action(actionID: "act_1"), project: world.project)
        }
        // Another project's probe burns it.
        let probed = try world.challenge(.action(actionID: "act_1"))
        #expect(throws: SesameError.code(.expired)) { try world.engine.consume(probed.id, binding: .action(actionID: "act_1"), project: other) }
        #expect(throws: SesameError.code(.expired)) {
            try world.engine.consume(probed.id, binding: .action(actionID: "act_1"), project: world.project)
        }
        // A registration challenge of an action never finishes an authentication, and is not used up by the attempt.
        let actionRegistration = try world.challenge(.actionRegistration(actionID: "act_1"), userID: "alice")
        let assertion = CeremonyFixture.json(world.fixture.authentication())
        let refused = try #require(throws: SesameError.self) {
            try world.engine.finishAuthentication(assertion, challengeID: actionRegistration.id, binding: .actionRegistration(actionID: "act_1"),
                                                  project: world.project, policy: world.policy, identification: .usernameless,
                                                  userVerification: .required) { _, _ throws(StoreError) in () }
        }
        #expect(refused.code == .expired)
        #expect(try world.engine.consume(actionRegistration.id, binding: .actionRegistration(actionID: "act_1"), project: world.project).id
                == actionRegistration.id)

        // An ID creation (the setup page's new person) never finishes an authentication either; its own binding takes
        // it back once, with the reserved person ID.
        let creation = try world.challenge(.idCreation, userID: "carol")
        let refusedCreation = try #require(throws: SesameError.self) {
            try world.engine.finishAuthentication(assertion, challengeID: creation.id, binding: .idCreation, project: world.project,
                                                  policy: world.policy, identification: .usernameless,
                                                  userVerification: .required) { _, _ throws(StoreError) in () }
        }
        #expect(refusedCreation.code == .expired)
        #expect(try world.engine.consume(creation.id, binding: .idCreation, project: world.project).userID == "carol")
        #expect(throws: SesameError.code(.expired)) { try world.engine.consume(creation.id, binding: .idCreation, project: world.project) }
    }

    @Test("start stores a 5-minute challenge bound as asked, which only its own binding takes back; registrations keep the limit",
          arguments: Backend.allCases)
    func start(backend: Backend) throws {
        let world = try World(backend)
        let engine = world.engine, now = world.sesame.clock.now()
        for binding: ChallengeBinding in [.signIn, .verificationRequest(requestID: "req_1"), .handOff(requestID: "req_1"),
                                          .actionRegistration(actionID: "act_1"), .action(actionID: "act_1"), .idCreation] {
            let started = try engine.start(binding, id: Identifiers.uuid(), project: world.project, rpID: "example.org", userID: "alice",
                                           linkID: "lnk_1", clientIP: "192.0.2.1")
            #expect(started.challenge.count == 32 && started.purpose == binding.purpose && started.rpID == "example.org")
            #expect(started.expiresAt == now.addingTimeInterval(300) && started.linkID == "lnk_1")
            let consumed = try engine.consume(started.id, binding: binding, project: world.project)
            #expect(consumed.challenge == started.challenge && consumed.userID == "alice")
        }
        let binding = ChallengeBinding.accountSession(userID: "alice", sessionID: "s1")
        // Alice has one passkey: a limit of 2 leaves room for one pending registration, not two.
        let first = try engine.startRegistration(binding, id: "pk_1", project: world.project, rpID: "example.org", name: "Laptop", limit: 2)
        #expect(first?.name == "Laptop" && first?.sessionID == "s1" && first?.userID == "alice")
        #expect(try engine.startRegistration(binding, id: "pk_2", project: world.project, rpID: "example.org", name: nil, limit: 2) == nil)
        #expect(try engine.consume("pk_1", binding: binding, project: world.project).id == "pk_1")
    }

    @Test("registration: a genuine response verifies; another origin is origin_mismatch; a changed relying party is refused",
          arguments: Backend.allCases)
    func registration(backend: Backend) throws {
        var world = try World(backend)
        let binding = ChallengeBinding.accountSession(userID: "alice", sessionID: "s1")
        var challenge = try world.challenge(binding, userID: "alice")
        var consumed = try world.engine.consume(challenge.id, binding: binding, project: world.project)
        let verified = try world.engine.finishRegistration(CeremonyFixture.json(world.fixture.registration()), challenge: consumed,
                                                           project: world.project, policy: world.policy)
        #expect(verified.credentialID == world.fixture.credentialID)

        challenge = try world.challenge(binding, userID: "alice")
        world.fixture.clientData["origin"] = .string("https://evil.example")
        consumed = try world.engine.consume(challenge.id, binding: binding, project: world.project)
        var error = try #require(throws: SesameError.self) {
            try world.engine.finishRegistration(CeremonyFixture.json(world.fixture.registration()), challenge: consumed, project: world.project, policy: world.policy)
        }
        #expect(error.code == .verificationFailed && error.reason == "origin_mismatch")

        challenge = try world.challenge(binding, rpID: "localhost", userID: "alice")
        consumed = try world.engine.consume(challenge.id, binding: binding, project: world.project)
        error = try #require(throws: SesameError.self) {
            try world.engine.finishRegistration(CeremonyFixture.json(world.fixture.registration()), challenge: consumed, project: world.project, policy: world.policy)
        }
        #expect(error.code == .expired && error.reason == "relying_party_changed")
    }
}

@Suite struct CeremonyMetadataTests {
    /// A packed-attested registration of the fixture authenticator through the engine, with `statuses` loaded for its
    /// AAGUID under the statement roots `roots` (nothing loaded when nil).
    func register(_ backend: Backend, statuses: [(String, String?)]?, roots: [String] = ["attestation-root"],
                  attested: Bool = true) throws(SesameError) -> VerifiedRegistration {
        var world: AttestationPolicyEngineTests.PolicyWorld
        do { world = try AttestationPolicyEngineTests.PolicyWorld(backend, statuses: statuses, roots: roots) } catch {
            preconditionFailure("fixture: \(error)")
        }
        return try world.register(attested ? .packed : .none)
    }

    @Test("registration with metadata: certified passes, each refusing status refuses with its reason, a chain to other roots is untrusted",
          arguments: Backend.allCases)
    func metadata(backend: Backend) throws {
        #expect(try register(backend, statuses: nil).attestationType == .basic)
        #expect(try register(backend, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01")]).aaguid == "5e5a4e30-0000-4000-8000-000000000001")
        for (status, reason) in [("REVOKED", "authenticator_revoked"), ("USER_VERIFICATION_BYPASS", "authenticator_user_verification_bypass"),
                                 ("ATTESTATION_KEY_COMPROMISE", "authenticator_attestation_key_compromise"),
                                 ("USER_KEY_REMOTE_COMPROMISE", "authenticator_user_key_remote_compromise"),
                                 ("USER_KEY_PHYSICAL_COMPROMISE", "authenticator_user_key_physical_compromise")] {
            let error = try #require(throws: SesameError.self) {
                try register(backend, statuses: [("FIDO_CERTIFIED_L1", "2025-01-01"), (status, "2026-12-01")])
            }
            #expect(error.code == .verificationFailed && error.reason == reason)
            // The same status refuses an unattested registration that names the AAGUID too.
            let unattested = try #require(throws: SesameError.self) { try register(backend, statuses: [(status, nil)], attested: false) }
            #expect(unattested.reason == reason)
        }
        let error = try #require(throws: SesameError.self) { try register(backend, statuses: [("FIDO_CERTIFIED", nil)], roots: ["other-root"]) }
        #expect(error.code == .verificationFailed && error.reason == "untrusted_attestation")
        // Without a chain there is nothing to judge against the roots.
        #expect(try register(backend, statuses: [("FIDO_CERTIFIED", nil)], roots: ["other-root"], attested: false).attestationType == .none)
    }
}

/// Outcomes collected from concurrent work.
final class Outcomes: Sendable {
    private let values = Mutex<[String]>([])
    func add(_ value: String) { values.withLock { $0.append(value) } }
    var all: [String] { values.withLock { $0 } }
}

/// The finish that verifies against the stored challenge and then writes in one transaction (sign-in's path).
@Suite struct CeremonyEngineTransactionTests {
    typealias World = CeremonyEngineTests.World

    /// Finishes a sign-in of `challenge` through the one-transaction path, storing a token as its effect.
    static func finish(_ world: World, _ challenge: ChallengeRecord, json: [UInt8]? = nil, failingEffect: Bool = false,
                       acknowledgement: FinishAcknowledgement = .durable,
                       inTransaction: (StoreTransaction) throws(StoreError) -> Void = { _ throws(StoreError) in }) throws(SesameError) -> String {
        try world.engine.finishAuthentication(
            json ?? CeremonyFixture.json(world.fixture.authentication()), challengeID: challenge.id, binding: .signIn, project: world.project,
            policy: world.policy, identification: .usernameless, userVerification: .required, acknowledgement: acknowledgement
        ) { transaction, passkey throws(StoreError) -> String in
            try inTransaction(transaction)
            let now = Date()
            let token = TokenRecord(id: Identifiers.unique(), projectID: world.project.id, userID: passkey.owner.id,
                                    secretHash: (0..<32).map { _ in .random(in: 0...255) }, kind: "passkey", createdAt: now,
                                    expiresAt: now.addingTimeInterval(60))
            try transaction.tokens.create(token)
            if failingEffect { throw StoreError(.conflict, "the effect failed") }
            return token.id
        }
    }

    /// Every stored token as `id:userID`.
    static func tokenOwners(_ world: World) throws -> [String] {
        try world.sesame.store.database.query("SELECT id, user_id FROM tokens ORDER BY id", []).map { "\(try $0.text("id")):\(try $0.text("user_id"))" }
    }

    @Test("an authentication's challenge is a row on PostgreSQL and held in memory on SQLite; a registration's is a row on both",
          arguments: Backend.allCases)
    func whereKept(backend: Backend) throws {
        var world = try World(backend)
        func rows() throws -> Int64? { try world.sesame.store.database.query("SELECT COUNT(*) AS n FROM challenges", []).first?.integer("n") }
        for binding in [ChallengeBinding.signIn, .verificationRequest(requestID: "req_1"), .handOff(requestID: "req_1"), .action(actionID: "a1")] {
            let challenge = try world.challenge(binding, userID: "alice")
            #expect(try world.engine.storedChallenge(challenge.id, for: binding) == challenge)
        }
        #expect(try rows() == (backend == .sqlite ? 0 : 4))
        #expect(world.sesame.store.pendingChallenges?.count == (backend == .sqlite ? 4 : nil))
        let registration = ChallengeBinding.accountSession(userID: "alice", sessionID: "s1")
        let pending = try world.challenge(registration, userID: "alice")
        #expect(try rows() == (backend == .sqlite ? 1 : 5))
        #expect(try world.engine.storedChallenge(pending.id, for: registration) == pending)
    }

    @Test("a verified finish takes the challenge, records the use and writes its effect together", arguments: Backend.allCases)
    func together(backend: Backend) throws {
        var world = try World(backend, storedSignCount: 1)
        world.fixture.signCount = 2
        let challenge = try world.challenge(.signIn)
        let tokenID = try Self.finish(world, challenge)
        #expect(try Self.tokenOwners(world) == ["\(tokenID):alice"])
        #expect(try world.storedSignCount() == 2)
        #expect(try world.engine.storedChallenge(challenge.id, for: .signIn) == nil)
    }

    @Test("a finish of a passkey whose use by another finish is not committed yet waits for it, then is refused as sign_count_regression",
          arguments: Backend.allCases)
    func useWaitsForUncommittedUse(backend: Backend) throws {
        // On PostgreSQL the passkey is read for use inside the transaction and its row stays locked until the commit (the
        // use's write goes out unanswered with the commit); without the lock the second finish would read the count as it
        // was and commit its token while the first waits below, and the first would commit its token too.
        var world = try World(backend, storedSignCount: 1)
        world.fixture.signCount = 2
        let first = try world.challenge(.signIn)
        let firstJSON = CeremonyFixture.json(world.fixture.authentication())
        let second = try world.challenge(.signIn)
        let secondJSON = CeremonyFixture.json(world.fixture.authentication())
        let outcomes = Outcomes(), shared = world, secondDone = DispatchGroup()
        _ = try Self.finish(world, first, json: firstJSON) { _ throws(StoreError) in
            secondDone.enter()
            DispatchQueue.global().async {
                do {
                    _ = try Self.finish(shared, second, json: secondJSON)
                    outcomes.add("success")
                } catch {
                    outcomes.add((error as? SesameError)?.reason ?? "\(error)")
                }
                secondDone.leave()
            }
            _ = secondDone.wait(timeout: .now() + 0.5)
        }
        secondDone.wait()
        #expect(outcomes.all == ["sign_count_regression"])
        #expect(try world.storedSignCount() == 2)
        #expect(try Self.tokenOwners(world).count == 1)
    }

    @Test("a durable finish waits for stable storage; one in flight does not where its challenge is held in memory (SQLite), and does on PostgreSQL",
          arguments: Backend.allCases)
    func acknowledgement(backend: Backend) throws {
        var world = try World(backend, storedSignCount: 1)
        world.fixture.signCount = 1
        let sqlite = world.sesame.store.database as? SQLiteDatabase
        var synchronousCommits: [String] = []
        func finish(_ acknowledgement: FinishAcknowledgement) throws -> Int? {
            world.fixture.signCount += 1
            let challenge = try world.challenge(.signIn)
            let flushes = sqlite?.sync.flushCount
            _ = try Self.finish(world, challenge, acknowledgement: acknowledgement) { transaction throws(StoreError) in
                if backend == .postgres {
                    synchronousCommits.append(try transaction.database.query("SHOW synchronous_commit", []).first?.text("synchronous_commit") ?? "")
                }
            }
            return flushes.map { (sqlite?.sync.flushCount ?? 0) - $0 }
        }
        let durable = try finish(.durable)
        let inFlight = try finish(.inFlight)
        #expect(try world.storedSignCount() == 3)
        switch backend {
        case .sqlite:
            #expect(durable == 1 && inFlight == 0)
        case .postgres:
            // A taking lost to a power cut would bring a challenge row back: both commits are the server's durable ones.
            #expect(synchronousCommits == ["on", "on"])
        }
    }

    @Test("an effect that fails rolls the whole step back: the challenge stays usable, the count and the token are not written",
          arguments: Backend.allCases)
    func effectFails(backend: Backend) throws {
        var world = try World(backend, storedSignCount: 1)
        world.fixture.signCount = 2
        let challenge = try world.challenge(.signIn)
        #expect(throws: SesameError.code(.conflict)) { try Self.finish(world, challenge, failingEffect: true) }
        #expect(try world.storedSignCount() == 1)
        #expect(try Self.tokenOwners(world).isEmpty)
        #expect(try world.engine.storedChallenge(challenge.id, for: .signIn) != nil)
        _ = try Self.finish(world, challenge)
        #expect(try world.storedSignCount() == 2)
    }

    @Test("a storage failure while the answer is verified is reported as itself, not as a refusal", arguments: Backend.allCases)
    func storageFailureWhileVerifying(backend: Backend) throws {
        var world = try World(backend)
        let challenge = try world.challenge(.signIn)
        // The passkeys' table is gone under the finish: reading the answering passkey fails.
        try world.sesame.store.database.execute("ALTER TABLE credentials RENAME TO credentials_away", [])
        let failure = try #require(throws: SesameError.self) { try Self.finish(world, challenge) }
        try world.sesame.store.database.execute("ALTER TABLE credentials_away RENAME TO credentials", [])
        #expect(failure.code == .internalFailure && failure.detail.contains("credentials"), "\(failure)")
        #expect(try world.storedSignCount() == 0)
        #expect(try Self.tokenOwners(world).isEmpty)
    }

    @Test("a refused finish uses the challenge up: the genuine answer after it finds it used", arguments: Backend.allCases)
    func refusedUsesUp(backend: Backend) throws {
        var world = try World(backend)
        let challenge = try world.challenge(.signIn)
        var forged = world.fixture
        forged.clientData["origin"] = .string("https://evil.example")
        let refused = try #require(throws: SesameError.self) { try Self.finish(world, challenge, json: CeremonyFixture.json(forged.authentication())) }
        #expect(refused.reason == "origin_mismatch")
        let again = try #require(throws: SesameError.self) { try Self.finish(world, challenge) }
        #expect(again.code == .expired && again.reason == "challenge_expired")
        #expect(try world.storedSignCount() == 0)
    }

    @Test("a challenge of another purpose is burnt; one of a verification request is left for its own path", arguments: Backend.allCases)
    func bindings(backend: Backend) throws {
        var world = try World(backend)
        let request = try world.challenge(.verificationRequest(requestID: "req_1"), userID: "alice")
        #expect(throws: SesameError.code(.expired)) { try Self.finish(world, request) }
        #expect(try world.engine.storedChallenge(request.id, for: .verificationRequest(requestID: "req_1")) == nil,
                "a sign-in probe burns whatever it names")
        let handOff = try world.challenge(.handOff(requestID: "req_1"), userID: "alice")
        let json = CeremonyFixture.json(world.fixture.authentication())
        #expect(throws: SesameError.code(.expired)) {
            try world.engine.finishAuthentication(json, challengeID: handOff.id, binding: .verificationRequest(requestID: "req_1"),
                                                  project: world.project, policy: world.policy, identification: .linkedPerson(userID: "alice"),
                                                  userVerification: .afterIdentity) { _, _ throws(StoreError) in }
        }
        #expect(try world.engine.storedChallenge(handOff.id, for: .handOff(requestID: "req_1")) != nil,
                "the hand-off's challenge stays usable by its own path")
    }

    @Test("an account session's registration challenge is never taken by an authentication finish", arguments: Backend.allCases)
    func registrationChallengeRefused(backend: Backend) throws {
        var world = try World(backend)
        let binding = ChallengeBinding.accountSession(userID: "alice", sessionID: "s1")
        let registration = try world.challenge(binding, userID: "alice")
        // A refused answer is the case that would use a challenge up: the registration must not be the one.
        var forged = world.fixture
        forged.clientData["origin"] = .string("https://evil.example")
        let json = CeremonyFixture.json(forged.authentication())
        let error = try #require(throws: SesameError.self) {
            try world.engine.finishAuthentication(json, challengeID: registration.id, binding: binding, project: world.project,
                                                  policy: world.policy, identification: .identifiedUser(userID: "alice"),
                                                  userVerification: .required) { _, _ throws(StoreError) in }
        }
        #expect(error.code == .expired && error.reason == "challenge_expired")
        #expect(try world.engine.storedChallenge(registration.id, for: binding) != nil, "the pending registration stays")
        #expect(try world.storedSignCount() == 0)
    }

    @Test("20 concurrent finishes of one challenge: exactly one wins, the others find it used", arguments: Backend.allCases)
    func oneWinner(backend: Backend) throws {
        var world = try World(backend)
        let challenge = try world.challenge(.signIn)
        let json = CeremonyFixture.json(world.fixture.authentication())
        let prepared = world
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 20) { _ in
            do {
                _ = try Self.finish(prepared, challenge, json: json)
                outcomes.add("success")
            } catch {
                outcomes.add((error as? SesameError)?.reason ?? "\(error)")
            }
        }
        #expect(outcomes.all.filter { $0 == "success" }.count == 1, "\(outcomes.all)")
        #expect(outcomes.all.filter { $0 == "challenge_expired" }.count == 19, "\(outcomes.all)")
        #expect(try Self.tokenOwners(world).count == 1)
    }
}

extension CeremonyEngine {
    /// An authentication's finish that writes nothing besides the passkey's use; the recorded assertion.
    func finishRecordingUse(_ credentialJSON: [UInt8], challengeID: String, binding: ChallengeBinding, project: Project,
                            policy: RelyingPartyPolicy, identification: CeremonyIdentification, userVerification: UserVerificationPolicy)
        throws(SesameError) -> AuthenticatedPasskey
    {
        try finishAuthentication(credentialJSON, challengeID: challengeID, binding: binding, project: project, policy: policy,
                                 identification: identification, userVerification: userVerification) { _, passkey throws(StoreError) in passkey }
    }
}

extension CeremonyEngine {
    /// The challenge `id` where `binding`'s ceremonies keep it (in memory or as a row), left in place; expired ones too.
    func storedChallenge(_ id: String, for binding: ChallengeBinding) throws -> ChallengeRecord? {
        if let memory = store.challengeMemory(for: binding) { return try memory.get(id: id) }
        return try store.challenges.get(id: id)
    }
}
