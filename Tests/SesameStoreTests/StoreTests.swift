import Foundation
import SesameStore
import Synchronization
import SesameTestSupport
import Testing

/// The same assertions against SQLite (a temp file per test) and PostgreSQL (a fresh database per test).
@Suite("Store on every backend")
struct StoreTests {
    // MARK: Migrations and opening

    @Test("migrations apply once; reopening is idempotent", arguments: Backend.allCases)
    func migrations(backend: Backend) throws {
        let url = try backend.makeURL()
        let store = try Store.open(url)
        try store.healthCheck()
        let versions = try store.database.query("SELECT version FROM schema_migrations ORDER BY version", [])
        #expect(try versions.map { try $0.integer("version") } == Array(1...Store.schemaVersion))
        try store.projects.create(Fixture.project())

        let reopened = try Store.open(url)
        #expect(try reopened.database.query("SELECT version FROM schema_migrations", []).count == Int(Store.schemaVersion))
        #expect(try reopened.projects.get(id: "p1") == Fixture.project())
    }

    @Test("concurrent starters migrate a fresh database safely", arguments: Backend.allCases)
    func concurrentMigrations(backend: Backend) throws {
        let url = try backend.makeURL()
        if backend == .sqlite {
            // The folder must exist before several openers race to create it.
            _ = try Store.open(url)
        }
        let failures = Mutex<[String]>([])
        runConcurrently(6) { _ in
            do {
                let store = try Store.open(url)
                try store.healthCheck()
            } catch {
                failures.withLock { $0.append(String(reflecting: error)) }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let store = try Store.open(url)
        #expect(try store.database.query("SELECT version FROM schema_migrations", []).count == Int(Store.schemaVersion))
    }

    @Test("a database from a newer build is refused", arguments: Backend.allCases)
    func newerSchema(backend: Backend) throws {
        let url = try backend.makeURL()
        let store = try Store.open(url)
        try store.database.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            [.integer(999), .text("future"), .integer(0)]
        )
        #expect(throws: StoreError.migrationFailed) { try Store.open(url) }
    }

    // MARK: Projects and platforms

    @Test("projects: create, get, list, update, delete, duplicate", arguments: Backend.allCases)
    func projects(backend: Backend) throws {
        let store = try backend.makeStore()
        let repo = store.projects
        try repo.create(Fixture.project("p1"))
        try repo.create(Fixture.project("p2", rpID: "other.example"))
        #expect(try repo.get(id: "p1") == Fixture.project("p1"))
        #expect(try repo.get(id: "missing") == nil)
        #expect(try repo.list().map(\.id) == ["p1", "p2"])
        #expect(throws: StoreError.conflict) { try repo.create(Fixture.project("p1")) }

        var changed = Fixture.project("p1", rpID: "new.example")
        changed.name = "Renamed"
        changed.authMethods = ["passkey": false]
        changed.updatedAt = t0.plus(seconds: 10)
        try repo.update(changed)
        #expect(try repo.get(id: "p1") == changed)
        #expect(throws: StoreError.notFound) { try repo.update(Fixture.project("nope")) }

        #expect(try repo.delete(id: "p2"))
        #expect(try !repo.delete(id: "p2"))
        #expect(try repo.list().map(\.id) == ["p1"])
    }

    @Test("attestation policy: stored as given, cleared with nil, kept by other updates; each change bumps the configuration version",
          arguments: Backend.allCases)
    func attestationPolicy(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        #expect(try store.projects.get(id: "p1")?.attestationPolicy == nil)
        let before = try store.configurationVersion.current()
        try store.projects.setAttestationPolicy(projectID: "p1", json: #"{"acceptNoneAttestation":false}"#, at: t0.plus(seconds: 5))
        let stored = try #require(try store.projects.get(id: "p1"))
        #expect(stored.attestationPolicy == #"{"acceptNoneAttestation":false}"#)
        #expect(stored.updatedAt == t0.plus(seconds: 5))
        let afterSet = try store.configurationVersion.current()
        #expect(afterSet > before)
        // An update of the other fields keeps the policy.
        var renamed = stored
        renamed.name = "Renamed"
        try store.projects.update(renamed)
        #expect(try store.projects.get(id: "p1")?.attestationPolicy == #"{"acceptNoneAttestation":false}"#)
        try store.projects.setAttestationPolicy(projectID: "p1", json: nil, at: t0.plus(seconds: 6))
        #expect(try store.projects.get(id: "p1")?.attestationPolicy == nil)
        #expect(try store.configurationVersion.current() > afterSet)
        #expect(throws: StoreError.notFound) { try store.projects.setAttestationPolicy(projectID: "nope", json: nil, at: t0) }
    }

    @Test("deleting a project cascades to everything it owns", arguments: Backend.allCases)
    func cascade(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user())
        try store.credentials.create(Fixture.credential())
        try store.challenges.create(Fixture.challenge())
        try store.platforms.add(PlatformRecord(id: "w", projectID: "p1", kind: "web", hostname: "a", createdAt: t0))
        try store.projects.delete(id: "p1")
        for table in ["users", "credentials", "challenges", "platforms"] {
            let row = try store.database.query("SELECT COUNT(*) AS n FROM \(table)", []).first
            #expect(try row?.integer("n") == 0, "\(table)")
        }
    }

    @Test("platforms: add, list, remove; missing project is notFound", arguments: Backend.allCases)
    func platforms(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        let web = PlatformRecord(id: "w1", projectID: "p1", kind: "web", name: "Site", hostname: "*.example.org", createdAt: t0)
        let android = PlatformRecord(
            id: "a1", projectID: "p1", kind: "android", packageName: "org.example.app",
            sha256Fingerprints: ["AB:CD", "EF:01"], createdAt: t0.plus(seconds: 1)
        )
        let apple = PlatformRecord(
            id: "i1", projectID: "p1", kind: "apple", teamID: "TEAM123", bundleID: "org.example.app",
            createdAt: t0.plus(seconds: 2)
        )
        for platform in [web, android, apple] { try store.platforms.add(platform) }
        #expect(try store.platforms.list(projectID: "p1") == [web, android, apple])
        #expect(throws: StoreError.conflict) { try store.platforms.add(web) }
        var orphan = web
        orphan.id = "w2"
        orphan.projectID = "missing"
        #expect(throws: StoreError.notFound) { try store.platforms.add(orphan) }
        #expect(try store.platforms.remove(projectID: "p1", id: "a1"))
        #expect(try !store.platforms.remove(projectID: "other", id: "w1"))
        #expect(try store.platforms.list(projectID: "p1").map(\.id) == ["w1", "i1"])
    }

    @Test("a ref's link and the linked person's passkeys on one relying party, oldest first, in one read; none unless the person is of the project and in the status",
          arguments: Backend.allCases)
    func linkWithPasskeys(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        try store.projects.create(Fixture.project("p2"))
        for (user, project) in [("u1", "p1"), ("u2", "p1"), ("u3", "p2")] { try store.users.create(Fixture.user(user, projectID: project)) }
        try store.credentials.create(Fixture.credential("c2", createdAt: t0.plus(seconds: 2)))
        try store.credentials.create(Fixture.credential("c1", createdAt: t0.plus(seconds: 1)))
        try store.credentials.create(Fixture.credential("c-other-rp", rpID: "other.example", createdAt: t0))
        try store.credentials.create(Fixture.credential("c3", projectID: "p2", userID: "u3", createdAt: t0))
        try store.partners.create(PartnerRecord(id: "org1", projectID: "p1", name: "Ticketz", createdAt: t0))
        for (ref, user) in [("ref1", "u1"), ("ref2", "u2"), ("ref3", "u3")] {
            try store.partners.createLink(PartnerLinkRecord(id: "l-\(ref)", partnerID: "org1", environment: "live", partnerUserRef: ref, userID: user,
                                                            createdAt: t0))
        }
        func find(_ ref: String, environment: String = "live", status: String = UserRecord.active) throws -> (String, [String])? {
            try store.partners.findLinkWithPasskeys(partnerID: "org1", environment: environment, partnerUserRef: ref, projectID: "p1",
                                                    rpID: "example.org", status: status).map { ($0.link.id, $0.passkeys.map(\.id)) }
        }
        #expect(try find("ref1")?.0 == "l-ref1" && find("ref1")?.1 == ["c1", "c2"])
        #expect(try store.partners.findLinkWithPasskeys(partnerID: "org1", environment: "live", partnerUserRef: "ref1", projectID: "p1",
                                                        rpID: "example.org", status: UserRecord.active)?.passkeys.first == store.credentials.get(id: "c1"))
        // A linked person without passkeys, or of another project: the link alone.
        #expect(try find("ref2")?.0 == "l-ref2" && find("ref2")?.1 == [])
        #expect(try find("ref3")?.0 == "l-ref3" && find("ref3")?.1 == [])
        // No link for the ref in this environment, or none at all.
        #expect(try find("ref1", environment: "test") == nil)
        #expect(try find("nobody") == nil)
        // A status the person is not in: the link alone.
        #expect(try store.users.setStatus(projectID: "p1", id: "u1", status: UserRecord.blocked, at: t0))
        #expect(try find("ref1")?.0 == "l-ref1" && find("ref1")?.1 == [])
        #expect(try find("ref1", status: UserRecord.blocked)?.1 == ["c1", "c2"])
    }

    // MARK: API keys

    @Test("API keys: create, find by hash, list, revoke, touch", arguments: Backend.allCases)
    func apiKeys(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        let key = APIKeyRecord(
            id: "k1", projectID: "p1", name: "server", secretHash: Array(repeating: 7, count: 32),
            scopes: ["users.read", "users.write"], createdAt: t0
        )
        try store.apiKeys.create(key)
        #expect(try store.apiKeys.find(secretHash: key.secretHash) == key)
        #expect(try store.apiKeys.find(secretHash: Array(repeating: 8, count: 32)) == nil)
        var sameHash = key
        sameHash.id = "k2"
        #expect(throws: StoreError.conflict) { try store.apiKeys.create(sameHash) }

        try store.apiKeys.touch(id: "k1", at: t0.plus(seconds: 5))
        #expect(try store.apiKeys.find(secretHash: key.secretHash)?.lastUsedAt == t0.plus(seconds: 5))

        #expect(try !store.apiKeys.revoke(projectID: "other", id: "k1", at: t0))
        #expect(try store.apiKeys.revoke(projectID: "p1", id: "k1", at: t0.plus(seconds: 6)))
        #expect(try !store.apiKeys.revoke(projectID: "p1", id: "k1", at: t0.plus(seconds: 7)))
        #expect(try store.apiKeys.find(secretHash: key.secretHash) == nil)
        let listed = try store.apiKeys.list(projectID: "p1")
        #expect(listed.count == 1)
        #expect(listed.first?.revokedAt == t0.plus(seconds: 6))
    }

    // MARK: Users

    @Test("users: create, find, update, status, conflicts", arguments: Backend.allCases)
    func users(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        try store.projects.create(Fixture.project("p2"))
        let alice = Fixture.user("u1", email: "alice@example.org")
        try store.users.create(alice)
        #expect(try store.users.get(projectID: "p1", id: "u1") == alice)
        #expect(try store.users.get(projectID: "p2", id: "u1") == nil)
        #expect(try store.users.findByEmail(projectID: "p1", email: "alice@example.org") == alice)
        #expect(try store.users.findByUserHandle(projectID: "p1", userHandle: alice.userHandle) == alice)
        #expect(try store.users.findByUserHandle(projectID: "p2", userHandle: alice.userHandle) == nil)

        // Email is unique per project, not globally; user handles are unique everywhere.
        #expect(throws: StoreError.conflict) { try store.users.create(Fixture.user("u2", email: "alice@example.org")) }
        try store.users.create(Fixture.user("u2", projectID: "p2", email: "alice@example.org"))
        var handleClash = Fixture.user("u3", projectID: "p2")
        handleClash.userHandle = alice.userHandle
        #expect(throws: StoreError.conflict) { try store.users.create(handleClash) }
        // Several users without email may coexist.
        try store.users.create(Fixture.user("u4"))
        try store.users.create(Fixture.user("u5"))
        #expect(throws: StoreError.notFound) { try store.users.create(Fixture.user("u6", projectID: "missing")) }

        #expect(try store.users.setStatus(projectID: "p1", id: "u1", status: UserRecord.blocked, at: t0.plus(seconds: 1)))
        #expect(try store.users.get(projectID: "p1", id: "u1")?.status == UserRecord.blocked)
        #expect(try !store.users.setStatus(projectID: "p1", id: "nope", status: UserRecord.blocked, at: t0))

        var renamed = try #require(try store.users.get(projectID: "p1", id: "u4"))
        renamed.email = "alice@example.org"
        #expect(throws: StoreError.conflict) { try store.users.update(renamed) }
        renamed.email = "dave@example.org"
        renamed.passwordHash = "$argon2id$v=19$..."
        #expect(try store.users.update(renamed))
        #expect(try store.users.findByEmail(projectID: "p1", email: "dave@example.org") == renamed)
        #expect(try store.users.list(projectID: "p1").map(\.id) == ["u1", "u4", "u5"])
        #expect(try store.users.delete(projectID: "p1", id: "u5"))
        #expect(try !store.users.delete(projectID: "p1", id: "u5"))
    }

    // MARK: Sessions

    @Test("sessions: create, find by hash or by user and ID while live, list, delete, cascade", arguments: Backend.allCases)
    func sessions(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        try store.projects.create(Fixture.project("p2"))
        try store.users.create(Fixture.user("u1"))
        try store.users.create(Fixture.user("u2"))
        func session(_ id: String, user: String = "u1", hash: UInt8, expires: Date = t0.plus(seconds: 3600)) -> SessionRecord {
            SessionRecord(id: id, projectID: "p1", userID: user, secretHash: Array(repeating: hash, count: 32), provider: "email",
                          factors: ["password"], ip: "127.0.0.1", userAgent: "test", createdAt: t0, updatedAt: t0,
                          expiresAt: expires, mfaUpdatedAt: id == "s2" ? t0.plus(seconds: 1) : nil)
        }
        let s1 = session("s1", hash: 1), s2 = session("s2", hash: 2), other = session("s3", user: "u2", hash: 3)
        try store.sessions.create(s1)
        try store.sessions.create(s2)
        try store.sessions.create(other)
        #expect(try store.sessions.find(projectID: "p1", secretHash: s1.secretHash, now: t0) == s1)
        #expect(try store.sessions.find(projectID: "p1", secretHash: s2.secretHash, now: t0)?.mfaUpdatedAt == t0.plus(seconds: 1))
        #expect(try store.sessions.find(projectID: "p2", secretHash: s1.secretHash, now: t0) == nil)
        #expect(try store.sessions.find(projectID: "p1", secretHash: s1.secretHash, now: t0.plus(seconds: 3600)) == nil)
        #expect(throws: StoreError.conflict) { try store.sessions.create(session("s4", hash: 1)) }
        #expect(throws: StoreError.conflict) { try store.sessions.create(session("s1", hash: 4)) }
        #expect(try store.sessions.get(projectID: "p1", userID: "u1", id: "s1", now: t0) == s1)
        #expect(try store.sessions.get(projectID: "p1", userID: "u2", id: "s1", now: t0) == nil)
        #expect(try store.sessions.get(projectID: "p2", userID: "u1", id: "s1", now: t0) == nil)
        #expect(try store.sessions.get(projectID: "p1", userID: "u1", id: "s1", now: t0.plus(seconds: 3600)) == nil)
        #expect(throws: StoreError.notFound) { try store.sessions.create(session("s5", user: "missing", hash: 5)) }
        #expect(try store.sessions.list(projectID: "p1", userID: "u1", now: t0).map(\.id) == ["s1", "s2"])

        #expect(try !store.sessions.delete(projectID: "p1", userID: "u2", id: "s1"))
        #expect(try store.sessions.delete(projectID: "p1", userID: "u1", id: "s1"))
        #expect(try store.sessions.list(projectID: "p1", userID: "u1", now: t0).map(\.id) == ["s2"])
        #expect(try store.sessions.deleteExpired(before: t0.plus(seconds: 3600)) == 2)
        try store.sessions.create(session("s6", user: "u2", hash: 6))
        #expect(try store.users.delete(projectID: "p1", id: "u2"))
        #expect(try store.sessions.find(projectID: "p1", secretHash: Array(repeating: 6, count: 32), now: t0) == nil)
    }

    @Test("JWT secrets: created once per project, the first candidate wins, also under concurrency", arguments: Backend.allCases)
    func jwtSecrets(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        let secrets = Mutex<Set<[UInt8]>>([])
        runConcurrently(8) { index in
            if let secret = try? store.sessions.jwtSecret(projectID: "p1", candidate: Array(repeating: UInt8(index), count: 32), now: t0) {
                secrets.withLock { _ = $0.insert(secret) }
            }
        }
        #expect(secrets.withLock { $0.count } == 1)
        let first = try #require(secrets.withLock { $0.first })
        #expect(try store.sessions.jwtSecret(projectID: "p1", candidate: Array(repeating: 99, count: 32), now: t0) == first)
        #expect(throws: StoreError.notFound) { try store.sessions.jwtSecret(projectID: "missing", candidate: [1], now: t0) }
    }

    // MARK: Passkey ceremonies and tokens

    @Test("registration challenges: relying party and name kept; the limit counts passkeys and live pending ones", arguments: Backend.allCases)
    func registrationChallenges(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user("u1"))
        var pending = Fixture.challenge("r1", purpose: ChallengeRecord.registrationPurpose, userID: "u1")
        pending.rpID = "example.org"
        pending.name = "Laptop"
        #expect(try store.challenges.createIfUnderLimit(pending, limit: 3))
        #expect(try store.challenges.get(id: "r1") == pending)
        try store.credentials.create(Fixture.credential("c1"))
        #expect(try store.challenges.createIfUnderLimit(Fixture.challenge("r2", purpose: ChallengeRecord.registrationPurpose, userID: "u1"), limit: 3))
        #expect(try !store.challenges.createIfUnderLimit(Fixture.challenge("r3", purpose: ChallengeRecord.registrationPurpose, userID: "u1"), limit: 3))
        // Expired pending registrations stop counting.
        var later = Fixture.challenge("r4", purpose: ChallengeRecord.registrationPurpose, userID: "u1", expiresAt: t0.plus(seconds: 900))
        later.createdAt = t0.plus(seconds: 300)
        #expect(try store.challenges.createIfUnderLimit(later, limit: 3))
        #expect(throws: StoreError.notFound) {
            try store.challenges.createIfUnderLimit(Fixture.challenge("r5", purpose: ChallengeRecord.registrationPurpose, userID: "nobody"), limit: 3)
        }
        #expect(throws: StoreError.conflict) {
            try store.challenges.createIfUnderLimit(Fixture.challenge("r1", purpose: ChallengeRecord.registrationPurpose, userID: "u1"), limit: 9)
        }
    }

    @Test("concurrent registrations for one user never pass the limit", arguments: Backend.allCases)
    func registrationLimitUnderConcurrency(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user("u1"))
        let created = Mutex(0)
        runConcurrently(20) { index in
            let challenge = Fixture.challenge("r\(index)", purpose: ChallengeRecord.registrationPurpose, userID: "u1")
            if (try? store.challenges.createIfUnderLimit(challenge, limit: 10)) == true { created.withLock { $0 += 1 } }
        }
        #expect(created.withLock { $0 } == 10)
        #expect(try store.challenges.countActive(userID: "u1", purpose: ChallengeRecord.registrationPurpose, now: t0) == 10)
    }

    @Test("tokens: consumed once by hash within their project and before expiry; cascade with the user", arguments: Backend.allCases)
    func tokens(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user("u1"))
        func token(_ id: String, _ hash: UInt8) -> TokenRecord {
            TokenRecord(id: id, projectID: "p1", userID: "u1", secretHash: Array(repeating: hash, count: 32), kind: "passkey",
                        createdAt: t0, expiresAt: t0.plus(seconds: 60))
        }
        try store.tokens.create(token("t1", 1))
        #expect(try store.tokens.consume(projectID: "p2", secretHash: Array(repeating: 1, count: 32), now: t0) == nil)
        #expect(try store.tokens.consume(projectID: "p1", secretHash: Array(repeating: 1, count: 32), now: t0) == token("t1", 1))
        #expect(try store.tokens.consume(projectID: "p1", secretHash: Array(repeating: 1, count: 32), now: t0) == nil)
        try store.tokens.create(token("t2", 2))
        #expect(try store.tokens.consume(projectID: "p1", secretHash: Array(repeating: 2, count: 32), now: t0.plus(seconds: 60)) == nil)
        #expect(throws: StoreError.notFound) {
            var orphan = token("t3", 3)
            orphan.userID = "nobody"
            try store.tokens.create(orphan)
        }
        try store.tokens.create(token("t4", 4))
        try store.users.delete(projectID: "p1", id: "u1")
        #expect(try store.tokens.consume(projectID: "p1", secretHash: Array(repeating: 4, count: 32), now: t0) == nil)
    }

    @Test("a token exchange: the live token's kind opens its session for its active user; anything else opens none, and a found token is used up either way",
          arguments: Backend.allCases, [false, true])
    func tokenExchange(backend: Backend, heldBySignIn: Bool) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project("p1"))
        try store.projects.create(Fixture.project("p2"))
        try store.users.create(Fixture.user("u1"))
        try store.users.create(Fixture.user("u2"))
        func token(_ hash: UInt8, kind: String = "passkey") throws -> [UInt8] {
            let record = TokenRecord(id: "t\(hash)", projectID: "p1", userID: "u1", secretHash: Array(repeating: hash, count: 32), kind: kind,
                                     createdAt: t0, expiresAt: t0.plus(seconds: 60))
            // As a sign-in holds it (in memory on SQLite), or as a row.
            if heldBySignIn {
                try store.transaction { transaction throws(StoreError) in try store.holdSignInToken(record, in: transaction) }
            } else {
                try store.tokens.create(record)
            }
            return record.secretHash
        }
        /// Whether no token with this hash is left, in memory or as a row.
        func usedUp(_ secretHash: [UInt8]) throws -> Bool {
            let row = try store.tokens.consume(projectID: "p1", secretHash: secretHash, now: t0)
            return store.pendingTokens?.take(projectID: "p1", secretHash: secretHash) == nil && row == nil
        }
        @Sendable func session(_ hash: UInt8, provider: String, mfa: Date?) -> SessionRecord {
            SessionRecord(id: "s\(hash)", projectID: "p1", userID: "u1", secretHash: Array(repeating: 100 + hash, count: 32), provider: provider,
                          factors: [provider], ip: "127.0.0.1", userAgent: "test", createdAt: t0, updatedAt: t0,
                          expiresAt: t0.plus(seconds: 3600), mfaUpdatedAt: mfa)
        }
        func exchange(_ secretHash: [UInt8], project: String = "p1", user: String = "u1", now: Date = t0, number: UInt8) throws -> TokenExchange {
            try store.exchangeToken(projectID: project, secretHash: secretHash, userID: user, now: now,
                                    sessions: ["passkey": session(number, provider: "passkey", mfa: now), "token": session(number, provider: "token", mfa: nil)])
        }
        func stored(_ number: UInt8) throws -> SessionRecord? {
            try store.sessions.find(projectID: "p1", secretHash: Array(repeating: 100 + number, count: 32), now: t0)
        }

        // Each kind opens its own session, once.
        let passkey = try token(1)
        #expect(try exchange(passkey, number: 1) == .created(session(1, provider: "passkey", mfa: t0)))
        #expect(try stored(1) == session(1, provider: "passkey", mfa: t0))
        #expect(try exchange(passkey, number: 2) == .unknownToken)
        #expect(try stored(2) == nil)
        let minted = try token(3, kind: "token")
        #expect(try exchange(minted, number: 3) == .created(session(3, provider: "token", mfa: nil)))
        #expect(try stored(3)?.provider == "token")
        // Sessions offered for one kind alone, none multi-factor: stored as given.
        let plain = try token(11, kind: "token")
        #expect(try store.exchangeToken(projectID: "p1", secretHash: plain, userID: "u1", now: t0, sessions: ["token": session(11, provider: "token", mfa: nil)])
            == .created(session(11, provider: "token", mfa: nil)))
        #expect(try stored(11)?.mfaUpdatedAt == nil)
        // Many kinds offered (past the statements made ahead on PostgreSQL): the token's kind's session.
        let many = try token(12, kind: "k4")
        let offered = Dictionary(uniqueKeysWithValues: (0..<6).map { ("k\($0)", session(12, provider: "p\($0)", mfa: nil)) })
        #expect(try store.exchangeToken(projectID: "p1", secretHash: many, userID: "u1", now: t0, sessions: offered) == .created(offered["k4"]!))
        #expect(try stored(12)?.provider == "p4")
        // No session offered at all: none opens, and the token is used up.
        let unoffered = try token(13)
        #expect(try store.exchangeToken(projectID: "p1", secretHash: unoffered, userID: "u1", now: t0, sessions: [:]) == .unknownToken)
        #expect(try usedUp(unoffered))
        // A kind without a session opens none, and is used up.
        let other = try token(4, kind: "magic")
        #expect(try exchange(other, number: 4) == .unknownToken)
        #expect(try stored(4) == nil)
        #expect(try usedUp(other))
        // Another user's name, or an unknown user: none, and the token is used up.
        let misnamed = try token(5)
        #expect(try exchange(misnamed, user: "u2", number: 5) == .unknownToken)
        #expect(try exchange(misnamed, number: 5) == .unknownToken)
        let unknownUser = try token(6)
        #expect(try exchange(unknownUser, user: "nobody", number: 6) == .unknownToken)
        #expect(try stored(5) == nil && stored(6) == nil)
        // Another project's exchange does not find it: the token stays for its own.
        let foreign = try token(7)
        #expect(try exchange(foreign, project: "p2", number: 7) == .unknownToken)
        #expect(try exchange(foreign, number: 7) == .created(session(7, provider: "passkey", mfa: t0)))
        // Expired at its expiry: none, used up.
        let expiring = try token(8)
        #expect(try exchange(expiring, now: t0.plus(seconds: 60), number: 8) == .unknownToken)
        #expect(try exchange(expiring, number: 8) == .unknownToken)
        #expect(try stored(8) == nil)
        // A blocked user: none, used up.
        let blocked = try token(9)
        #expect(try store.users.setStatus(projectID: "p1", id: "u1", status: UserRecord.blocked, at: t0))
        #expect(try exchange(blocked, number: 9) == .blocked)
        #expect(try store.users.setStatus(projectID: "p1", id: "u1", status: UserRecord.active, at: t0))
        #expect(try exchange(blocked, number: 9) == .unknownToken)
        #expect(try stored(9) == nil)
        // Concurrent exchanges of one token: exactly one session.
        let raced = try token(10)
        let outcomes = Mutex<[TokenExchange]>([])
        runConcurrently(8) { index in
            let outcome = try? store.exchangeToken(
                projectID: "p1", secretHash: raced, userID: "u1", now: t0,
                sessions: ["passkey": session(UInt8(20 + index), provider: "passkey", mfa: t0)])
            outcomes.withLock { $0.append(outcome ?? .blocked) }
        }
        let created = outcomes.withLock { $0 }.filter { if case .created = $0 { true } else { false } }
        #expect(created.count == 1 && outcomes.withLock { $0.filter { $0 == .unknownToken }.count } == 7)
        #expect(try store.sessions.list(projectID: "p1", userID: "u1", now: t0).count == 6)  // s1, s3, s11, s12, s7 and the race's one
        #expect(store.pendingTokens?.count ?? 0 == 0)
    }

    // MARK: Credentials

    @Test("credentials: create, find, list, rename, delete, conflicts", arguments: Backend.allCases)
    func credentials(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user("u1"))
        try store.users.create(Fixture.user("u2"))
        let first = Fixture.credential("c1")
        #expect(try store.credentials.createIfUnderLimit(first, limit: 10, now: t0))
        #expect(try store.credentials.find(rpID: "example.org", credentialID: first.credentialID) == first)
        #expect(try store.credentials.find(rpID: "other.org", credentialID: first.credentialID) == nil)
        #expect(try store.credentials.get(id: "c1") == first)
        // With its owner, in one read: the same passkey and the same user as two reads give.
        let withOwner = try #require(try store.credentials.findWithOwner(rpID: "example.org", credentialID: first.credentialID))
        #expect(withOwner.credential == first)
        #expect(withOwner.owner == (try store.users.get(projectID: "p1", id: "u1")))
        #expect(try store.credentials.findWithOwner(rpID: "other.org", credentialID: first.credentialID) == nil)
        #expect(try store.credentials.findWithOwner(rpID: "example.org", credentialID: Array("no-such".utf8)) == nil)

        // The same credential ID under another relying party is a different passkey; under the same one, a conflict.
        var sameIDOtherRP = Fixture.credential("c2", credentialID: first.credentialID)
        sameIDOtherRP.rpID = "other.org"
        try store.credentials.create(sameIDOtherRP)
        #expect(throws: StoreError.conflict) {
            try store.credentials.create(Fixture.credential("c3", credentialID: first.credentialID))
        }
        #expect(throws: StoreError.conflict) { try store.credentials.create(Fixture.credential("c1", credentialID: [9])) }
        #expect(throws: StoreError.notFound) { try store.credentials.create(Fixture.credential("c4", userID: "ghost")) }
        #expect(throws: StoreError.notFound) {
            try store.credentials.createIfUnderLimit(Fixture.credential("c4", userID: "ghost"), limit: 10, now: t0)
        }

        #expect(try store.credentials.rename(userID: "u1", id: "c1", name: "Laptop"))
        #expect(try store.credentials.get(id: "c1")?.updatedAt == t0)
        #expect(try store.credentials.rename(userID: "u1", id: "c1", name: "Laptop", at: t0.plus(seconds: 9)))
        #expect(try store.credentials.get(id: "c1")?.updatedAt == t0.plus(seconds: 9))
        #expect(try !store.credentials.rename(userID: "u2", id: "c1", name: "Stolen"))
        #expect(try store.credentials.get(id: "c1")?.name == "Laptop")
        #expect(try store.credentials.list(userID: "u1").map(\.id) == ["c1", "c2"])
        #expect(try store.credentials.count(projectID: "p1") == 2)
        #expect(try store.credentials.count(userID: "u1") == 2)
        #expect(try !store.credentials.delete(userID: "u2", id: "c1"))
        #expect(try store.credentials.delete(userID: "u1", id: "c1"))
        #expect(try store.credentials.count(projectID: "p1") == 1)
        // Deleting the user cascades to its passkeys.
        try store.users.delete(projectID: "p1", id: "u1")
        #expect(try store.credentials.count(projectID: "p1") == 0)
    }

    @Test("Authsignal joined reads: a challenge with its action, a user with one passkey's enrolment details", arguments: Backend.allCases)
    func authsignalJoinedReads(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user("u1"))
        try store.users.create(Fixture.user("u2"))
        try store.credentials.create(Fixture.credential("c1", userID: "u1"))
        try store.credentials.create(Fixture.credential("c2", userID: "u1"))
        // Columns both tables name (id, project_id; username, display_name) come back each from its own table.
        let action = AuthsignalActionRecord(id: "a1", projectID: "p1", externalUserID: nil, actionCode: "signIn", idempotencyKey: "k1",
                                            state: "CHALLENGE_REQUIRED", stateUpdatedAt: t0, createdAt: t0.plus(seconds: 1))
        try store.authsignal.createAction(action)
        var challenge = Fixture.challenge("ch1", purpose: "action")
        challenge.requestID = "a1"
        try store.challenges.create(challenge)
        try store.challenges.create(Fixture.challenge("ch2", purpose: "action"))
        let pending = try #require(try store.authsignal.pendingChallenge(id: "ch1", purpose: "action"))
        #expect(pending.challenge == challenge && pending.action == action)
        #expect(try store.authsignal.pendingChallenge(id: "ch1", purpose: "authentication") == nil, "another purpose")
        #expect(try store.authsignal.pendingChallenge(id: "ch2", purpose: "action") == nil, "no action")
        #expect(try store.authsignal.pendingChallenge(id: "nope", purpose: "action") == nil)

        let user = AuthsignalUserRecord(projectID: "p1", externalID: "ext-1", userID: "u1", username: "ada", displayName: "Ada L",
                                        createdAt: t0, updatedAt: t0.plus(seconds: 2))
        try store.authsignal.createUser(user)
        let details = AuthsignalPasskeyDetails(credentialRowID: "c1", deviceID: "d1", username: "ada@phone", displayName: "Ada's phone")
        try store.authsignal.createPasskeyDetails(details)
        let withDetails = try #require(try store.authsignal.user(rpID: "example.org", passkeyCredentialID: Array("cred-c1".utf8)))
        #expect(withDetails.user == user && withDetails.details == details)
        let withoutDetails = try #require(try store.authsignal.user(rpID: "example.org", passkeyCredentialID: Array("cred-c2".utf8)))
        #expect(withoutDetails.user == user && withoutDetails.details == nil)
        try store.credentials.create(Fixture.credential("c3", userID: "u2"))
        #expect(try store.authsignal.user(rpID: "example.org", passkeyCredentialID: Array("cred-c3".utf8)) == nil, "a user the face does not know")
        #expect(try store.authsignal.user(rpID: "other.example", passkeyCredentialID: Array("cred-c1".utf8)) == nil, "another relying party")
        #expect(try store.authsignal.user(rpID: "example.org", passkeyCredentialID: Array("cred-none".utf8)) == nil, "no such passkey")
    }

    @Test("a usernameless sign-in's challenge is inserted only for an open action of its project without a user; otherwise nothing is written",
          arguments: Backend.allCases)
    func challengeForAction(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.projects.create(Fixture.project("p2", rpID: "other.example"))
        func action(_ id: String, user: String? = nil, state: String = "CHALLENGE_REQUIRED") -> AuthsignalActionRecord {
            AuthsignalActionRecord(id: id, projectID: "p1", externalUserID: user, actionCode: "signIn", idempotencyKey: "key-\(id)", state: state,
                                   stateUpdatedAt: t0, createdAt: t0)
        }
        try store.authsignal.createAction(action("open"))
        try store.authsignal.createAction(action("identified", user: "ext-1"))
        try store.authsignal.createAction(action("blocked", state: "BLOCK"))
        func challenge(_ id: String, for actionID: String, projectID: String = "p1") -> ChallengeRecord {
            var record = Fixture.challenge(id, projectID: projectID, purpose: "action")
            record.requestID = actionID
            return record
        }
        #expect(try store.authsignal.createChallenge(challenge("c-open", for: "open"), forUsernamelessActionNotIn: "BLOCK"))
        #expect(try store.challenges.get(id: "c-open") == challenge("c-open", for: "open"))
        let refused = [challenge("c-identified", for: "identified"), challenge("c-blocked", for: "blocked"), challenge("c-none", for: "none"),
                       challenge("c-project", for: "open", projectID: "p2")]
        for record in refused {
            #expect(try !store.authsignal.createChallenge(record, forUsernamelessActionNotIn: "BLOCK"), "\(record.id)")
            #expect(try store.challenges.get(id: record.id) == nil, "\(record.id)")
        }
    }

    @Test("sign count only moves forward; zero stays allowed for counterless authenticators", arguments: Backend.allCases)
    func signCount(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user())
        try store.credentials.create(Fixture.credential("zero"))
        try store.credentials.create(Fixture.credential("counted", signCount: 5))
        let repo = store.credentials

        #expect(try repo.updateAfterAuthentication(id: "zero", newSignCount: 0, backedUp: true, userVerified: false, at: t0.plus(seconds: 1)))
        let zero = try #require(try repo.get(id: "zero"))
        #expect(zero.signCount == 0 && zero.backedUp && !zero.userVerified && zero.lastUsedAt == t0.plus(seconds: 1))

        #expect(try !repo.updateAfterAuthentication(id: "counted", newSignCount: 5, backedUp: false, userVerified: true, at: t0))
        #expect(try !repo.updateAfterAuthentication(id: "counted", newSignCount: 4, backedUp: false, userVerified: true, at: t0))
        #expect(try !repo.updateAfterAuthentication(id: "counted", newSignCount: 0, backedUp: false, userVerified: true, at: t0))
        #expect(try repo.updateAfterAuthentication(id: "counted", newSignCount: 6, backedUp: false, userVerified: true, at: t0))
        #expect(try repo.get(id: "counted")?.signCount == 6)
        #expect(try !repo.updateAfterAuthentication(id: "missing", newSignCount: 9, backedUp: false, userVerified: true, at: t0))
        // Once the counter has moved, zero no longer passes.
        #expect(try repo.updateAfterAuthentication(id: "zero", newSignCount: 3, backedUp: true, userVerified: true, at: t0))
        #expect(try !repo.updateAfterAuthentication(id: "zero", newSignCount: 0, backedUp: true, userVerified: true, at: t0))
    }

    @Test("concurrent sign count updates end at the maximum", arguments: Backend.allCases)
    func concurrentSignCount(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user())
        try store.credentials.create(Fixture.credential("c1", signCount: 1))
        let errors = Mutex<[String]>([])
        runConcurrently(40) { index in
            do {
                _ = try store.credentials.updateAfterAuthentication(
                    id: "c1", newSignCount: Int64(index * 7 % 40 + 2), backedUp: false, userVerified: true, at: t0
                )
            } catch {
                errors.withLock { $0.append(String(reflecting: error)) }
            }
        }
        #expect(errors.withLock { $0 } == [])
        #expect(try store.credentials.get(id: "c1")?.signCount == 41)
    }

    @Test("20 concurrent registrations with limit 10 create exactly 10 passkeys", arguments: Backend.allCases)
    func concurrentLimit(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user())
        let outcomes = Mutex<[String]>([])
        runConcurrently(20) { index in
            do {
                let created = try store.credentials.createIfUnderLimit(
                    Fixture.credential("c\(index)"), limit: 10, now: t0
                )
                outcomes.withLock { $0.append(created ? "created" : "limit") }
            } catch {
                outcomes.withLock { $0.append(String(reflecting: error)) }
            }
        }
        let results = outcomes.withLock { $0 }
        #expect(results.filter { $0 == "created" }.count == 10)
        #expect(results.filter { $0 == "limit" }.count == 10)
        #expect(try store.credentials.count(userID: "u1") == 10)
    }

    @Test("pending registrations count toward the limit, except the one being finished", arguments: Backend.allCases)
    func limitCountsPending(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.users.create(Fixture.user())
        try store.credentials.create(Fixture.credential("c1"))
        try store.challenges.create(Fixture.challenge("reg1", purpose: "registration", userID: "u1"))
        // Expired and other-purpose challenges do not count.
        try store.challenges.create(Fixture.challenge("old", purpose: "registration", userID: "u1", expiresAt: t0))
        try store.challenges.create(Fixture.challenge("auth", purpose: "authentication", userID: "u1"))
        #expect(try store.challenges.countActive(userID: "u1", purpose: "registration", now: t0) == 1)

        #expect(try !store.credentials.createIfUnderLimit(Fixture.credential("c2"), limit: 2, now: t0))
        #expect(try store.credentials.createIfUnderLimit(
            Fixture.credential("c2"), limit: 2, finishingChallengeID: "reg1", now: t0
        ))
        #expect(try store.credentials.count(userID: "u1") == 2)
        #expect(try !store.credentials.createIfUnderLimit(
            Fixture.credential("c3"), limit: 2, finishingChallengeID: "reg1", now: t0
        ))
    }

    // MARK: Challenges

    @Test("a challenge is consumed once; expired ones are not consumable but are removed", arguments: Backend.allCases)
    func challenges(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        let challenge = Fixture.challenge("ch1", userID: "u1")
        try store.challenges.create(challenge)
        #expect(throws: StoreError.conflict) { try store.challenges.create(challenge) }
        #expect(throws: StoreError.notFound) { try store.challenges.create(Fixture.challenge("x", projectID: "missing")) }
        #expect(try store.challenges.get(id: "ch1") == challenge)
        #expect(try store.challenges.consume(id: "ch1", now: t0) == challenge)
        #expect(try store.challenges.consume(id: "ch1", now: t0) == nil)
        #expect(try store.challenges.consume(id: "never", now: t0) == nil)

        try store.challenges.create(Fixture.challenge("late", expiresAt: t0.plus(seconds: 60)))
        #expect(try store.challenges.consume(id: "late", now: t0.plus(seconds: 60)) == nil)
        #expect(try store.challenges.get(id: "late") == nil)

        try store.challenges.create(Fixture.challenge("e1", expiresAt: t0.plus(seconds: 10)))
        try store.challenges.create(Fixture.challenge("e2", expiresAt: t0.plus(seconds: 20)))
        try store.challenges.create(Fixture.challenge("e3", expiresAt: t0.plus(seconds: 30)))
        #expect(try store.challenges.deleteExpired(before: t0.plus(seconds: 20)) == 2)
        #expect(try store.challenges.get(id: "e3") != nil)
    }

    @Test("50 concurrent consumers of one challenge: exactly one wins", arguments: Backend.allCases)
    func concurrentConsume(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        for round in 0..<3 {
            try store.challenges.create(Fixture.challenge("race\(round)"))
            let outcomes = Mutex<[String]>([])
            runConcurrently(50) { _ in
                do {
                    let won = try store.challenges.consume(id: "race\(round)", now: t0) != nil
                    outcomes.withLock { $0.append(won ? "won" : "lost") }
                } catch {
                    outcomes.withLock { $0.append(String(reflecting: error)) }
                }
            }
            let results = outcomes.withLock { $0 }
            #expect(results.filter { $0 == "won" }.count == 1)
            #expect(results.filter { $0 == "lost" }.count == 49)
        }
    }

    // MARK: Rate limits

    @Test("rate limit counters add up under concurrency and prune by window", arguments: Backend.allCases)
    func rateLimits(backend: Backend) throws {
        let store = try backend.makeStore()
        #expect(try store.rateLimits.increment(key: "ip:1", windowStart: t0) == 1)
        #expect(try store.rateLimits.increment(key: "ip:1", windowStart: t0) == 2)
        #expect(try store.rateLimits.increment(key: "ip:1", windowStart: t0.plus(seconds: 60)) == 1)
        let seen = Mutex<[Int64]>([])
        runConcurrently(30) { _ in
            for _ in 0..<5 {
                if let value = try? store.rateLimits.increment(key: "ip:2", windowStart: t0) {
                    seen.withLock { $0.append(value) }
                }
            }
        }
        // Every increment returned a distinct count, 1...150.
        #expect(seen.withLock { $0.sorted() } == Array(1...150))
        #expect(try store.rateLimits.current(key: "ip:2", windowStart: t0) == 150)
        #expect(try store.rateLimits.current(key: "ip:3", windowStart: t0) == 0)
        #expect(try store.rateLimits.prune(before: t0.plus(seconds: 60)) == 2)
        #expect(try store.rateLimits.current(key: "ip:1", windowStart: t0.plus(seconds: 60)) == 1)
    }

    @Test("a chain of limits counts each key in turn up to the first over its limit, the later ones untouched, atomically", arguments: Backend.allCases)
    func rateLimitChain(backend: Backend) throws {
        let store = try backend.makeStore()
        let limits: [(key: String, limit: Int)] = [("ip:a", 2), ("tenant:t", 3), ("deployment", 100)]
        #expect(try store.rateLimits.increment(limits, windowStart: t0) == [1, 1, 1])
        #expect(try store.rateLimits.increment(limits, windowStart: t0) == [2, 2, 2])
        // ip:a goes over its limit: the tenant and deployment counters are not counted.
        #expect(try store.rateLimits.increment(limits, windowStart: t0) == [3])
        #expect(try store.rateLimits.current(key: "tenant:t", windowStart: t0) == 2)
        #expect(try store.rateLimits.current(key: "deployment", windowStart: t0) == 2)
        // Another address of the tenant: the tenant goes over (3 is within, 4 is not) and stops the chain there.
        let other: [(key: String, limit: Int)] = [("ip:b", 2), ("tenant:t", 3), ("deployment", 100)]
        #expect(try store.rateLimits.increment(other, windowStart: t0) == [1, 3, 3])
        #expect(try store.rateLimits.increment(other, windowStart: t0) == [2, 4])
        #expect(try store.rateLimits.current(key: "deployment", windowStart: t0) == 3)
        // One key alone, and another window.
        #expect(try store.rateLimits.increment([("ip:a", 2)], windowStart: t0.plus(seconds: 60)) == [1])

        // Concurrent chains count exactly: each of 40 hits of two keys is counted once in both.
        let seen = Mutex<[[Int64]]>([])
        runConcurrently(20) { _ in
            for _ in 0..<2 {
                if let counts = try? store.rateLimits.increment([("ip:c", 1000), ("tenant:c", 1000)], windowStart: t0) {
                    seen.withLock { $0.append(counts) }
                }
            }
        }
        #expect(seen.withLock { $0.count } == 40)
        #expect(seen.withLock { $0.map { $0[0] }.sorted() } == Array(1...40))
        #expect(seen.withLock { $0.map { $0[1] }.sorted() } == Array(1...40))
        #expect(try store.rateLimits.current(key: "tenant:c", windowStart: t0) == 40)
    }

    // MARK: Relying party rule

    @Test("the relying party ID is locked by passkeys and pending registrations", arguments: Backend.allCases)
    func relyingPartyRule(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        let repo = store.projects
        // Free to change while unused; the name may always change.
        let moved = try repo.setRelyingParty(projectID: "p1", rpID: "a.example", rpName: "A", at: t0.plus(seconds: 1))
        #expect(moved.rpID == "a.example" && moved.rpName == "A" && moved.updatedAt == t0.plus(seconds: 1))
        #expect(throws: StoreError.notFound) { try repo.setRelyingParty(projectID: "x", rpID: "a", rpName: "a", at: t0) }

        // An authentication challenge does not lock it; an unexpired registration challenge does.
        try store.challenges.create(Fixture.challenge("auth", purpose: "authentication"))
        try repo.setRelyingParty(projectID: "p1", rpID: "b.example", rpName: "B", at: t0)
        try store.challenges.create(Fixture.challenge("reg", purpose: "registration", expiresAt: t0.plus(seconds: 60)))
        #expect(throws: StoreError.conflict) {
            try repo.setRelyingParty(projectID: "p1", rpID: "c.example", rpName: "C", at: t0)
        }
        var viaUpdate = try #require(try repo.get(id: "p1"))
        viaUpdate.rpID = "c.example"
        #expect(throws: StoreError.conflict) { try repo.update(viaUpdate) }
        // Same ID, new name: fine.
        try repo.setRelyingParty(projectID: "p1", rpID: "b.example", rpName: "Bee", at: t0)
        // After the registration expires the ID is free again.
        try repo.setRelyingParty(projectID: "p1", rpID: "c.example", rpName: "C", at: t0.plus(seconds: 60))
        #expect(try repo.get(id: "p1")?.rpID == "c.example")

        // A passkey locks it for good.
        try store.challenges.deleteExpired(before: t0.plus(seconds: 3600))
        try store.users.create(Fixture.user())
        try store.credentials.create(Fixture.credential(rpID: "c.example"))
        #expect(throws: StoreError.conflict) {
            try repo.setRelyingParty(projectID: "p1", rpID: "d.example", rpName: "D", at: t0.plus(seconds: 3600))
        }
        #expect(try repo.get(id: "p1")?.rpID == "c.example")
    }

    @Test("relying party change races with passkey creation: never both", arguments: Backend.allCases)
    func relyingPartyRace(backend: Backend) throws {
        for round in 0..<5 {
            let store = try backend.makeStore()
            try store.projects.create(Fixture.project())
            try store.users.create(Fixture.user())
            let outcomes = Mutex<[String]>([])
            runConcurrently(2) { index in
                do {
                    if index == 0 {
                        try store.projects.setRelyingParty(projectID: "p1", rpID: "new.example", rpName: "N", at: t0)
                        outcomes.withLock { $0.append("moved") }
                    } else {
                        _ = try store.credentials.createIfUnderLimit(Fixture.credential(), limit: 10, now: t0)
                        outcomes.withLock { $0.append("created") }
                    }
                } catch {
                    outcomes.withLock { $0.append((error as? StoreError) == .conflict ? "conflict" : String(reflecting: error)) }
                }
            }
            let results = outcomes.withLock { $0 }.sorted()
            let rpID = try store.projects.get(id: "p1")?.rpID
            let count = try store.credentials.count(projectID: "p1")
            // Either the passkey came first (move refused) or the move came first (passkey under the new... old ID).
            if results == ["conflict", "created"] {
                #expect(rpID == "example.org" && count == 1, "round \(round)")
            } else {
                #expect(results == ["created", "moved"], "round \(round)")
                #expect(rpID == "new.example" && count == 1, "round \(round)")
            }
        }
    }

    // MARK: Transactions

    @Test("Store.transaction commits together or not at all", arguments: Backend.allCases)
    func transactions(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        try store.challenges.create(Fixture.challenge("reg", purpose: "registration", userID: "u1"))
        try store.users.create(Fixture.user())

        // Consume the challenge and create the passkey in one transaction, then fail: nothing happens.
        #expect(throws: StoreError.conflict) {
            try store.transaction { tx throws(StoreError) in
                _ = try tx.challenges.consume(id: "reg", now: t0)
                _ = try tx.credentials.createIfUnderLimit(Fixture.credential(), limit: 5, now: t0)
                try tx.users.create(Fixture.user())  // duplicate: conflict
            }
        }
        #expect(try store.challenges.get(id: "reg") != nil)
        #expect(try store.credentials.count(userID: "u1") == 0)

        let created = try store.transaction { tx throws(StoreError) -> Bool in
            guard try tx.challenges.consume(id: "reg", now: t0) != nil else { return false }
            return try tx.credentials.createIfUnderLimit(Fixture.credential(), limit: 1, now: t0)
        }
        #expect(created)
        #expect(try store.challenges.get(id: "reg") == nil)
        #expect(try store.credentials.count(userID: "u1") == 1)
    }

    @Test("an ignored statement error fails the transaction on both backends", arguments: Backend.allCases)
    func swallowedError(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        #expect(throws: StoreError.internalFailure) {
            try store.database.transaction { connection throws(StoreError) in
                try connection.execute(
                    "INSERT INTO rate_limits (key, window_start, count) VALUES ($1, $2, $3)",
                    [.text("k"), .integer(1), .integer(1)]
                )
                _ = try? connection.execute(
                    "INSERT INTO projects (id, name, rp_id, rp_name, auth_methods, created_at, updated_at) "
                        + "VALUES ($1, $1, $1, $1, $1, $2, $2)", [.text("p1"), .integer(0)]
                )
            }
        }
        #expect(try store.database.query("SELECT key FROM rate_limits", []).isEmpty)
    }

    // MARK: Bad input and hostile values

    @Test("values that look like SQL injection are stored verbatim", arguments: Backend.allCases)
    func injection(backend: Backend) throws {
        let store = try backend.makeStore()
        let hostile = "x'); DROP TABLE users; -- $1 ?1 \"quoted\" \\ 😀 é"
        var project = Fixture.project(hostile, rpID: hostile)
        project.name = "Robert'); DROP TABLE projects;--"
        project.authMethods = [hostile: true]
        try store.projects.create(project)
        #expect(try store.projects.get(id: hostile) == project)
        var user = Fixture.user(hostile, projectID: hostile, email: "' OR '1'='1")
        user.userHandle = [0, 0x27, 0x5C, 0xFF, 0x00]
        try store.users.create(user)
        #expect(try store.users.findByEmail(projectID: hostile, email: "' OR '1'='1") == user)
        #expect(try store.users.findByEmail(projectID: hostile, email: "x' OR '1'='1") == nil)
        #expect(try store.users.findByUserHandle(projectID: hostile, userHandle: user.userHandle) == user)
        #expect(try store.users.list(projectID: hostile).count == 1)
    }

    @Test("empty byte strings and texts round-trip as empty, not null", arguments: Backend.allCases)
    func emptyValues(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.projects.create(Fixture.project())
        var user = Fixture.user()
        user.userHandle = []
        user.email = ""
        try store.users.create(user)
        #expect(try store.users.get(projectID: "p1", id: "u1") == user)
        let rows = try store.database.query("SELECT $1 AS a, $2 AS b", [.text("τ"), .integer(Int64.min)])
        #expect(try rows.first?.text("a") == "τ")
        #expect(try rows.first?.integer("b") == Int64.min)
    }

    @Test("text round-trips exactly whatever its length (empty, inline, long, non-ASCII) and stays text, not NULL", arguments: Backend.allCases)
    func textRoundTrip(backend: Backend) throws {
        let store = try backend.makeStore()
        try store.database.execute("CREATE TABLE texts (id INTEGER PRIMARY KEY, note TEXT)", [])
        let notes = ["", "a", "fifteen bytes!!", "sixteen bytes!!!", String(repeating: "τ€😀", count: 40)]
        for (id, note) in notes.enumerated() {
            try store.database.execute("INSERT INTO texts (id, note) VALUES ($1, $2)", [.integer(Int64(id)), .text(note)])
        }
        for (id, note) in notes.enumerated() {
            let row = try #require(try store.database.query("SELECT note FROM texts WHERE id = $1 AND note IS NOT NULL", [.integer(Int64(id))]).first)
            #expect(try row.text("note") == note)
        }
        #expect(try store.database.query("SELECT id FROM texts WHERE note = $1", [.text("")]).count == 1)
    }

    @Test("text with a NUL character is refused on both backends as unstorable_value", arguments: Backend.allCases)
    func nulText(backend: Backend) throws {
        let store = try backend.makeStore()
        var project = Fixture.project()
        project.name = "a\u{0}b"
        #expect(throws: StoreError.unstorableValue) { try store.projects.create(project) }
        #expect(try store.projects.list().isEmpty)
    }

    @Test("reading a column with the wrong accessor is invalidData", arguments: Backend.allCases)
    func wrongType(backend: Backend) throws {
        let store = try backend.makeStore()
        let row = try #require(try store.database.query("SELECT $1 AS t, $2 AS n", [.text("x"), .integer(1)]).first)
        #expect(throws: StoreError.invalidData) { try row.integer("t") }
        #expect(throws: StoreError.invalidData) { try row.blob("n") }
        #expect(throws: StoreError.invalidData) { try row.text("missing") }
        #expect(try row.bool("n"))
        #expect(throws: StoreError.internalFailure) { try store.database.query("SELEC nonsense", []) }
        #expect(throws: StoreError.self) { try store.database.query("SELECT 1; SELECT 2", []) }
    }
}

