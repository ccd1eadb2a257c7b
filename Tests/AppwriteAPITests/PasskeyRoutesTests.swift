import Foundation
import SesameClient
import SesameCore
import SesameHTTP
@testable import SesameStore
import Synchronization
import SesameTestSupport
import Testing

let shopOrigin = "https://shop.example"

/// JSON text of an encodable wire value.
func jsonText(_ value: some Encodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
}

/// Decodes the `publicKey` member of a PasskeyChallenge reply.
func options<T: Decodable>(_ type: T.Type, _ reply: Reply) throws -> T {
    let publicKey = try #require(reply.object["publicKey"], "\(reply.text)")
    return try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: publicKey))
}

extension Harness {
    /// Starts a registration as the session `secret`.
    func startRegistration(_ secret: String, body: String = "{}", origin: String? = nil) -> Reply {
        var headers = [("X-Appwrite-Session", secret)]
        if let origin { headers.append(("Origin", origin)) }
        return send(.POST, "/v1/account/passkeys", json: body, headers: headers)
    }

    /// Finishes the registration `passkeyID` with the authenticator's answer to `start`.
    func finishRegistration(_ secret: String, _ start: Reply, _ authenticator: SoftwareAuthenticator, origin: String = shopOrigin,
                            sendOrigin: Bool = false) throws -> Reply {
        let response = try authenticator.create(try options(PublicKeyCredentialCreationOptionsJSON.self, start), origin: origin)
        let id = try #require(start.object["passkeyId"] as? String)
        var headers = [("X-Appwrite-Session", secret)]
        if sendOrigin { headers.append(("Origin", origin)) }
        return send(.PUT, "/v1/account/passkeys/\(id)/verification", json: #"{"credential":\#(try jsonText(response))}"#, headers: headers)
    }

    /// A verified passkey for the session `secret`; returns its ID.
    @discardableResult
    func registerPasskey(_ secret: String, _ authenticator: SoftwareAuthenticator, name: String = "Laptop") throws -> String {
        let start = startRegistration(secret, body: #"{"name":"\#(name)"}"#)
        #expect(start.status == 201, "\(start.text)")
        let finish = try finishRegistration(secret, start, authenticator)
        #expect(finish.status == 200, "\(finish.text)")
        return try #require(finish.object["$id"] as? String)
    }

    /// A usernameless sign-in: start, assertion, finish. Returns the finish reply (a TokenSecret on success).
    func signIn(_ authenticator: SoftwareAuthenticator, headers: [(String, String)] = [], origin: String = shopOrigin) throws -> Reply {
        let start = send(.POST, "/v1/account/tokens/passkey", headers: headers)
        #expect(start.status == 201, "\(start.text)")
        let assertion = try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, start), origin: origin)
        let id = try #require(start.object["$id"] as? String)
        return send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"\#(id)","credential":\#(try jsonText(assertion))}"#,
                    headers: headers)
    }
}

