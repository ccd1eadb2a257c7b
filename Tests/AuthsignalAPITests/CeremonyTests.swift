import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// The face's passkey ceremonies on the engine: reasons for the operator, single-use and expiring challenges, and
/// action states a ceremony may not override.
@Suite struct CeremonyTests {
    @Test("finished and refused ceremonies are counted under face authsignal with their reason; the app sees only its code",
          arguments: Backend.allCases)
    func reasons(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("alice")
        #expect(harness.ceremonies("registration", "success", "") == 1)
        // Another origin: isVerified false for the app, origin_mismatch for the operator.
        let wrong = try harness.assertion(authorization: harness.tenantAuthorization, action: "signIn", origin: "https://evil.example")
        let refused = harness.verify(wrong.challengeID, wrong.credential, authorization: harness.tenantAuthorization)
        #expect(refused.status == 200 && refused.object.count == 1 && refused.object["isVerified"] as? Bool == false, "\(refused.text)")
        #expect(!refused.text.contains("origin"))
        #expect(harness.ceremonies("authentication", "failure", "origin_mismatch") == 1)
        // The used challenge again: 400 invalid_request, challenge_expired.
        #expect(harness.verify(wrong.challengeID, wrong.credential, authorization: harness.tenantAuthorization).isError(400, "invalid_request"))
        #expect(harness.ceremonies("authentication", "failure", "challenge_expired") == 1)
        let good = try harness.assertion(authorization: harness.tenantAuthorization, action: "signIn")
        #expect(harness.verify(good.challengeID, good.credential, authorization: harness.tenantAuthorization).object["isVerified"] as? Bool == true)
        #expect(harness.ceremonies("authentication", "success", "") == 1)
    }

