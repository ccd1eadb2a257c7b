import Foundation
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn
@testable import SesameCore

@Suite struct PasswordTests {
    @Test("a hash verifies its password only, and two hashes of one password differ (salted)")
    func hashAndVerify() {
        let hash = Passwords.hash("correct horse")
        #expect(hash.hasPrefix("scrypt$15$8$1$"))
        #expect(Passwords.verify("correct horse", against: hash))
        #expect(!Passwords.verify("correct horsf", against: hash))
        #expect(!Passwords.verify("", against: hash))
        #expect(Passwords.hash("correct horse") != hash)
    }

    @Test("malformed or hostile stored hashes never verify", arguments: [
        "", "scrypt", "scrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA", "bcrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "scrypt$30$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "scrypt$15$99$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "scrypt$15$8$1$!!!$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "scrypt$15$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA",
    ])
    func malformed(_ stored: String) {
        #expect(!Passwords.verify("anything", against: stored))
    }
}

@Suite struct AccountServiceTests {
    @Test("users: create with email and password, read back, sign in; bad input and duplicates refused", arguments: Backend.allCases)
    func users(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let user = try sesame.users.create(projectID: project.id, id: "alice", email: "Alice@Example.org", password: "password123", name: "Alice")
        #expect(user.email == "alice@example.org" && user.name == "Alice" && user.isActive && user.hasPassword && user.userHandle.count == 32)
        #expect(try sesame.users.get(projectID: project.id, id: "alice") == user)
        let generated = try sesame.users.create(projectID: project.id, id: "unique()", email: "bob@example.org", password: "password123", name: nil)
        #expect(generated.id.count == 20 && generated.name == "")

        #expect(try sesame.users.authenticate(projectID: project.id, email: "ALICE@example.org", password: "password123").id == "alice")
        #expect(throws: SesameError.code(.invalidCredentials)) {
            try sesame.users.authenticate(projectID: project.id, email: "alice@example.org", password: "password124")
        }
        #expect(throws: SesameError.code(.invalidCredentials)) {
            try sesame.users.authenticate(projectID: project.id, email: "nobody@example.org", password: "password123")
        }
        try sesame.store.users.setStatus(projectID: project.id, id: "alice", status: UserRecord.blocked, at: Date())
        #expect(throws: SesameError.code(.blocked)) {
            try sesame.users.authenticate(projectID: project.id, email: "alice@example.org", password: "password123")
        }

        #expect(throws: SesameError.code(.conflict)) {
            try sesame.users.create(projectID: project.id, id: "alice", email: "other@example.org", password: "password123", name: nil)
        }
        #expect(throws: SesameError.code(.conflict)) {
            try sesame.users.create(projectID: project.id, id: "carol", email: "ALICE@example.org", password: "password123", name: nil)
        }
        #expect(throws: SesameError.code(.notFound)) { try sesame.users.get(projectID: project.id, id: "nobody") }
        let bad: [(String?, String, String, String?)] = [
            ("-x", "c@example.org", "password123", nil), (String(repeating: "a", count: 37), "c@example.org", "password123", nil),
            ("a b", "c@example.org", "password123", nil), ("c", "not-an-email", "password123", nil), ("c", "c@localhost", "password123", nil),
            ("c", "c @example.org", "password123", nil), ("c", "c@example.org", "short", nil),
            ("c", "c@example.org", String(repeating: "p", count: 257), nil), ("c", "c@example.org", "password123", String(repeating: "n", count: 129)),
        ]
        for (id, email, password, name) in bad {
            #expect(throws: SesameError.code(.invalidArgument)) {
                try sesame.users.create(projectID: project.id, id: id, email: email, password: password, name: name)
            }
        }
    }

    @Test("a token exchange uses the token up in the same transaction as the session: once, for its user, not for a blocked one",
          arguments: Backend.allCases)
    func tokenExchange(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        _ = try sesame.users.create(projectID: project.id, id: "alice", email: nil, password: nil, name: nil)
        _ = try sesame.users.create(projectID: project.id, id: "bob", email: nil, password: nil, name: nil)
        let client = ClientInfo(ip: "127.0.0.1", userAgent: "tests")
        func mint() throws -> String { try sesame.sessions.createToken(projectID: project.id, userID: "alice", length: nil, lifetime: nil).secret }
        func exchange(_ secret: String, as user: String = "alice") throws -> Session {
            try sesame.sessions.createFromToken(projectID: project.id, userID: user, secret: secret, client: client).session
        }
        let secret = try mint()
        let session = try exchange(secret)
        #expect(session.userID == "alice" && session.provider == "token")
        #expect(try sesame.sessions.list(projectID: project.id, userID: "alice").map(\.id) == [session.id])
        #expect(throws: SesameError.code(.expired)) { try exchange(secret) }
        // Another user's name burns the token all the same.
        let misnamed = try mint()
        #expect(throws: SesameError.code(.expired)) { try exchange(misnamed, as: "bob") }
        #expect(throws: SesameError.code(.expired)) { try exchange(misnamed) }
        // A blocked user gets no session, and the token is gone when they are unblocked.
        let blockedSecret = try mint()
        _ = try sesame.users.setStatus(projectID: project.id, id: "alice", active: false)
        #expect(throws: SesameError.code(.blocked)) { try exchange(blockedSecret) }
        _ = try sesame.users.setStatus(projectID: project.id, id: "alice", active: true)
        #expect(throws: SesameError.code(.expired)) { try exchange(blockedSecret) }
        #expect(try sesame.sessions.list(projectID: project.id, userID: "alice").count == 1)
    }

    @Test("deleting a user drops the passkey sign-in tokens held for them (in memory on SQLite, rows on PostgreSQL)", arguments: Backend.allCases)
    func userDeletionDropsHeldTokens(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        for user in ["alice", "bob"] {
            _ = try sesame.users.create(projectID: project.id, id: user, email: nil, password: nil, name: nil)
            try sesame.store.transaction { transaction throws(StoreError) in
                try sesame.store.holdSignInToken(TokenRecord(id: user, projectID: project.id, userID: user, secretHash: Array(user.utf8),
                                                             kind: "passkey", createdAt: Date(), expiresAt: Date().addingTimeInterval(60)),
                                                 in: transaction)
            }
        }
        func held() throws -> Int64 {
            Int64(sesame.store.pendingTokens?.count ?? 0)
                + (try #require(try sesame.store.database.query("SELECT COUNT(*) AS n FROM tokens", []).first).integer("n"))
        }
        #expect(try held() == 2)
        try sesame.users.delete(projectID: project.id, id: "bob")
        #expect(try held() == 1)
        #expect(sesame.store.pendingTokens?.take(projectID: project.id, secretHash: Array("bob".utf8)) == nil)
    }

    @Test("sessions: sign in, authenticate by secret, list, delete, expiry, recency", arguments: Backend.allCases)
    func sessions(backend: Backend) throws {
        let clock = ManualClock()
        let sesame = try backend.makeSesame(clock: clock)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        _ = try sesame.users.create(projectID: project.id, id: "alice", email: "alice@example.org", password: "password123", name: nil)
        let client = ClientInfo(ip: "127.0.0.1", userAgent: "tests")
        let (session, secret) = try sesame.sessions.signIn(projectID: project.id, email: "alice@example.org", password: "password123",
                                                           lifetime: nil, client: client)
        #expect(session.provider == "email" && session.factors == ["password"] && session.userID == "alice")
        #expect(session.expiresAt == session.createdAt.addingTimeInterval(SessionService.defaultLifetime))
        #expect(secret.hasPrefix(SessionService.secretPrefix))
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: secret)?.session == session)
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: secret + "x") == nil)
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: "garbage") == nil)
        #expect(try sesame.sessions.authenticate(projectID: "other", secret: secret) == nil)

        #expect(session.isRecentlyAuthenticated(at: clock.now().addingTimeInterval(600)))
        #expect(!session.isRecentlyAuthenticated(at: clock.now().addingTimeInterval(601)))

        let (short, shortSecret) = try sesame.sessions.signIn(projectID: project.id, email: "alice@example.org", password: "password123",
                                                              lifetime: 60, client: client)
        #expect(try sesame.sessions.list(projectID: project.id, userID: "alice").map(\.id).sorted() == [session.id, short.id].sorted())
        clock.advance(by: 61)
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: shortSecret) == nil)
        #expect(try sesame.sessions.list(projectID: project.id, userID: "alice").map(\.id) == [session.id])
        #expect(throws: SesameError.code(.notFound)) { try sesame.sessions.get(projectID: project.id, userID: "alice", id: short.id) }
        for lifetime in [59.0, 60.5, SessionService.defaultLifetime + 1] {
            #expect(throws: SesameError.code(.invalidArgument)) {
                try sesame.sessions.signIn(projectID: project.id, email: "alice@example.org", password: "password123", lifetime: lifetime, client: client)
            }
        }
        #expect(throws: SesameError.code(.invalidCredentials)) {
            try sesame.sessions.signIn(projectID: project.id, email: "alice@example.org", password: "wrong-password", lifetime: nil, client: client)
        }

        try sesame.sessions.delete(projectID: project.id, userID: "alice", id: session.id)
        #expect(throws: SesameError.code(.notFound)) { try sesame.sessions.delete(projectID: project.id, userID: "alice", id: session.id) }
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: secret) == nil)

        // A blocked user's sessions stop working, and no new ones open.
        let (_, live) = try sesame.sessions.create(projectID: project.id, userID: "alice", provider: "server", factors: ["server"], client: client)
        try sesame.store.users.setStatus(projectID: project.id, id: "alice", status: UserRecord.blocked, at: clock.now())
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: live) == nil)
        #expect(throws: SesameError.code(.blocked)) {
            try sesame.sessions.create(projectID: project.id, userID: "alice", provider: "server", factors: ["server"], client: client)
        }
        #expect(throws: SesameError.code(.notFound)) {
            try sesame.sessions.create(projectID: project.id, userID: "nobody", provider: "server", factors: ["server"], client: client)
        }
    }
}

