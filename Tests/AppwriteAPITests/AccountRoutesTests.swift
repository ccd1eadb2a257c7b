import Foundation
import SesameCore
import SesameHTTP
import SesameStore
import SesameTestSupport
import Testing

@Suite struct AccountRoutesTests {
    @Test("sign-up returns the full User model with no nulls; duplicates and bad input are refused", arguments: Backend.allCases)
    func signUp(backend: Backend) throws {
        let harness = try Harness(backend)
        let created = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"Alice@Example.org","password":"password123","name":"Alice"}"#)
        #expect(created.status == 201 && created.contentType == "application/json; charset=UTF-8")
        let user = created.object
        #expect(user["$id"] as? String == "alice" && user["email"] as? String == "alice@example.org" && user["name"] as? String == "Alice")
        #expect(user["status"] as? Bool == true && user["prefs"] is [String: Any] && (user["labels"] as? [Any])?.isEmpty == true)
        #expect(!created.text.contains("null") && created.object["password"] == nil && !created.text.contains("scrypt"))
        let stamp = try #require(user["$createdAt"] as? String)
        #expect(stamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00/) != nil, "\(stamp)")
        let unique = harness.send(.POST, "/v1/account", json: #"{"userId":"unique()","email":"bob@example.org","password":"password123"}"#)
        #expect((unique.object["$id"] as? String)?.count == 20)

        harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"x@example.org","password":"password123"}"#)
            .expectError(409, "user_already_exists")
        harness.send(.POST, "/v1/account", json: #"{"userId":"carol","email":"ALICE@example.org","password":"password123"}"#)
            .expectError(409, "user_already_exists")
        for body in [#"{"email":"c@example.org","password":"password123"}"#, #"{"userId":"c","password":"password123"}"#,
                     #"{"userId":"c","email":"c@example.org"}"#, #"{"userId":"c","email":"nope","password":"password123"}"#,
                     #"{"userId":"c","email":"c@example.org","password":"short"}"#,
                     #"{"userId":"_c","email":"c@example.org","password":"password123"}"#] {
            harness.send(.POST, "/v1/account", json: body).expectError(400, "general_argument_invalid")
        }
        let missing = harness.send(.POST, "/v1/account", json: #"{"email":"c@example.org","password":"password123"}"#)
        #expect(missing.object["message"] as? String == #"Param "userId" is not optional."#)
    }

    @Test("API keys: users.write of this project covers sessions.write; others are general_unauthorized_scope")
    func keys() throws {
        let harness = try Harness()
        let readOnly = try harness.sesame.apiKeys.create(projectID: harness.projectID, name: "ro", scopes: [.projectRead]).secret
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        let foreign = try harness.sesame.apiKeys.create(projectID: other.id, name: "k", scopes: APIKey.Scope.all).secret
        let body = #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#
        for key in [readOnly, foreign, "sesame_sk_unknown", "garbage"] {
            harness.send(.POST, "/v1/account", json: body, headers: [("X-Appwrite-Key", key)]).expectError(401, "general_unauthorized_scope")
        }
        #expect(harness.send(.POST, "/v1/account", json: body, headers: [("X-Appwrite-Key", harness.key)]).status == 201)
        // Keys never hold the account scope, even next to a valid session.
        let secret = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                               headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Key", harness.key), ("X-Appwrite-Session", secret)])
            .expectError(401, "general_unauthorized_scope")
    }

    @Test("email sessions: cookies for everyone, the secret only under an API key; credential errors", arguments: Backend.allCases)
    func emailSessions(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
        let guest = harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#)
        #expect(guest.status == 201 && guest.object["secret"] as? String == "" && guest.object["current"] as? Bool == true)
        #expect(guest.object["provider"] as? String == "email" && guest.object["factors"] as? [String] == ["password"])
        #expect(guest.object["mfaUpdatedAt"] as? String == "" && !guest.text.contains("null"))
        let cookies = guest.response.headers.values("Set-Cookie")
        let name = "a_session_\(harness.projectID)"
        #expect(cookies.count == 2 && cookies[0].hasPrefix("\(name)=sesame_ss_") && cookies[1].hasPrefix("\(name)_legacy=sesame_ss_"))
        #expect(cookies[0].contains("HttpOnly") && cookies[0].contains("SameSite=Lax") && !cookies[0].contains("Secure"))
        let fallback = try #require(guest.response.headers["X-Fallback-Cookies"])
        let cookieSecret = String(cookies[0].split(separator: ";")[0].dropFirst(name.count + 1))
        #expect(fallback == #"{"\#(name)":"\#(cookieSecret)"}"#)

        let keyed = harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123","duration":3600.0}"#,
                                 headers: [("X-Appwrite-Key", harness.key), ("X-Forwarded-Proto", "https")])
        #expect((keyed.object["secret"] as? String)?.hasPrefix("sesame_ss_") == true)
        #expect(keyed.response.headers.values("Set-Cookie").allSatisfy { $0.contains("; Secure") && $0.contains("Max-Age=3600") })

        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password124"}"#)
            .expectError(401, "user_invalid_credentials")
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"nobody@example.org","password":"password123"}"#)
            .expectError(401, "user_invalid_credentials")
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"password":"password123"}"#).expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123","duration":10}"#)
            .expectError(400, "general_argument_invalid")
        try harness.sesame.store.users.setStatus(projectID: harness.projectID, id: "alice", status: UserRecord.blocked, at: Date())
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#)
            .expectError(403, "user_blocked")
        // A blocked user's existing sessions stop working.
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", cookieSecret)]).expectError(401, "general_unauthorized_scope")
    }

    @Test("the Session model and SessionList are compact JSON, members in name order, every field present", arguments: Backend.allCases)
    func sessionModelShape(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
        let session = harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                   headers: [("X-Appwrite-Key", harness.key)])
        #expect(session.status == 201)
        let keys = ["$createdAt", "$id", "$updatedAt", "clientCode", "clientEngine", "clientEngineVersion", "clientName", "clientType",
                    "clientVersion", "countryCode", "countryName", "current", "deviceBrand", "deviceModel", "deviceName", "expire", "factors",
                    "ip", "mfaUpdatedAt", "osCode", "osName", "osVersion", "provider", "providerAccessToken", "providerAccessTokenExpiry",
                    "providerRefreshToken", "providerUid", "secret", "userId"]
        #expect(session.object.keys.sorted() == keys)
        #expect(session.object["current"] as? Bool == true && session.object["factors"] as? [String] == ["password"])
        #expect(session.object["userId"] as? String == "alice" && (session.object["secret"] as? String)?.hasPrefix("sesame_ss_") == true)
        #expect(keys.filter { $0 != "current" && $0 != "factors" }.allSatisfy { session.object[$0] is String })
        // Written as Foundation writes sorted, compact JSON: the same bytes.
        func sortedCompact(_ reply: Reply) throws -> String {
            let object = try JSONSerialization.jsonObject(with: Data(reply.response.body))
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        }
        #expect(session.text == (try sortedCompact(session)))
        let secret = try #require(session.object["secret"] as? String)
        let list = harness.send(.GET, "/v1/account/sessions", headers: [("X-Appwrite-Session", secret)])
        #expect(list.status == 200 && list.object["total"] as? Int == 1)
        #expect(list.text == (try sortedCompact(list)) && list.text.hasPrefix(#"{"sessions":[{"$createdAt":"#))
    }

    @Test("a session works from the cookie, the legacy cookie, X-Appwrite-Session and X-Fallback-Cookies; guests are refused")
    func transports() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let name = "a_session_\(harness.projectID)"
        let ways: [(String, String)] = [
            ("Cookie", "other=1; \(name)=\(secret)"), ("Cookie", "\(name)_legacy=\(secret)"), ("X-Appwrite-Session", secret),
            ("X-Fallback-Cookies", #"{"\#(name)":"\#(secret)"}"#),
        ]
        for header in ways {
            let reply = harness.send(.GET, "/v1/account", headers: [header])
            #expect(reply.status == 200 && reply.object["$id"] as? String == "alice", "\(header.0): \(reply.text)")
        }
        for header in [("X-Appwrite-Session", secret + "x"), ("X-Appwrite-Session", ""), ("Cookie", "a_session_other=\(secret)"),
                       ("X-Fallback-Cookies", "not json"), ("X-Fallback-Cookies", "[]")] {
            harness.send(.GET, "/v1/account", headers: [header]).expectError(401, "general_unauthorized_scope")
        }
        harness.send(.GET, "/v1/account").expectError(401, "general_unauthorized_scope")
        harness.send(.GET, "/v1/account/sessions").expectError(401, "general_unauthorized_scope")
        harness.send(.DELETE, "/v1/account/sessions/current").expectError(401, "general_unauthorized_scope")
        // Sessions belong to their project.
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        harness.send(.GET, "/v1/account", project: other.id, headers: [("X-Appwrite-Session", secret)]).expectError(401, "general_unauthorized_scope")
    }

    @Test("list, get and delete sessions; deleting the current one clears the cookies and ends it", arguments: Backend.allCases)
    func manageSessions(backend: Backend) throws {
        let harness = try Harness(backend)
        let first = try harness.signUpAndIn()
        let second = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                               headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        let auth = [("X-Appwrite-Session", first)]
        let list = harness.send(.GET, "/v1/account/sessions", headers: auth)
        let sessions = try #require(list.object["sessions"] as? [[String: Any]])
        #expect(list.object["total"] as? Int == 2 && sessions.count == 2)
        #expect(sessions.filter { $0["current"] as? Bool == true }.count == 1 && sessions.allSatisfy { $0["secret"] as? String == "" })
        #expect(harness.send(.GET, "/v1/account/sessions", headers: auth, query: ["total": "false"]).object["total"] as? Int == 0)
        let current = harness.send(.GET, "/v1/account/sessions/current", headers: auth)
        let currentID = try #require(current.object["$id"] as? String)
        #expect(current.object["current"] as? Bool == true)
        let otherID = try #require(sessions.first { $0["$id"] as? String != currentID }?["$id"] as? String)
        #expect(harness.send(.GET, "/v1/account/sessions/\(otherID)", headers: auth).object["current"] as? Bool == false)
        harness.send(.GET, "/v1/account/sessions/nope", headers: auth).expectError(404, "user_session_not_found")

        // Another user's session is not found for this one.
        let bob = try harness.signUpAndIn("bob@example.org", id: "bob")
        harness.send(.DELETE, "/v1/account/sessions/\(otherID)", headers: [("X-Appwrite-Session", bob)]).expectError(404, "user_session_not_found")

        let deleted = harness.send(.DELETE, "/v1/account/sessions/\(otherID)", headers: auth)
        #expect(deleted.status == 204 && deleted.response.body.isEmpty && deleted.contentType?.hasPrefix("application/json") == false)
        #expect(deleted.response.headers["X-Fallback-Cookies"] == nil)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", second)]).expectError(401, "general_unauthorized_scope")
        harness.send(.DELETE, "/v1/account/sessions/\(otherID)", headers: auth).expectError(404, "user_session_not_found")

        let ended = harness.send(.DELETE, "/v1/account/sessions/current", headers: auth)
        #expect(ended.status == 204 && ended.response.headers["X-Fallback-Cookies"] == "[]")
        #expect(ended.response.headers.values("Set-Cookie").allSatisfy { $0.contains("Max-Age=0") })
        harness.send(.GET, "/v1/account", headers: auth).expectError(401, "general_unauthorized_scope")
    }

    @Test("email-password switched off answers 501 user_auth_method_unsupported")
    func methodOff() throws {
        let harness = try Harness()
        _ = try harness.sesame.projects.setAuthMethod(projectID: harness.projectID, method: "email-password", enabled: false)
        harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
            .expectError(501, "user_auth_method_unsupported")
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#)
            .expectError(501, "user_auth_method_unsupported")
    }
}

