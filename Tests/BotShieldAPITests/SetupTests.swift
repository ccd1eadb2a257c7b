import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// The hosted setup page's calls (`/app/api/*`, spec §2.8) over loopback: create an ID, add a passkey, sign out and in,
/// and every refusal with its generic code (the reason goes to the metrics only).
@Suite struct SetupTests {
    /// What the hosted pages' browser sends: its origin, and the setup cookie once it has one.
    struct Page {
        let harness: InlineHarness
        var cookie: String?
        var origin: String? = InlineHarness.appURL
        var forwardedProto: String?

        init(_ harness: InlineHarness) { self.harness = harness }

        var headers: [String: String] {
            var headers: [String: String] = [:]
            if let origin { headers["Origin"] = origin }
            if let cookie { headers["Cookie"] = "\(SetupRouteNames.cookie)=\(cookie)" }
            if let forwardedProto { headers["X-Forwarded-Proto"] = forwardedProto }
            return headers
        }

        func post(_ path: String, _ body: [String: Any] = [:]) async throws -> HTTPReply {
            try await harness.post("/app/api/\(path)", body, headers: headers)
        }

        func account() async throws -> HTTPReply {
            try await harness.send("GET", "/app/api/account", body: nil, headers: headers)
        }

        /// Starts a registration at `start`, answers it with `authenticator` from `origin` and finishes it at `finish`.
        func register(_ start: String, _ finish: String, authenticator: SoftwareAuthenticator, origin: String = InlineHarness.appURL) async throws
            -> HTTPReply
        {
            let started = try await post(start)
            #expect(started.status == 200, "\(started)")
            let payload = try #require(started.data)
            let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                   from: JSONSerialization.data(withJSONObject: try #require(payload["options"])))
            let response = try JSONSerialization.jsonObject(with: JSONEncoder().encode(try authenticator.create(options, origin: origin)))
            return try await post(finish, ["challenge_id": try #require(payload["challenge_id"] as? String), "response": response])
        }

        /// Signs in with `authenticator`'s passkey; `tamper` changes the answer first.
        func signIn(authenticator: SoftwareAuthenticator, tamper: ([String: Any]) throws -> [String: Any] = { $0 }) async throws -> HTTPReply {
            let started = try await post("sign-in/options")
            let payload = try #require(started.data, "\(started)")
            let answer = try harness.assert(payload, origin: InlineHarness.appURL, using: authenticator)
            return try await post("sign-in", ["challenge_id": try #require(payload["challenge_id"] as? String), "response": try tamper(answer)])
        }

        /// The session secret a reply sets.
        static func cookie(of reply: HTTPReply) -> String? {
            guard let header = reply.header("Set-Cookie"), header.hasPrefix(SetupRouteNames.cookie + "=") else { return nil }
            let value = header.dropFirst(SetupRouteNames.cookie.count + 1).prefix { $0 != ";" }
            return value.isEmpty ? nil : String(value)
        }
    }

    enum SetupRouteNames {
        static let cookie = "sesame_app_session"
    }

    static func series(_ ceremony: String, _ outcome: String, _ reason: String) -> String {
        #"sesame_ceremonies_total{face="setup",ceremony="\#(ceremony)",outcome="\#(outcome)",reason="\#(reason)"}"#
    }

    static func expectCount(_ harness: InlineHarness, _ series: String, _ expected: Int, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        try await InlineCeremonyReasonTests.expectCount(harness, series, expected, sourceLocation: sourceLocation)
    }

    static func expectError(_ reply: HTTPReply, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == status && reply.error?["code"] as? String == code && reply.error?["statusCode"] as? Int == status,
                "\(reply)", sourceLocation: sourceLocation)
        #expect(Set(reply.error?.keys.map { $0 } ?? []) == ["statusCode", "code", "message"], "\(reply)", sourceLocation: sourceLocation)
    }

    @Test("Create your ID: the creation options of §2.8, then the person, the passkey and a 10-minute HttpOnly session; inline uses it",
          arguments: Backend.allCases)
    func createID(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        var page = Page(harness)
        let started = try await page.post("id/options")
        #expect(started.status == 200 && started.header("Cache-Control") == "no-store", "\(started)")
        let options = try #require(started.data?["options"] as? [String: Any])
        #expect(options["rp"] as? [String: String] == ["id": InlineHarness.rpID, "name": "Sesame ID"])
        let user = try #require(options["user"] as? [String: String])
        #expect(try Base64URL.decode(try #require(user["id"])).count == 32)
        let name = try #require(user["name"])
        #expect(user["displayName"] == name && name.wholeMatch(of: /Sesame ID •[0-9a-f]{4}/) != nil, "\(user)")
        #expect((options["pubKeyCredParams"] as? [[String: Any]])?.compactMap { $0["alg"] as? Int } == [-7, -257])
        let selection = try #require(options["authenticatorSelection"] as? [String: Any])
        #expect(selection["residentKey"] as? String == "required" && selection["userVerification"] as? String == "required")
        #expect((options["excludeCredentials"] as? [Any])?.isEmpty == true)
        #expect(options["attestation"] as? String == "none" && options["timeout"] as? Int == 60_000)

        let device = SoftwareAuthenticator()
        let created = try await page.register("id/options", "id", authenticator: device)
        #expect(created.status == 200, "\(created)")
        let setCookie = try #require(created.header("Set-Cookie"))
        #expect(setCookie.hasSuffix("; Max-Age=600; Path=/app; HttpOnly; SameSite=Lax") && !setCookie.contains("Secure"), "\(setCookie)")
        page.cookie = Page.cookie(of: created)
        let idName = try #require(created.data?["name"] as? String)
        #expect(idName.wholeMatch(of: /Sesame ID •[0-9a-f]{4}/) != nil && (created.data?["passkeys"] as? [Any])?.count == 1, "\(created)")
        try await Self.expectCount(harness, Self.series("registration", "success", ""), 1)

        let account = try await page.account()
        #expect(account.status == 200 && account.data?["name"] as? String == idName, "\(account)")
        // The person: a user of the ID project with no email, named by the ID, with the passkey.
        let people = try harness.sesame.users.list(projectID: harness.projectID)
        let person = try #require(people.first)
        #expect(people.count == 1 && person.email == nil && person.name == idName && !person.hasPassword)
        #expect(try harness.sesame.passkeys.list(userID: person.id).count == 1)

        // Inline verification now runs the passkey made here.
        try harness.link("acct_1", to: person.id)
        let requestID = try #require(try await harness.createRequest(ref: "acct_1")["request_id"] as? String)
        let inline = try #require(try await harness.options(requestID).data)
        let answer = try harness.assert(inline, origin: InlineHarness.appURL, using: device)
        let verified = try await harness.complete(requestID, challengeID: try #require(inline["challenge_id"] as? String), response: answer)
        #expect(verified.outcome.outcome == "verified", "\(verified)")
    }

    @Test("add a passkey (the existing one excluded), sign out, sign back in with either passkey", arguments: Backend.allCases)
    func addSignOutSignIn(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        var page = Page(harness)
        let laptop = SoftwareAuthenticator(), phone = SoftwareAuthenticator()
        let created = try await page.register("id/options", "id", authenticator: laptop)
        let cookie: String = try #require(Page.cookie(of: created))
        page.cookie = cookie

        let addStart = try await page.post("passkeys/options")
        let options = try #require(addStart.data?["options"] as? [String: Any])
        let excluded = try #require(options["excludeCredentials"] as? [[String: Any]])
        #expect(excluded.count == 1 && excluded[0]["id"] as? String == laptop.credentials(rpID: InlineHarness.rpID).first.map { Base64URL.encode($0.id) })
        #expect((options["user"] as? [String: String])?["name"] == created.data?["name"] as? String)
        // The laptop holds an excluded credential: it refuses; the phone adds the second passkey.
        #expect(throws: SoftwareAuthenticatorError.self) {
            _ = try laptop.create(JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: JSONSerialization.data(withJSONObject: options)),
                                  origin: InlineHarness.appURL)
        }
        let added = try await page.register("passkeys/options", "passkeys", authenticator: phone)
        #expect(added.status == 200 && (added.data?["passkeys"] as? [Any])?.count == 2, "\(added)")

        let signedOut = try await page.post("sign-out")
        #expect(signedOut.status == 200 && signedOut.header("Set-Cookie")?.hasPrefix("\(SetupRouteNames.cookie)=; Max-Age=0; Path=/app") == true,
                "\(signedOut)")
        Self.expectError(try await page.account(), 401, "session_required")

        for device in [laptop, phone] {
            let signedIn = try await page.signIn(authenticator: device)
            #expect(signedIn.status == 200 && (signedIn.data?["passkeys"] as? [Any])?.count == 2, "\(signedIn)")
            var again = page
            again.cookie = Page.cookie(of: signedIn)
            #expect(try await again.account().status == 200)
        }
        try await Self.expectCount(harness, Self.series("authentication", "success", ""), 2)
    }

    @Test("behind HTTPS (X-Forwarded-Proto) the setup cookie is Secure; SameSite=None")
    func secureCookie() async throws {
        let harness = try InlineHarness(.sqlite)
        var page = Page(harness)
        page.forwardedProto = "https"
        let created = try await page.register("id/options", "id", authenticator: SoftwareAuthenticator())
        #expect(created.header("Set-Cookie")?.hasSuffix("; Path=/app; HttpOnly; Secure; SameSite=None") == true, "\(created)")
    }

    @Test("bad, expired and ended sessions: 401 session_required", arguments: Backend.allCases)
    func badSessions(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        var page = Page(harness)
        Self.expectError(try await page.account(), 401, "session_required")
        Self.expectError(try await page.post("passkeys/options"), 401, "session_required")
        for garbage in ["nonsense", "sesame_ss_" + String(repeating: "A", count: 43), String(repeating: "x", count: 3000)] {
            page.cookie = garbage
            Self.expectError(try await page.account(), 401, "session_required")
            Self.expectError(try await page.post("passkeys", ["challenge_id": "x", "response": [:]]), 401, "session_required")
        }
        let created = try await page.register("id/options", "id", authenticator: SoftwareAuthenticator())
        page.cookie = Page.cookie(of: created)
        #expect(try await page.account().status == 200)
        // A session of the account API (another cookie) is not a setup session.
        var appwrite = page
        appwrite.cookie = nil
        Self.expectError(try await appwrite.harness.send("GET", "/app/api/account", body: nil,
                                                         headers: ["Cookie": "a_session_default=\(page.cookie ?? "")"]), 401, "session_required")
        // Ten minutes later the session is over.
        harness.clock.advance(by: SetupService.sessionLifetime + 1)
        Self.expectError(try await page.account(), 401, "session_required")
        Self.expectError(try await page.post("passkeys/options"), 401, "session_required")
    }

    @Test("another origin, or none: 403 origin_not_allowed on every call that acts; an answer made on another origin: passkey_invalid",
          arguments: Backend.allCases)
    func wrongOrigin(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        var page = Page(harness)
        for origin in ["https://evil.example", "null", nil] as [String?] {
            page.origin = origin
            for path in ["id/options", "id", "sign-in/options", "sign-in", "passkeys/options", "passkeys", "sign-out"] {
                Self.expectError(try await page.post(path), 403, "origin_not_allowed")
            }
        }
        page.origin = InlineHarness.appURL
        let refused = try await page.register("id/options", "id", authenticator: SoftwareAuthenticator(), origin: "https://evil.example")
        Self.expectError(refused, 400, "passkey_invalid")
        #expect(!refused.text.contains("origin_mismatch"))
        try await Self.expectCount(harness, Self.series("registration", "failure", "origin_mismatch"), 1)
        #expect(try harness.sesame.users.list(projectID: harness.projectID).isEmpty, "nothing is written")
    }

    @Test("a reused or expired challenge: challenge_expired; a tampered assertion: passkey_invalid; a malformed body: invalid_request",
          arguments: Backend.allCases)
    func refusedCeremonies(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        var page = Page(harness)
        let device = SoftwareAuthenticator()

        // Reused: the same creation answered twice.
        let started = try await page.post("id/options")
        let payload = try #require(started.data)
        let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(payload["options"])))
        let response = try JSONSerialization.jsonObject(with: JSONEncoder().encode(try device.create(options, origin: InlineHarness.appURL)))
        let body: [String: Any] = ["challenge_id": try #require(payload["challenge_id"] as? String), "response": response]
        let first = try await page.post("id", body)
        #expect(first.status == 200, "\(first)")
        Self.expectError(try await page.post("id", body), 400, "challenge_expired")
        try await Self.expectCount(harness, Self.series("registration", "failure", "challenge_expired"), 1)
        #expect(try harness.sesame.users.list(projectID: harness.projectID).count == 1)
        page.cookie = Page.cookie(of: first)

        // Reused on the sign-in and on adding a passkey.
        let signIn = try await page.post("sign-in/options")
        let signInPayload = try #require(signIn.data)
        let answer = try harness.assert(signInPayload, origin: InlineHarness.appURL, using: device)
        let signInBody: [String: Any] = ["challenge_id": try #require(signInPayload["challenge_id"] as? String), "response": answer]
        #expect(try await page.post("sign-in", signInBody).status == 200)
        Self.expectError(try await page.post("sign-in", signInBody), 400, "challenge_expired")
        let phone = SoftwareAuthenticator()
        let add = try #require(try await page.post("passkeys/options").data)
        let addOptions = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                  from: JSONSerialization.data(withJSONObject: try #require(add["options"])))
        let addBody: [String: Any] = [
            "challenge_id": try #require(add["challenge_id"] as? String),
            "response": try JSONSerialization.jsonObject(with: JSONEncoder().encode(try phone.create(addOptions, origin: InlineHarness.appURL))),
        ]
        #expect(try await page.post("passkeys", addBody).status == 200)
        Self.expectError(try await page.post("passkeys", addBody), 400, "challenge_expired")

        // Tampered: one signature byte flipped.
        let tampered = try await page.signIn(authenticator: device) { try InlineHarness.flippingSignature($0) }
        Self.expectError(tampered, 400, "passkey_invalid")
        #expect(!tampered.text.contains("signature") && tampered.header("Set-Cookie") == nil, "\(tampered)")
        try await Self.expectCount(harness, Self.series("authentication", "failure", "invalid_signature"), 1)

        // Expired: answered after the challenge's 5 minutes.
        let late = try #require(try await page.post("sign-in/options").data)
        let lateAnswer = try harness.assert(late, origin: InlineHarness.appURL, using: device)
        harness.clock.advance(by: CeremonyEngine.challengeLifetime + 1)
        Self.expectError(try await page.post("sign-in", ["challenge_id": try #require(late["challenge_id"] as? String), "response": lateAnswer]),
                         400, "challenge_expired")

        // Malformed bodies, and a body that is not JSON.
        for bad in [[:], ["challenge_id": 7, "response": [:]], ["challenge_id": "x"], ["response": [:]],
                    ["challenge_id": "\u{0}a", "response": lateAnswer]] as [[String: Any]] {
            Self.expectError(try await page.post("sign-in", bad), 400, "invalid_request")
            Self.expectError(try await page.post("id", bad), 400, "invalid_request")
            Self.expectError(try await page.post("passkeys", bad), 400, "invalid_request")
        }
        let notJSON = try await harness.send("POST", "/app/api/sign-in", body: Data("[1,".utf8), headers: page.headers)
        Self.expectError(notJSON, 400, "invalid_request")
        let wrongType = try await harness.send("POST", "/app/api/id", body: Data("challenge_id=x".utf8), headers: page.headers,
                                               contentType: "text/plain")
        #expect(wrongType.status == 415 && wrongType.error?["statusCode"] as? Int == 415, "\(wrongType)")
    }

    @Test("the same credential registered twice: 409 passkey_exists, and the second person is not written", arguments: Backend.allCases)
    func passkeyExists(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let page = Page(harness)
        var fixture = CeremonyFixture()
        (fixture.rpID, fixture.origin) = (InlineHarness.rpID, InlineHarness.appURL)
        func create() async throws -> HTTPReply {
            let started = try #require(try await page.post("id/options").data)
            let options = try #require(started["options"] as? [String: Any])
            fixture.challenge = try Base64URL.decode(try #require(options["challenge"] as? String))
            let response = try JSONSerialization.jsonObject(with: Data(CeremonyFixture.json(fixture.registration())))
            return try await page.post("id", ["challenge_id": try #require(started["challenge_id"] as? String), "response": response])
        }
        #expect(try await create().status == 200)
        let again = try await create()
        Self.expectError(again, 409, "passkey_exists")
        #expect(again.header("Set-Cookie") == nil)
        #expect(try harness.sesame.users.list(projectID: harness.projectID).count == 1)
    }

    @Test("an eleventh passkey: 400 limit_reached; an eleventh new ID from one address in an hour: 429 too_many_requests")
    func limits() async throws {
        let harness = try InlineHarness(.sqlite)
        var page = Page(harness)
        let created = try await page.register("id/options", "id", authenticator: SoftwareAuthenticator())
        page.cookie = Page.cookie(of: created)
        for _ in 1..<PasskeyService.maximumPerUser {
            #expect(try await page.register("passkeys/options", "passkeys", authenticator: SoftwareAuthenticator()).status == 200)
        }
        Self.expectError(try await page.post("passkeys/options"), 400, "limit_reached")
        let account = try await page.account()
        #expect((account.data?["passkeys"] as? [Any])?.count == PasskeyService.maximumPerUser, "\(account)")

        // One new ID so far from 127.0.0.1: nine more starts pass, the eleventh is refused.
        for _ in 1..<PasskeyService.attemptsPerHour { #expect(try await page.post("id/options").status == 200) }
        let refused = try await page.post("id/options")
        Self.expectError(refused, 429, "too_many_requests")
        #expect(refused.header("Retry-After") == nil || Int(refused.header("Retry-After") ?? "") != nil)
    }

    @Test("a server without the ID project: the setup calls are 404 not_configured; the page still loads")
    func notConfigured() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-setup-\(UUID().uuidString)")
        let application = SesameApplication(sesame: Sesame(store: try Store.open("sqlite:\(folder.path)/db"),
                                                           masterKeys: MasterKeyring(current: .generate())), log: nil)
        let origin = InlineConfiguration().appOrigin
        for path in ["/app/api/id/options", "/app/api/sign-in/options"] {
            let response = application.respond(to: HTTPRequest(method: .POST, path: path, headers: HTTPHeaders([("Origin", origin)]),
                                                               remoteAddress: "127.0.0.1"))
            let error = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect(response.status == 404 && error?["code"] as? String == "not_configured", "\(path)")
        }
        let account = application.respond(to: HTTPRequest(method: .GET, path: "/app/api/account", headers: HTTPHeaders([("Cookie", "sesame_app_session=x")]),
                                                          remoteAddress: "127.0.0.1"))
        #expect(account.status == 404)
        #expect(application.respond(to: HTTPRequest(method: .GET, path: "/app/account/passkey", remoteAddress: "127.0.0.1")).status == 200)
    }
}