@Suite struct PasskeyRelyingPartyTests {
    @Test("origins come from platforms on the relying party's domain; localhost needs a localhost web platform")
    func relyingParty() throws {
        let sesame = try Backend.sqlite.makeSesame()
        var project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        // No platform yet: not "passkeys off" but a missing web platform, which the error names.
        let missing = try #require(throws: SesameError.self) { try sesame.passkeys.relyingParty(project, requestOrigin: nil) }
        #expect(missing.code == .noRelyingParty && missing.detail.contains("add a Web platform for shop.example"), "\(missing.debugDescription)")
        for platform: Platform in [.web(hostname: "other.example"), .web(hostname: "shop.example"), .web(hostname: "*.shop.example"),
                                   .web(hostname: "login.shop.example"), .apple(teamID: "ABCDE12345", bundleID: "com.shop.App")] {
            _ = try sesame.projects.addPlatform(projectID: project.id, platform)
        }
        project = try sesame.projects.get(project.id)
        let policy = try sesame.passkeys.relyingParty(project, requestOrigin: "http://localhost:5173")
        #expect(policy.id == "shop.example" && policy.requiresUserVerification)
        #expect(policy.origins == ["https://*.shop.example", "https://login.shop.example", "https://shop.example"])
        _ = try sesame.projects.addPlatform(projectID: project.id, .web(hostname: "localhost"))
        project = try sesame.projects.get(project.id)
        let local = try sesame.passkeys.relyingParty(project, requestOrigin: "http://localhost:5173")
        #expect(local.id == "localhost" && local.origins == ["http://localhost:5173"])
        #expect(try sesame.passkeys.relyingParty(project, requestOrigin: "http://127.0.0.1:5173").id == "shop.example")
        project = try sesame.projects.setAuthMethod(projectID: project.id, method: "passkey", enabled: false)
        #expect(throws: SesameError.code(.unsupported)) { try sesame.passkeys.relyingParty(project, requestOrigin: nil) }
    }
}

