import Foundation
import SesameCore
import SesameHTTP
import SesameStore
import SesameTestSupport
import Testing

/// A usernameless sign-in's action (C3 without an idempotency key): a row from the start on PostgreSQL, held in memory
/// on SQLite until its verification writes it with its outcome; the client API behaves the same on both.
@Suite struct UsernamelessActionTests {
    /// C3 for `signIn` with tenant Basic; returns the action's ID (the `challengeId` C4 names).
    private func opened(_ harness: Harness) throws -> String {
        let started = harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization)
        return try #require(started.object["challengeId"] as? String, "\(started.text)")
    }

    @Test("the action becomes a row when its sign-in is verified, with the user and outcome; until then SQLite holds it in memory",
          arguments: Backend.allCases)
    func verifiedActionIsARow(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("fay")
        let store = harness.sesame.store
        let actionID = try opened(harness)
        #expect(try store.authsignal.action(id: actionID)?.state == (backend == .sqlite ? nil : "CHALLENGE_REQUIRED"))
        #expect(store.pendingActions?.count == (backend == .sqlite ? 1 : nil))
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID)
        let verified = harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization)
        let token = try #require(verified.object["accessToken"] as? String, "\(verified.text)")
        let row = try #require(try store.authsignal.action(id: actionID))
        #expect(row.state == "CHALLENGE_SUCCEEDED" && row.externalUserID == "fay" && row.verificationMethod == "PASSKEY" && row.actionCode == "signIn")
        #expect((store.pendingActions?.count ?? 0) == 0)
        let validated = harness.validate(token)
        #expect(validated["isValid"] as? Bool == true && validated["state"] as? String == "CHALLENGE_SUCCEEDED" && validated["userId"] as? String == "fay",
                "\(validated)")
    }

    @Test("a refused answer fails the action as a row; a later challenge of the same action can still verify it", arguments: Backend.allCases)
    func refusedThenVerified(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("gus")
        let store = harness.sesame.store
        let actionID = try opened(harness)
        let wrong = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID, origin: "https://evil.example")
        #expect(harness.verify(wrong.challengeID, wrong.credential, authorization: harness.tenantAuthorization).object["isVerified"] as? Bool == false)
        #expect(try store.authsignal.action(id: actionID)?.state == "CHALLENGE_FAILED")
        #expect((store.pendingActions?.count ?? 0) == 0)
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID)
        #expect(harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization).object["isVerified"] as? Bool == true)
        let row = try #require(try store.authsignal.action(id: actionID))
        #expect(row.state == "CHALLENGE_SUCCEEDED" && row.externalUserID == "gus")
    }

    @Test("a refused and a genuine answer to two challenges of one action, finished at once: the genuine one is verified and the action succeeds",
          arguments: Backend.allCases)
    func concurrentOutcomes(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("hal")
        for _ in 0..<6 {
            let actionID = try opened(harness)
            let genuine = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID)
            let wrong = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID, origin: "https://evil.example")
            let answers = [(genuine.challengeID, genuine.credential), (wrong.challengeID, wrong.credential)]
            let bodies = try answers.map { try JSONSerialization.data(withJSONObject: ["challengeId": $0.0, "authenticationCredential": $0.1]) }
            let outcomes = LockedArray()
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                let object = (try? JSONSerialization.jsonObject(with: bodies[index])) ?? [:]
                let reply = harness.send(.POST, "/client/verify/passkey", object, authorization: harness.tenantAuthorization)
                outcomes.append("\(index):\(reply.object["isVerified"] as? Bool == true)")
            }
            #expect(outcomes.values.sorted() == ["0:true", "1:false"])
            let row = try #require(try harness.sesame.store.authsignal.action(id: actionID))
            #expect(row.state == "CHALLENGE_SUCCEEDED" && row.externalUserID == "hal")
        }
    }

    @Test("an action code whose default outcome is BLOCK opens its usernameless sign-ins blocked: their options are refused with 403",
          arguments: Backend.allCases)
    func blockedByDefault(backend: Backend) throws {
        let harness = try Harness(backend)
        try harness.sesame.authsignal.setOutcome(projectID: harness.tenantID, actionCode: "signIn", state: .block)
        let actionID = try opened(harness)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", ["challengeId": actionID],
                             authorization: harness.tenantAuthorization).isError(403, "forbidden"))
        #expect(try harness.sesame.store.authsignal.action(id: actionID)?.state == (backend == .sqlite ? nil : "BLOCK"))
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", [:],
                             authorization: harness.tenantAuthorization).status == 200, "another code's sign-in is not blocked")
    }

    @Test("a usernameless options call naming a user's action, another tenant's or an unknown one answers challenge_expired and keeps no challenge",
          arguments: Backend.allCases)
    func optionsForOtherActions(backend: Backend) throws {
        let harness = try Harness(backend)
        let store = harness.sesame.store
        let key = try #require(harness.track("alice", "withdraw")["idempotencyKey"] as? String)
        let tracked = try #require(try store.authsignal.action(projectID: harness.tenantID, idempotencyKey: key))
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: Harness.rpID, relyingPartyName: "Other").id
        let now = Date()
        try store.authsignal.createAction(AuthsignalActionRecord(id: "foreign-action", projectID: other, externalUserID: nil, actionCode: "signIn",
                                                                 idempotencyKey: "foreign-key", state: "CHALLENGE_REQUIRED", stateUpdatedAt: now,
                                                                 createdAt: now))
        func challengesKept() throws -> Int64 {
            if let memory = store.pendingChallenges { return Int64(memory.count) }
            return try #require(try store.database.query("SELECT COUNT(*) AS n FROM challenges", []).first).integer("n")
        }
        let before = try challengesKept()
        for actionID in [tracked.id, "foreign-action", "no-such-action"] {
            let reply = harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", ["challengeId": actionID],
                                     authorization: harness.tenantAuthorization)
            #expect(reply.isError(400, "invalid_request"), "\(actionID): \(reply.text)")
        }
        #expect(try challengesKept() == before)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", ["challengeId": try opened(harness)],
                             authorization: harness.tenantAuthorization).status == 200, "an open usernameless action of the tenant's")
        #expect(try challengesKept() == before + 1)
    }

    @Test("on SQLite a full memory writes the action as a row, which concludes as one")
    func fullMemoryWritesARow() throws {
        let harness = try Harness(.sqlite)
        _ = try harness.enrolledUser("ida")
        let memory = try #require(harness.sesame.store.pendingActions)
        let now = Date()
        for index in 0..<memory.capacity {
            #expect(memory.insert(AuthsignalActionRecord(id: "filler-\(index)", projectID: harness.tenantID, externalUserID: nil, actionCode: "signIn",
                                                         idempotencyKey: "filler-\(index)", state: "CHALLENGE_REQUIRED", stateUpdatedAt: now,
                                                         createdAt: now)))
        }
        let actionID = try opened(harness)
        #expect(try harness.sesame.store.authsignal.action(id: actionID)?.state == "CHALLENGE_REQUIRED")
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID)
        #expect(harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization).object["isVerified"] as? Bool == true)
        #expect(try harness.sesame.store.authsignal.action(id: actionID)?.state == "CHALLENGE_SUCCEEDED")
        #expect(memory.count == memory.capacity)
    }

    @Test("on SQLite a verification whose commit fails gives its action and its challenge back: the same answer verifies once commits work again")
    func failedCommitGivesBack() throws {
        let harness = try Harness(.sqlite)
        _ = try harness.enrolledUser("jo")
        let store = harness.sesame.store
        // The action's row names no project at commit time (a deferred foreign key), so the COMMIT fails after the body.
        try store.database.execute("CREATE TABLE commit_checked (project_id TEXT NOT NULL REFERENCES projects (id) DEFERRABLE INITIALLY DEFERRED)", [])
        try store.database.execute("CREATE TRIGGER fail_commit AFTER INSERT ON authsignal_actions BEGIN INSERT INTO commit_checked VALUES ('none'); END", [])
        let actionID = try opened(harness)
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, actionID: actionID)
        let failed = harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization)
        #expect(failed.status >= 400 && failed.object["isVerified"] == nil, "\(failed.text)")
        #expect(try store.authsignal.action(id: actionID) == nil && store.pendingActions?.count == 1)
        try store.database.execute("DROP TRIGGER fail_commit", [])
        let verified = harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization)
        #expect(verified.object["isVerified"] as? Bool == true, "\(verified.text)")
        #expect(try store.authsignal.action(id: actionID)?.state == "CHALLENGE_SUCCEEDED" && store.pendingActions?.count == 0)
    }

    @Test("on SQLite a restart forgets the actions in flight: their challenge calls answer as for an expired one")
    func restartForgets() throws {
        let harness = try Harness(.sqlite)
        let actionID = try opened(harness)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", ["challengeId": actionID],
                             authorization: harness.tenantAuthorization).status == 200)
        let restarted = Sesame(store: try Store.open(harness.url), masterKeys: MasterKeyring(current: .generate()))
        let refusal = #expect(throws: SesameError.self) {
            try restarted.authsignal.authenticationOptions(caller: .tenant(try restarted.projects.get(harness.tenantID)), challengeID: actionID,
                                                           requestOrigin: Harness.origin)
        }
        #expect(refusal?.reason == "challenge_expired")
    }
}