@Suite struct PasskeyRoutesTests {
    @Test("register, sign in usernamelessly, exchange the token, rename, delete: the whole loop", arguments: Backend.allCases)
    func wholeLoop(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()

        let start = harness.startRegistration(secret, body: #"{"name":"Laptop"}"#)
        #expect(start.status == 201, "\(start.text)")
        let passkeyID = try #require(start.object["passkeyId"] as? String)
        #expect(passkeyID.count == 20 && start.object["$id"] as? String == passkeyID)
        let creation = try options(PublicKeyCredentialCreationOptionsJSON.self, start)
        #expect(creation.rp.id == "shop.example" && creation.user.name == "alice@example.org" && creation.pubKeyCredParams.map(\.alg) == [-7, -257])
        #expect(creation.authenticatorSelection?.userVerification == "required" && creation.authenticatorSelection?.residentKey == "required")
        #expect(creation.excludeCredentials == [])
        let created = try #require(start.object["$createdAt"] as? String), expire = try #require(start.object["expire"] as? String)
        #expect(created.hasSuffix("+00:00") && expire > created)

        let finish = try harness.finishRegistration(secret, start, authenticator)
        #expect(finish.status == 200, "\(finish.text)")
        #expect(finish.object["$id"] as? String == passkeyID && finish.object["name"] as? String == "Laptop")
        #expect(finish.object["accessedAt"] as? String == "" && !finish.text.contains("null"))
        #expect(Set(finish.object.keys) == ["$id", "$createdAt", "$updatedAt", "name", "accessedAt"])
        let auth = [("X-Appwrite-Session", secret)]
        let list = harness.send(.GET, "/v1/account/passkeys", headers: auth)
        #expect(list.object["total"] as? Int == 1 && (list.object["passkeys"] as? [[String: Any]])?.first?["$id"] as? String == passkeyID)
        // A second registration excludes the first credential.
        let second = harness.startRegistration(secret)
        #expect(try options(PublicKeyCredentialCreationOptionsJSON.self, second).excludeCredentials?.count == 1)

        // Usernameless sign-in as a guest: empty allowCredentials, the credential names the user.
        let signInStart = harness.send(.POST, "/v1/account/tokens/passkey")
        #expect(signInStart.status == 201 && signInStart.object["passkeyId"] as? String == "")
        let request = try options(PublicKeyCredentialRequestOptionsJSON.self, signInStart)
        #expect(request.rpID == "shop.example" && request.allowCredentials == [] && request.userVerification == "required")
        harness.clock.advance(by: 1)
        let token = try harness.signIn(authenticator)
        #expect(token.status == 201, "\(token.text)")
        #expect(token.object["userId"] as? String == "alice" && token.object["phrase"] as? String == "")
        let tokenSecret = try #require(token.object["secret"] as? String)
        #expect(tokenSecret.hasPrefix("sesame_tk_"))
        let accessed = harness.send(.GET, "/v1/account/passkeys/\(passkeyID)", headers: auth)
        #expect(accessed.object["accessedAt"] as? String != "")

        let session = harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(tokenSecret)"}"#,
                                   headers: [("X-Appwrite-Key", harness.key)])
        #expect(session.status == 201, "\(session.text)")
        #expect(session.object["provider"] as? String == "passkey" && session.object["factors"] as? [String] == ["passkey"])
        #expect(session.object["mfaUpdatedAt"] as? String == session.object["$createdAt"] as? String)
        let passkeySecret = try #require(session.object["secret"] as? String)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", passkeySecret)]).object["$id"] as? String == "alice")
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(tokenSecret)"}"#).expectError(401, "user_invalid_token")

        let renamed = harness.send(.PATCH, "/v1/account/passkeys/\(passkeyID)", json: #"{"name":"Work laptop"}"#, headers: auth)
        #expect(renamed.object["name"] as? String == "Work laptop" && renamed.object["$updatedAt"] as? String != renamed.object["$createdAt"] as? String)
        let deleted = harness.send(.DELETE, "/v1/account/passkeys/\(passkeyID)", headers: auth)
        #expect(deleted.status == 204 && deleted.response.body.isEmpty && deleted.contentType == "text/plain")
        #expect(harness.send(.GET, "/v1/account/passkeys", headers: auth).object["total"] as? Int == 0)
        harness.send(.GET, "/v1/account/passkeys/\(passkeyID)", headers: auth).expectError(404, "user_passkey_not_found")
        // The deleted credential no longer signs in.
        try harness.signIn(authenticator).expectError(401, "user_passkey_invalid")
    }

    @Test("registration start: scope, method, recency, arguments, IDs, the 10-passkey limit and the hourly rate")
    func registrationStartRules() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        harness.send(.POST, "/v1/account/passkeys").expectError(401, "general_unauthorized_scope")
        harness.send(.POST, "/v1/account/passkeys", headers: [("X-Appwrite-Key", harness.key)]).expectError(401, "general_unauthorized_scope")
        harness.startRegistration(secret, body: #"{"passkeyId":"-bad"}"#).expectError(400, "general_argument_invalid")
        harness.startRegistration(secret, body: #"{"name":"\#(String(repeating: "n", count: 129))"}"#).expectError(400, "general_argument_invalid")
        try harness.registerPasskey(secret, SoftwareAuthenticator())
        let taken = try #require(harness.send(.GET, "/v1/account/passkeys", headers: [("X-Appwrite-Session", secret)])
            .object["passkeys"] as? [[String: Any]]).first?["$id"] as? String ?? ""
        harness.startRegistration(secret, body: #"{"passkeyId":"\#(taken)"}"#).expectError(409, "user_passkey_already_exists")
        #expect(harness.startRegistration(secret, body: #"{"passkeyId":"mine"}"#).object["passkeyId"] as? String == "mine")
        harness.startRegistration(secret, body: #"{"passkeyId":"mine"}"#).expectError(409, "user_passkey_already_exists")

        // 10 minutes after signing in, registering and deleting need a fresh sign-in.
        harness.clock.advance(by: 601)
        harness.startRegistration(secret).expectError(401, "user_reauthentication_required")
        harness.send(.DELETE, "/v1/account/passkeys/\(taken)", headers: [("X-Appwrite-Session", secret)])
            .expectError(401, "user_reauthentication_required")
        // Renaming has no recency rule.
        #expect(harness.send(.PATCH, "/v1/account/passkeys/\(taken)", json: #"{"name":"Old"}"#, headers: [("X-Appwrite-Session", secret)]).status == 200)

        // A new hour: 1 passkey + 9 pending = 10; the next is over the limit.
        harness.clock.advance(by: 3600)
        let fresh = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                              headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        for attempt in 1...9 {
            let start = harness.startRegistration(fresh)
            #expect(start.status == 201 && start.response.headers["X-RateLimit-Remaining"] == String(10 - attempt))
        }
        harness.startRegistration(fresh).expectError(400, "user_passkey_limit_exceeded")
        harness.startRegistration(fresh).expectError(400, "user_passkey_limit_exceeded")
        // Pending registrations expire after 5 minutes and stop counting; refusals for the limit spent no attempt,
        // so one more start fits in the hour (the 10th) and the 11th is over the rate.
        harness.clock.advance(by: 301)
        #expect(harness.startRegistration(fresh).status == 201)
        harness.startRegistration(fresh).expectError(429, "general_rate_limit_exceeded")
        harness.clock.advance(by: 3600)
        let fresher = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                                headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        #expect(harness.startRegistration(fresher).status == 201)

        // Passkeys switched off: 501. No platform on the relying party: 403 general_unknown_origin naming the web platform
        // to add, as Appwrite answers an unregistered client (it was 501 "disabled or unsupported", which misled).
        _ = try harness.sesame.projects.setAuthMethod(projectID: harness.projectID, method: "passkey", enabled: false)
        harness.startRegistration(fresher).expectError(501, "user_auth_method_unsupported")
        harness.send(.POST, "/v1/account/tokens/passkey").expectError(501, "user_auth_method_unsupported")
        let bare = try harness.sesame.projects.create(name: "Bare", relyingPartyID: "bare.example")
        let bareReply = harness.send(.POST, "/v1/account/tokens/passkey", project: bare.id)
        bareReply.expectError(403, "general_unknown_origin")
        #expect((bareReply.object["message"] as? String ?? "").contains("Web platform for bare.example"), "\(bareReply.text)")
    }

    @Test("on SQLite a sign-in's finish (its token in flight) waits for no log flush; the token's exchange, which opens the session, waits for one")
    func signInDurability() throws {
        let database = try SQLiteDatabase(path: try freshSQLitePath())
        let harness = try Harness(store: try Store(database: database))
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(try harness.signUpAndIn(), authenticator)
        // The first token of a deployment makes its token-hashing key (a durable write of its own).
        #expect(try harness.signIn(authenticator).status == 201)
        let before = database.sync.flushCount
        let token = try harness.signIn(authenticator)
        #expect(token.status == 201, "\(token.text)")
        #expect(database.sync.flushCount == before)
        let tokenSecret = try #require(token.object["secret"] as? String)
        let session = harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(tokenSecret)"}"#)
        #expect(session.status == 201, "\(session.text)")
        #expect(database.sync.flushCount == before + 1)
    }

    @Test("registration finish: unknown, other session, expired, used, bad origin, no UV, missing credential", arguments: Backend.allCases)
    func registrationFinishRules(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let other = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                              headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        let auth = [("X-Appwrite-Session", secret)]
        harness.send(.PUT, "/v1/account/passkeys/nope/verification", json: #"{"credential":{}}"#, headers: auth)
            .expectError(404, "user_passkey_not_found")

        // Finished from another session of the same user: refused, and the registration is gone.
        let start = harness.startRegistration(secret)
        try harness.finishRegistration(other, start, SoftwareAuthenticator()).expectError(401, "user_invalid_token")
        try harness.finishRegistration(secret, start, SoftwareAuthenticator()).expectError(404, "user_passkey_not_found")
        // Another user cannot see it at all.
        let bob = try harness.signUpAndIn("bob@example.org", id: "bob")
        let mine = harness.startRegistration(secret)
        try harness.finishRegistration(bob, mine, SoftwareAuthenticator()).expectError(404, "user_passkey_not_found")

        let late = harness.startRegistration(secret)
        harness.clock.advance(by: 301)
        try harness.finishRegistration(secret, late, SoftwareAuthenticator()).expectError(401, "user_invalid_token")
        harness.clock.advance(by: -301)

        try harness.finishRegistration(secret, harness.startRegistration(secret), SoftwareAuthenticator(), origin: "https://evil.example")
            .expectError(401, "user_passkey_invalid")
        let noUV = SoftwareAuthenticator(settings: SoftwareAuthenticator.Settings(userVerified: false))
        let noUVStart = harness.startRegistration(secret)
        try harness.finishRegistration(secret, noUVStart, noUV).expectError(401, "user_passkey_invalid")
        // A failed attempt consumed the registration.
        try harness.finishRegistration(secret, noUVStart, SoftwareAuthenticator()).expectError(404, "user_passkey_not_found")

        let pending = try #require(harness.startRegistration(secret).object["passkeyId"] as? String)
        harness.send(.PUT, "/v1/account/passkeys/\(pending)/verification", headers: auth).expectError(400, "general_argument_invalid")
        harness.send(.PUT, "/v1/account/passkeys/\(pending)/verification", json: #"{"credential":"text"}"#, headers: auth)
            .expectError(400, "general_argument_invalid")
        harness.send(.PUT, "/v1/account/passkeys/\(pending)/verification", json: #"{"credential":{"id":"x"}}"#, headers: auth)
            .expectError(401, "user_passkey_invalid")
        // Pending registrations never show as passkeys.
        #expect(harness.send(.GET, "/v1/account/passkeys", headers: auth).object["total"] as? Int == 0)
        harness.send(.PATCH, "/v1/account/passkeys/\(pending)", json: #"{"name":"x"}"#, headers: auth).expectError(404, "user_passkey_not_found")
        harness.send(.PATCH, "/v1/account/passkeys/\(pending)", json: #"{}"#, headers: auth).expectError(400, "general_argument_invalid")
    }

    @Test("sign-in: used, unknown and expired challenges, unknown credentials, blocked users, tokens, rates", arguments: Backend.allCases)
    func signInRules(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(secret, authenticator)

        harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"nope","credential":{}}"#).expectError(401, "user_invalid_token")
        harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"credential":{}}"#).expectError(400, "general_argument_invalid")
        // A challenge works once, even after a failed attempt.
        let start = harness.send(.POST, "/v1/account/tokens/passkey")
        let id = try #require(start.object["$id"] as? String)
        let stranger = SoftwareAuthenticator()
        _ = try stranger.create(PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: "shop.example", name: "x"), user: .init(id: "AQ", name: "x", displayName: "x"), challenge: "AAAAAAAAAAAAAAAAAAAAAA",
            pubKeyCredParams: [.init(alg: -7)]), origin: shopOrigin)
        let unknown = try stranger.get(try options(PublicKeyCredentialRequestOptionsJSON.self, start), origin: shopOrigin)
        harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"\#(id)","credential":\#(try jsonText(unknown))}"#)
            .expectError(401, "user_passkey_invalid")
        let genuine = try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, start), origin: shopOrigin)
        harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"\#(id)","credential":\#(try jsonText(genuine))}"#)
            .expectError(401, "user_invalid_token")

        let late = harness.send(.POST, "/v1/account/tokens/passkey")
        harness.clock.advance(by: 301)
        let lateAssertion = try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, late), origin: shopOrigin)
        harness.send(.PUT, "/v1/account/tokens/passkey",
                     json: #"{"challengeId":"\#(late.object["$id"] as? String ?? "")","credential":\#(try jsonText(lateAssertion))}"#)
            .expectError(401, "user_invalid_token")
        try harness.signIn(authenticator, origin: "https://evil.example").expectError(401, "user_passkey_invalid")

        // Tokens: one minute, once, for their own user only.
        let token = try #require(try harness.signIn(authenticator).object["secret"] as? String)
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"bob","secret":"\#(token)"}"#).expectError(401, "user_invalid_token")
        let token2 = try #require(try harness.signIn(authenticator).object["secret"] as? String)
        harness.clock.advance(by: 61)
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(token2)"}"#).expectError(401, "user_invalid_token")
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice"}"#).expectError(400, "general_argument_invalid")
        let guestSession = try harness.signIn(authenticator)
        let guestToken = try #require(guestSession.object["secret"] as? String)
        let session = harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(guestToken)"}"#)
        #expect(session.status == 201 && session.object["secret"] as? String == "" && session.response.headers.values("Set-Cookie").count == 2)

        // The owner is blocked: the credential verifies, the sign-in is refused; tokens from before are refused too.
        let before = try #require(try harness.signIn(authenticator, headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        try harness.sesame.store.users.setStatus(projectID: harness.projectID, id: "alice", status: UserRecord.blocked, at: Date())
        try harness.signIn(authenticator, headers: [("X-Appwrite-Key", harness.key)]).expectError(403, "user_blocked")
        harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(before)"}"#).expectError(403, "user_blocked")

        // 10 starts per IP per hour for guests; API keys are exempt.
        harness.clock.advance(by: 3600)
        let reset = String(Int(harness.clock.now().timeIntervalSince1970 / 3600 + 1) * 3600)
        for attempt in 1...10 {
            let start = harness.send(.POST, "/v1/account/tokens/passkey")
            #expect(start.status == 201)
            let headers = start.response.headers
            #expect(headers["X-RateLimit-Limit"] == "10" && headers["X-RateLimit-Remaining"] == String(10 - attempt)
                && headers["X-RateLimit-Reset"] == reset)
        }
        let refused = harness.send(.POST, "/v1/account/tokens/passkey")
        refused.expectError(429, "general_rate_limit_exceeded")
        #expect(refused.response.headers["X-RateLimit-Remaining"] == "0" && refused.response.headers["X-RateLimit-Reset"] == reset)
        let keyed = harness.send(.POST, "/v1/account/tokens/passkey", headers: [("X-Appwrite-Key", harness.key)])
        #expect(keyed.status == 201 && keyed.response.headers["X-RateLimit-Limit"] == nil)
    }

    @Test("20 parallel finishes of one sign-in challenge yield exactly one token", arguments: Backend.allCases)
    func parallelFinishes(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(secret, authenticator)
        let keyed = [("X-Appwrite-Key", harness.key)]
        let start = harness.send(.POST, "/v1/account/tokens/passkey", headers: keyed)
        let id = try #require(start.object["$id"] as? String)
        let body = #"{"challengeId":"\#(id)","credential":\#(try jsonText(try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, start), origin: shopOrigin)))}"#
        let statuses = Mutex<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<20 {
            group.enter()
            Thread {
                let status = harness.send(.PUT, "/v1/account/tokens/passkey", json: body, headers: keyed).status
                statuses.withLock { $0.append(status) }
                group.leave()
            }.start()
        }
        group.wait()
        let all = statuses.withLock { $0 }
        #expect(all.filter { $0 == 201 }.count == 1 && all.filter { $0 == 401 }.count == 19, "\(all)")
    }

    @Test("20 parallel registration starts for one user never pass the limit of 10 passkeys", arguments: Backend.allCases)
    func parallelRegistrations(backend: Backend) throws {
        let harness = try Harness(backend)
        let first = try harness.signUpAndIn()
        for _ in 0..<5 { try harness.registerPasskey(first, SoftwareAuthenticator()) }
        // A new hour, so the hourly rate (10) is not what stops them: 5 passkeys leave room for exactly 5 more.
        harness.clock.advance(by: 3600)
        let secret = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                               headers: [("X-Appwrite-Key", harness.key)]).object["secret"] as? String)
        let statuses = Mutex<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<20 {
            group.enter()
            Thread {
                let status = harness.startRegistration(secret).status
                statuses.withLock { $0.append(status) }
                group.leave()
            }.start()
        }
        group.wait()
        let all = statuses.withLock { $0 }
        // The rest are over the limit (400), or over the hourly rate when they passed the limit's early check together (429).
        #expect(all.filter { $0 == 201 }.count == 5 && all.allSatisfy { [201, 400, 429].contains($0) }, "\(all.sorted())")
        #expect(try harness.sesame.store.credentials.count(userID: "alice")
            + harness.sesame.store.challenges.countActive(userID: "alice", purpose: "registration", now: harness.clock.now()) == 10)
    }

    @Test("requests from http://localhost run under the localhost relying party when the project has a localhost web platform")
    func localhost() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let origin = "http://localhost:5173"
        // Without a localhost web platform, a browser on localhost is not one of the project's origins.
        harness.startRegistration(secret, origin: origin).expectError(403, "general_unknown_origin")
        _ = try harness.sesame.projects.addPlatform(projectID: harness.projectID, .web(hostname: "localhost"))
        let start = harness.startRegistration(secret, origin: origin)
        #expect(try options(PublicKeyCredentialCreationOptionsJSON.self, start).rp.id == "localhost")
        let authenticator = SoftwareAuthenticator()
        let finish = try harness.finishRegistration(secret, start, authenticator, origin: origin, sendOrigin: true)
        #expect(finish.status == 200, "\(finish.text)")
        // A localhost passkey signs in on localhost only.
        #expect(try harness.signIn(authenticator, headers: [("Origin", origin)], origin: origin).status == 201)
        let production = harness.send(.POST, "/v1/account/tokens/passkey")
        #expect(throws: (any Error).self) {
            try authenticator.get(try options(PublicKeyCredentialRequestOptionsJSON.self, production), origin: shopOrigin)
        }
    }
}