@Suite struct PasswordRateLimitTests {
    @Test("10 password attempts per email per hour for guests, right or wrong; API keys are exempt")
    func passwordAttempts() throws {
        let harness = try Harness()
        _ = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
        for attempt in 0..<10 {
            let password = attempt % 2 == 0 ? "wrong-password" : "password123"
            #expect([201, 401].contains(harness.send(.POST, "/v1/account/sessions/email",
                                                     json: #"{"email":"alice@example.org","password":"\#(password)"}"#).status))
        }
        let refused = harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"ALICE@example.org","password":"password123"}"#)
        refused.expectError(429, "general_rate_limit_exceeded")
        #expect(refused.response.headers["X-RateLimit-Remaining"] == "0")
        #expect(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                             headers: [("X-Appwrite-Key", harness.key)]).status == 201)
        // Other addresses have their own budget; the next hour starts afresh.
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"bob@example.org","password":"password123"}"#)
            .expectError(401, "user_invalid_credentials")
        harness.clock.advance(by: 3600)
        #expect(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#).status == 201)
    }
}

@Suite struct DeleteSessionsTests {
    @Test("DELETE /v1/account/sessions ends all sessions, or all but the caller's; the users routes end one or all")
    func deleteSessions() throws {
        let harness = try Harness()
        let key = [("X-Appwrite-Key", harness.key)]
        let first = try harness.signUpAndIn()
        func another() throws -> String {
            try #require(harness.send(.POST, "/v1/users/alice/sessions", headers: key).object["secret"] as? String)
        }
        let second = try another()
        let kept = harness.send(.DELETE, "/v1/account/sessions", json: #"{"current":false}"#, headers: [("X-Appwrite-Session", first)])
        #expect(kept.status == 204 && kept.response.headers["X-Fallback-Cookies"] == nil)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", first)]).status == 200)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", second)]).expectError(401, "general_unauthorized_scope")

        let third = try another()
        let all = harness.send(.DELETE, "/v1/account/sessions", headers: [("X-Appwrite-Session", first), ("content-type", "")])
        #expect(all.status == 204 && all.response.headers["X-Fallback-Cookies"] == "[]")
        for secret in [first, third] {
            harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", secret)]).expectError(401, "general_unauthorized_scope")
        }

        let fourth = try another(), fifth = try another()
        let sessions = try #require(harness.send(.GET, "/v1/users/alice/sessions", headers: key).object["sessions"] as? [[String: Any]])
        let oneID = try #require(sessions.first?["$id"] as? String)
        #expect(harness.send(.DELETE, "/v1/users/alice/sessions/\(oneID)", headers: key).status == 204)
        harness.send(.DELETE, "/v1/users/alice/sessions/\(oneID)", headers: key).expectError(404, "user_session_not_found")
        #expect(harness.send(.GET, "/v1/users/alice/sessions", headers: key).object["total"] as? Int == 1)
        #expect(harness.send(.DELETE, "/v1/users/alice/sessions", headers: key).status == 204)
        for secret in [fourth, fifth] {
            harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", secret)]).expectError(401, "general_unauthorized_scope")
        }
        harness.send(.DELETE, "/v1/users/nobody/sessions", headers: key).expectError(404, "user_not_found")
    }
}