/// Opening and URL handling that does not need a backend per case.
@Suite("Store.open")
struct StoreOpenTests {
    @Test("unsupported or malformed URLs give a clear error, not a crash", arguments: [
        "", "mysql://x", "sqlite:", "sqlite://", "http://localhost", "postgres:/", "sqlite::memory:",
    ])
    func badURLs(url: String) {
        let error = #expect(throws: StoreError.self) { try Store.open(url) }
        #expect(error?.code == .invalidData)
    }

    @Test("an unreachable PostgreSQL server is unavailable, and the password is not echoed")
    func unreachable() {
        let error = #expect(throws: StoreError.unavailable) {
            try Store.open("postgres://me:s3cr3t-pw@/db?host=/nonexistent-sesame-dir&port=1&connect_timeout=2")
        }
        #expect(error.map { !String(reflecting: $0).contains("s3cr3t-pw") } ?? false)
        #expect(error.map { !String(describing: $0).contains("nonexistent") } ?? false)
    }

    @Test("a malformed PostgreSQL URI is a clear error")
    func malformedPostgresURI() {
        let error = #expect(throws: StoreError.self) {
            try Store.open("postgresql://u:p%ZZw@[::1/db?bogus_option=1")
        }
        #expect(error?.code == .unavailable)
        #expect(error.map { !String(reflecting: $0).contains("p%ZZw") } ?? false)
    }

    @Test("an SQLite path in an unwritable place is unavailable")
    func unwritableSQLite() {
        #expect(throws: StoreError.unavailable) { try Store.open("sqlite:/proc/sesame/test.db") }
    }

    @Test("SQLite placeholders are rewritten outside quotes and comments only")
    func rewrite() throws {
        let store = try Backend.sqlite.makeStore()
        let row = try #require(try store.database.query(
            "SELECT '$1' AS literal, $2 AS second, $1 AS first -- $3\n", [.text("one"), .text("two")]
        ).first)
        #expect(try row.text("literal") == "$1")
        #expect(try row.text("first") == "one")
        #expect(try row.text("second") == "two")
    }
}