    @Test("a sign-in or registration challenge works for 5 minutes", arguments: Backend.allCases)
    func challengeLifetime(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("bob")
        let late = try harness.assertion(authorization: harness.tenantAuthorization, action: "signIn")
        harness.clock.advance(by: 301)
        #expect(harness.verify(late.challengeID, late.credential, authorization: harness.tenantAuthorization).isError(400, "invalid_request"))
        let token = try #require(harness.track("carol", "createPasskey")["token"] as? String)
        let options = harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + token)
        harness.clock.advance(by: 301)
        let added = harness.send(.POST, "/client/user-authenticators/passkey",
                                 ["challengeId": options.object["challengeId"] ?? "", "registrationCredential": [String: Any]()],
                                 authorization: "Bearer " + token)
        #expect(added.isError(400, "invalid_request"), "\(added.text)")
    }

    @Test("of concurrent finishes of one sign-in challenge exactly one is verified", arguments: Backend.allCases)
    func concurrentFinishes(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("dora")
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, action: "signIn")
        let challengeID = answer.challengeID
        let body = try JSONSerialization.data(withJSONObject: ["challengeId": challengeID, "authenticationCredential": answer.credential])
        let statuses = LockedArray()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let object = (try? JSONSerialization.jsonObject(with: body)) ?? [:]
            let reply = harness.send(.POST, "/client/verify/passkey", object, authorization: harness.tenantAuthorization)
            statuses.append(reply.object["isVerified"] as? Bool == true ? "verified" : reply.isError(400, "invalid_request") ? "used" : reply.text)
        }
        #expect(statuses.values.sorted() == ["used", "used", "used", "used", "used", "used", "used", "verified"], "\(statuses.values)")
    }

    @Test("a refused sign-in fails the action; a BLOCK the backend set meanwhile stays, and a genuine answer earns no token",
          arguments: Backend.allCases)
    func statesTheCeremonyKeeps(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("erin")
        let tracked = harness.track("erin", "withdraw")
        let token = try #require(tracked["token"] as? String), key = try #require(tracked["idempotencyKey"] as? String)
        let wrong = try harness.assertion(authorization: "", token: token, origin: "https://evil.example")
        #expect(harness.verify(wrong.challengeID, wrong.credential, authorization: "Bearer " + token).object["isVerified"] as? Bool == false)
        #expect(harness.send(.GET, "/users/erin/actions/withdraw/\(key)", authorization: harness.serverAuthorization).object["state"] as? String
                == "CHALLENGE_FAILED")
        // The backend blocks the action while the app holds a fresh challenge.
        let answer = try harness.assertion(authorization: "", token: token)
        #expect(harness.send(.PATCH, "/users/erin/actions/withdraw/\(key)", ["state": "BLOCK"], authorization: harness.serverAuthorization).status == 200)
        let reply = harness.verify(answer.challengeID, answer.credential, authorization: "Bearer " + token)
        #expect(reply.object.count == 1 && reply.object["isVerified"] as? Bool == false, "\(reply.text)")
        #expect(harness.ceremonies("authentication", "failure", "action_closed") == 1)
        #expect(harness.validate(token)["state"] as? String == "BLOCK")
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", [:], authorization: "Bearer " + token)
            .isError(403, "forbidden"))
    }

    @Test("a tenant's passkeys answer only its own sign-ins; an Appwrite account's passkey of the same project is unknown here",
          arguments: Backend.allCases)
    func onlyTheFacesUsers(backend: Backend) throws {
        let harness = try Harness(backend)
        // A passkey of a project user that the Authsignal face does not know (made through the domain by another face).
        let account = SoftwareAuthenticator()
        let user = try harness.sesame.users.create(projectID: harness.tenantID, id: nil, email: "x@example.org", password: nil, name: nil)
        let session = try harness.sesame.sessions.create(projectID: harness.tenantID, userID: user.id, provider: "email", factors: ["password"],
                                                         client: ClientInfo(ip: "", userAgent: ""))
        let project = try harness.sesame.projects.get(harness.tenantID)
        let start = try harness.sesame.passkeys.beginRegistration(project: project, user: user, session: session.session, passkeyID: nil, name: nil,
                                                                  requestOrigin: Harness.origin)
        let creation = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: Data(start.options.jsonBytes))
        let created = try account.create(creation, origin: Harness.origin)
        _ = try harness.sesame.passkeys.finishRegistration(project: project, user: user, session: session.session, passkeyID: start.passkeyID,
                                                           credentialJSON: Array(try JSONEncoder().encode(created)), requestOrigin: Harness.origin)
        let answer = try harness.assertion(authorization: harness.tenantAuthorization, action: "signIn", authenticator: account)
        #expect(harness.verify(answer.challengeID, answer.credential, authorization: harness.tenantAuthorization).isError(400, "unknown_credential"))
    }
}

/// Strings appended from several threads.
final class LockedArray: @unchecked Sendable {
    // @unchecked Sendable: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ value: String) { lock.withLock { storage.append(value) } }
    var values: [String] { lock.withLock { storage } }
}

/// Housekeeping removes Authsignal actions past their retention.
@Suite struct ActionRetentionTests {
    @Test("a user-less sign-in action goes after an hour, a tracked one after 30 days", arguments: Backend.allCases)
    func retention(backend: Backend) throws {
        let harness = try Harness(backend)
        let challenge = harness.send(.POST, "/client/challenge", ["action": "signIn"], authorization: harness.tenantAuthorization)
        let userless = try #require(challenge.object["challengeId"] as? String)
        let key = try #require(harness.track("alice", "withdraw")["idempotencyKey"] as? String)
        harness.clock.advance(by: 3601)
        func options() -> Harness.Reply {
            harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", ["challengeId": userless],
                         authorization: harness.tenantAuthorization)
        }
        #expect(options().status == 200)
        #expect(try harness.sesame.housekeeping.sweep().authsignalActions == 1)
        #expect(options().isError(400, "invalid_request"))
        #expect(try harness.sesame.store.authsignal.action(id: userless) == nil)
        #expect(harness.send(.GET, "/users/alice/actions/withdraw/\(key)", authorization: harness.serverAuthorization).status == 200)
        harness.clock.advance(by: 30 * 86_400)
        #expect(try harness.sesame.housekeeping.sweep().authsignalActions == 1)
        #expect(harness.send(.GET, "/users/alice/actions/withdraw/\(key)", authorization: harness.serverAuthorization).isError(404, "not_found"))
    }
}