@Suite struct HousekeepingTests {
    @Test("a sweep removes expired sessions and tokens, challenges an hour after expiry, and ended rate windows", arguments: Backend.allCases)
    func sweep(backend: Backend) throws {
        let clock = ManualClock()
        let sesame = try backend.makeSesame(clock: clock)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        _ = try sesame.users.create(projectID: project.id, id: "alice", email: "alice@example.org", password: "password123", name: nil)
        let client = ClientInfo(ip: "127.0.0.1", userAgent: "")
        _ = try sesame.sessions.create(projectID: project.id, userID: "alice", provider: "server", factors: ["server"], lifetime: 60, client: client)
        let (_, live) = try sesame.sessions.create(projectID: project.id, userID: "alice", provider: "server", factors: ["server"], client: client)
        _ = try sesame.challenges.issue(projectID: project.id, purpose: "registration", lifetime: 300, userID: "alice")
        try sesame.store.tokens.create(TokenRecord(id: "t1", projectID: project.id, userID: "alice", secretHash: [1], kind: "passkey",
                                                   createdAt: clock.now(), expiresAt: clock.now().addingTimeInterval(60)))
        // A passkey sign-in's token, held in memory on SQLite.
        try sesame.store.transaction { transaction throws(StoreError) in
            try sesame.store.holdSignInToken(TokenRecord(id: "t2", projectID: project.id, userID: "alice", secretHash: [2], kind: "passkey",
                                                         createdAt: clock.now(), expiresAt: clock.now().addingTimeInterval(60)), in: transaction)
        }
        _ = try sesame.rateLimiter.hit("k", limit: 10, window: 3600)
        #expect(try sesame.housekeeping.sweep() == SweepResult(challenges: 0, sessions: 0, tokens: 0, rateLimitWindows: 0, verificationRequests: 0, grants: 0, webhookEvents: 0, verificationTokens: 0))
        clock.advance(by: 301)
        #expect(try sesame.housekeeping.sweep() == SweepResult(challenges: 0, sessions: 1, tokens: 2, rateLimitWindows: 0, verificationRequests: 0, grants: 0, webhookEvents: 0, verificationTokens: 0))
        clock.advance(by: 3600 * 2)
        #expect(try sesame.housekeeping.sweep() == SweepResult(challenges: 1, sessions: 0, tokens: 0, rateLimitWindows: 1, verificationRequests: 0, grants: 0, webhookEvents: 0, verificationTokens: 0))
        #expect(try sesame.sessions.authenticate(projectID: project.id, secret: live) != nil)
    }
}
