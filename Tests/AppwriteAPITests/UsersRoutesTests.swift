import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameStore
import SesameTestSupport
import Testing

@Suite struct UsersRoutesTests {
    @Test("API keys manage users: create, get, list, status, sessions, passkeys, delete", arguments: Backend.allCases)
    func lifecycle(backend: Backend) throws {
        let harness = try Harness(backend)
        let key = [("X-Appwrite-Key", harness.key)]
        let created = harness.send(.POST, "/v1/users", json: #"{"userId":"carol","email":"carol@example.org","name":"Carol"}"#, headers: key)
        #expect(created.status == 201 && created.object["passwordUpdate"] as? String == "" && created.object["email"] as? String == "carol@example.org")
        #expect(harness.send(.POST, "/v1/users", json: #"{"userId":"dave"}"#, headers: key).status == 201)
        harness.send(.POST, "/v1/users", json: #"{"userId":"carol"}"#, headers: key).expectError(409, "user_already_exists")
        harness.send(.POST, "/v1/users", json: #"{"userId":"erin","password":"short"}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/users", json: #"{"userId":"erin","phone":"+15550100"}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/users", json: #"{"email":"x@example.org"}"#, headers: key).expectError(400, "general_argument_invalid")
        #expect(harness.send(.GET, "/v1/users/carol", headers: key).object["name"] as? String == "Carol")
        harness.send(.GET, "/v1/users/nobody", headers: key).expectError(404, "user_not_found")
        let list = harness.send(.GET, "/v1/users", headers: key)
        #expect(list.object["total"] as? Int == 2 && (list.object["users"] as? [[String: Any]])?.count == 2)

        // A server session: provider server, secret in the body; it works as the user's session.
        let minted = harness.send(.POST, "/v1/users/carol/sessions", headers: key)
        #expect(minted.status == 201 && minted.object["provider"] as? String == "server" && minted.object["factors"] as? [String] == ["server"])
        let secret = try #require(minted.object["secret"] as? String)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", secret)]).object["$id"] as? String == "carol")
        #expect(harness.send(.GET, "/v1/users/carol/sessions", headers: key).object["total"] as? Int == 1)
        harness.send(.POST, "/v1/users/nobody/sessions", headers: key).expectError(404, "user_not_found")

        // Passkeys registered by the user are managed through the key, without a recency rule.
        let passkeyID = try harness.registerPasskey(secret, SoftwareAuthenticator())
        harness.clock.advance(by: 3600)
        let passkeys = harness.send(.GET, "/v1/users/carol/passkeys", headers: key)
        #expect(passkeys.object["total"] as? Int == 1)
        #expect(harness.send(.GET, "/v1/users/carol/passkeys/\(passkeyID)", headers: key).object["name"] as? String == "Laptop")
        harness.send(.GET, "/v1/users/dave/passkeys/\(passkeyID)", headers: key).expectError(404, "user_passkey_not_found")
        #expect(harness.send(.PATCH, "/v1/users/carol/passkeys/\(passkeyID)", json: #"{"name":"Phone"}"#, headers: key).object["name"] as? String == "Phone")
        harness.send(.PATCH, "/v1/users/carol/passkeys/\(passkeyID)", json: #"{"name":""}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.DELETE, "/v1/users/dave/passkeys/\(passkeyID)", headers: key).expectError(404, "user_passkey_not_found")
        #expect(harness.send(.DELETE, "/v1/users/carol/passkeys/\(passkeyID)", headers: key).status == 204)
        harness.send(.DELETE, "/v1/users/carol/passkeys/\(passkeyID)", headers: key).expectError(404, "user_passkey_not_found")

        // Blocking ends the user's sessions and refuses sign-in.
        let blocked = harness.send(.PATCH, "/v1/users/carol/status", json: #"{"status":false}"#, headers: key)
        #expect(blocked.object["status"] as? Bool == false)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", secret)]).expectError(401, "general_unauthorized_scope")
        harness.send(.POST, "/v1/users/carol/sessions", headers: key).expectError(403, "user_blocked")
        harness.send(.PATCH, "/v1/users/carol/status", json: #"{}"#, headers: key).expectError(400, "general_argument_invalid")
        #expect(harness.send(.PATCH, "/v1/users/carol/status", json: #"{"status":true}"#, headers: key).object["status"] as? Bool == true)

        // Deleting removes the user with pending registrations; the user's data is gone.
        let fresh = try #require(harness.send(.POST, "/v1/users/carol/sessions", headers: key).object["secret"] as? String)
        #expect(harness.startRegistration(fresh).status == 201)
        let deleted = harness.send(.DELETE, "/v1/users/carol", headers: key)
        #expect(deleted.status == 204 && deleted.contentType == "text/plain")
        harness.send(.GET, "/v1/users/carol", headers: key).expectError(404, "user_not_found")
        harness.send(.DELETE, "/v1/users/carol", headers: key).expectError(404, "user_not_found")
        #expect(try harness.sesame.store.challenges.countActive(userID: "carol", purpose: "registration", now: harness.clock.now()) == 0)
    }

    @Test("the users routes need an API key of the project with users.read or users.write")
    func scopes() throws {
        let harness = try Harness()
        let reader = try harness.sesame.apiKeys.create(projectID: harness.projectID, name: "r", scopes: [.usersRead]).secret
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        let foreign = try harness.sesame.apiKeys.create(projectID: other.id, name: "k", scopes: APIKey.Scope.all).secret
        let secret = try harness.signUpAndIn()
        harness.send(.GET, "/v1/users").expectError(401, "general_unauthorized_scope")
        harness.send(.GET, "/v1/users", headers: [("X-Appwrite-Session", secret)]).expectError(401, "general_unauthorized_scope")
        harness.send(.GET, "/v1/users/alice", headers: [("X-Appwrite-Key", foreign)]).expectError(401, "general_unauthorized_scope")
        #expect(harness.send(.GET, "/v1/users/alice", headers: [("X-Appwrite-Key", reader)]).status == 200)
        harness.send(.POST, "/v1/users", json: #"{"userId":"x"}"#, headers: [("X-Appwrite-Key", reader)]).expectError(401, "general_unauthorized_scope")
        harness.send(.DELETE, "/v1/users/alice", headers: [("X-Appwrite-Key", reader)]).expectError(401, "general_unauthorized_scope")
        harness.send(.POST, "/v1/users/alice/sessions", headers: [("X-Appwrite-Key", reader)]).expectError(401, "general_unauthorized_scope")
    }
}

@Suite struct TokenTests {
    @Test("users.create_token mints short single-use tokens; guests get 10 exchanges per IP and user each hour")
    func tokens() throws {
        let harness = try Harness()
        let key = [("X-Appwrite-Key", harness.key)]
        _ = harness.send(.POST, "/v1/users", json: #"{"userId":"carol"}"#, headers: key)
        let token = harness.send(.POST, "/v1/users/carol/tokens", json: #"{"length":8,"expire":120}"#, headers: key)
        #expect(token.status == 201 && token.object["userId"] as? String == "carol" && token.object["phrase"] as? String == "")
        let secret = try #require(token.object["secret"] as? String)
        #expect(secret.count == 8 && secret.allSatisfy { $0.isLowercase || $0.isNumber })
        let session = harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"\#(secret)"}"#)
        #expect(session.status == 201 && session.object["provider"] as? String == "token" && session.object["factors"] as? [String] == ["token"])
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"\#(secret)"}"#).expectError(401, "user_invalid_token")
        #expect((harness.send(.POST, "/v1/users/carol/tokens", headers: key).object["secret"] as? String)?.count == 6)
        for body in [#"{"length":3}"#, #"{"length":129}"#, #"{"length":6.5}"#, #"{"expire":59}"#] {
            harness.send(.POST, "/v1/users/carol/tokens", json: body, headers: key).expectError(400, "general_argument_invalid")
        }
        harness.send(.POST, "/v1/users/nobody/tokens", headers: key).expectError(404, "user_not_found")
        let expiring = try #require(harness.send(.POST, "/v1/users/carol/tokens", json: #"{"expire":60}"#, headers: key).object["secret"] as? String)
        harness.clock.advance(by: 61)
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"\#(expiring)"}"#).expectError(401, "user_invalid_token")

        // Guessing: 10 guest exchanges per IP and user per hour (4 spent above), then 429; keys are exempt.
        harness.clock.advance(by: 3600)
        for _ in 0..<10 {
            harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"guess1"}"#).expectError(401, "user_invalid_token")
        }
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"guess2"}"#).expectError(429, "general_rate_limit_exceeded")
        let fresh = try #require(harness.send(.POST, "/v1/users/carol/tokens", headers: key).object["secret"] as? String)
        #expect(harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"carol","secret":"\#(fresh)"}"#, headers: key).status == 201)
    }
}
