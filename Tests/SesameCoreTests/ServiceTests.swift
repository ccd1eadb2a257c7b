import Foundation
import SesameStore
import SesameTestSupport
import Testing
@testable import SesameCore

/// A domain over a fresh store of each backend, with a clock the test moves.
extension Backend {
    func makeSesame(clock: ManualClock = ManualClock(), configurationRefresh: Duration = Sesame.defaultConfigurationRefresh) throws -> Sesame {
        Sesame(store: try Store.open(try makeURL()), clock: clock, masterKeys: MasterKeyring(current: .generate()),
               configurationRefresh: configurationRefresh)
    }
}

@Suite struct ProjectServiceTests {
    @Test("creates, lists and reads projects with their platforms and computed origins", arguments: Backend.allCases)
    func lifecycle(backend: Backend) throws {
        let clock = ManualClock()
        let sesame = try backend.makeSesame(clock: clock)
        let project = try sesame.projects.create(name: "  Shop  ", relyingPartyID: "Shop.Example")
        #expect(project.name == "Shop" && project.relyingPartyID == "shop.example" && project.authMethods == ["passkey": true])
        // Platforms list in the order they were added (same-millisecond additions order by their random IDs).
        let web = try sesame.projects.addPlatform(projectID: project.id, .web(hostname: "Shop.Example"))
        clock.advance(by: 1)
        _ = try sesame.projects.addPlatform(projectID: project.id, .android(packageName: "com.shop.app", sha256Fingerprints: [Array(repeating: 1, count: 32)]), name: "Android")
        clock.advance(by: 1)
        _ = try sesame.projects.addPlatform(projectID: project.id, .apple(teamID: "ABCDE12345", bundleID: "com.shop.App"))
        let read = try sesame.projects.get(project.id)
        #expect(read.platforms.count == 3)
        #expect(read.configuration.acceptedOrigins == ["https://shop.example", "android:apk-key-hash:AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"])
        #expect(try sesame.projects.list().map(\.id) == [project.id])
        try sesame.projects.removePlatform(projectID: project.id, platformID: web.id)
        #expect(try sesame.projects.get(project.id).platforms.count == 2)
        #expect(throws: SesameError.code(.notFound)) { try sesame.projects.removePlatform(projectID: project.id, platformID: web.id) }
        #expect(throws: SesameError.code(.notFound)) { try sesame.projects.get("missing") }
        #expect(try sesame.projects.project(servingHost: "shop.example:8443")?.id == project.id)
    }

    @Test("rejects invalid names, relying party IDs and platforms, writing nothing", arguments: Backend.allCases)
    func invalid(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.projects.create(name: " ", relyingPartyID: "a.example") }
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.projects.create(name: "x", relyingPartyID: "https://a.example") }
        #expect(try sesame.projects.list().isEmpty)
        let project = try sesame.projects.create(name: "x", relyingPartyID: "a.example")
        let bad: [Platform] = [.web(hostname: "a b"), .android(packageName: "app", sha256Fingerprints: [Array(repeating: 0, count: 32)]),
                               .android(packageName: "com.a.b", sha256Fingerprints: []), .apple(teamID: "short", bundleID: "com.a")]
        for platform in bad {
            #expect(throws: SesameError.code(.invalidArgument)) { try sesame.projects.addPlatform(projectID: project.id, platform) }
        }
        #expect(try sesame.projects.get(project.id).platforms.isEmpty)
    }

    @Test("keeps the relying party ID once a registration is pending", arguments: Backend.allCases)
    func relyingPartyIsPermanent(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        let project = try sesame.projects.create(name: "x", relyingPartyID: "a.example")
        #expect(try sesame.projects.setRelyingParty(projectID: project.id, id: "b.example", name: "B").relyingPartyID == "b.example")
        _ = try sesame.challenges.issue(projectID: project.id, purpose: "registration", lifetime: 300)
        #expect(throws: SesameError.code(.conflict)) { try sesame.projects.setRelyingParty(projectID: project.id, id: "c.example", name: "C") }
        // The name alone may still change.
        #expect(try sesame.projects.setRelyingParty(projectID: project.id, id: "b.example", name: "Bee").relyingPartyName == "Bee")
        #expect(try sesame.projects.get(project.id).relyingPartyID == "b.example")
    }
}

@Suite struct APIKeyServiceTests {
    @Test("shows the secret once, stores only its hash, checks scopes and revocation", arguments: Backend.allCases)
    func keys(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        let project = try sesame.projects.create(name: "x", relyingPartyID: "a.example")
        let (key, secret) = try sesame.apiKeys.create(projectID: project.id, name: "ci", scopes: [.projectRead])
        #expect(secret.hasPrefix("sesame_sk_") && secret.count == "sesame_sk_".count + 43)
        let stored = try #require(try sesame.store.apiKeys.list(projectID: project.id).first)
        #expect(stored.secretHash == Identifiers.hash(secret) && stored.secretHash.count == 32)
        #expect(try sesame.apiKeys.authenticate(secret, requiring: .projectRead).id == key.id)
        #expect(throws: SesameError.code(.forbidden)) { try sesame.apiKeys.authenticate(secret, requiring: .projectWrite) }
        #expect(throws: SesameError.code(.unauthorized)) { try sesame.apiKeys.authenticate(secret + "x", requiring: .projectRead) }
        #expect(throws: SesameError.code(.unauthorized)) { try sesame.apiKeys.authenticate("not-a-key", requiring: .projectRead) }
        try sesame.apiKeys.revoke(projectID: project.id, id: key.id)
        #expect(throws: SesameError.code(.unauthorized)) { try sesame.apiKeys.authenticate(secret, requiring: .projectRead) }
        #expect(throws: SesameError.code(.notFound)) { try sesame.apiKeys.revoke(projectID: project.id, id: "missing") }
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.apiKeys.create(projectID: project.id, name: "x", scopes: []) }
        #expect(throws: SesameError.code(.invalidArgument)) {
            try sesame.apiKeys.create(projectID: project.id, name: "x", scopes: [APIKey.Scope(rawValue: "root")])
        }
    }
}

@Suite struct ChallengeServiceTests {
    @Test("issues 32 random bytes that can be consumed once, before expiry, by the same project and purpose", arguments: Backend.allCases)
    func singleUse(backend: Backend) throws {
        let clock = ManualClock()
        let sesame = try backend.makeSesame(clock: clock)
        let project = try sesame.projects.create(name: "x", relyingPartyID: "a.example")
        let first = try sesame.challenges.issue(projectID: project.id, purpose: "authentication", lifetime: 60, userID: "u1")
        let second = try sesame.challenges.issue(projectID: project.id, purpose: "authentication", lifetime: 60)
        #expect(first.bytes.count == 32 && first.bytes != second.bytes && first.id != second.id)
        let consumed = try sesame.challenges.consume(id: first.id, projectID: project.id, purpose: "authentication")
        #expect(consumed.bytes == first.bytes && consumed.userID == "u1")
        #expect(throws: SesameError.code(.expired)) { try sesame.challenges.consume(id: first.id, projectID: project.id, purpose: "authentication") }
        // Wrong purpose: refused, and burnt.
        #expect(throws: SesameError.code(.expired)) { try sesame.challenges.consume(id: second.id, projectID: project.id, purpose: "registration") }
        #expect(throws: SesameError.code(.expired)) { try sesame.challenges.consume(id: second.id, projectID: project.id, purpose: "authentication") }
        let late = try sesame.challenges.issue(projectID: project.id, purpose: "authentication", lifetime: 60)
        clock.advance(by: 61)
        #expect(throws: SesameError.code(.expired)) { try sesame.challenges.consume(id: late.id, projectID: project.id, purpose: "authentication") }
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.challenges.issue(projectID: project.id, purpose: "", lifetime: 60) }
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.challenges.issue(projectID: project.id, purpose: "x", lifetime: 0) }
        #expect(throws: SesameError.code(.invalidArgument)) { try sesame.challenges.issue(projectID: project.id, purpose: "x", lifetime: 3601) }
    }
}

@Suite struct RateLimiterTests {
    @Test("allows the limit per window, then refuses until the next window", arguments: Backend.allCases)
    func window(backend: Backend) throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let sesame = try backend.makeSesame(clock: clock)
        let decisions = try (0..<4).map { _ in try sesame.rateLimiter.hit("signin:1.2.3.4", limit: 3, window: 3600) }
        #expect(decisions.map(\.allowed) == [true, true, true, false])
        #expect(decisions.map(\.remaining) == [2, 1, 0, 0])
        #expect(decisions[0].resetAt == Date(timeIntervalSince1970: 1_800_000_000 - 1_800_000_000.truncatingRemainder(dividingBy: 3600) + 3600))
        #expect(try sesame.rateLimiter.hit("signin:5.6.7.8", limit: 3, window: 3600).allowed)
        clock.advance(by: 3600)
        #expect(try sesame.rateLimiter.hit("signin:1.2.3.4", limit: 3, window: 3600).allowed)
    }
}

/// The configuration cache inside one process: what a lookup after a change sees, and the once-a-minute key touch.
/// Changes "beside the services" are written to the store directly, as another node or the CLI would: only the
/// configuration version tells the cache. Most tests read it on every request (a zero refresh interval), to see what
/// each reading does; `refreshInterval` tests the interval itself.
@Suite struct ConfigurationCacheTests {
    @Test("partner API keys are served from memory, a revocation beside the services seen by the next lookup; grants are read, and leave the version alone",
          arguments: Backend.allCases)
    func partnerKeysFromMemory(backend: Backend) throws {
        let sesame = try backend.makeSesame(configurationRefresh: .zero)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let partner = try sesame.partners.create(projectID: project.id, name: "Ticketz")
        let (key, secret) = try sesame.partners.createAPIKey(partnerID: partner.id, environment: .live)
        let caller = try sesame.partners.authenticate(apiKey: secret)
        #expect(caller.partner.id == partner.id && caller.environment == .live)
        // From memory: the keys' table renamed away (which moves no version), the key still authenticates; a grant does not.
        let version = try sesame.store.configurationVersion.current()
        let grant = try sesame.partners.openGrant(caller)
        try sesame.store.database.execute("ALTER TABLE partner_secrets RENAME TO partner_secrets_away", [])
        #expect(try sesame.partners.authenticate(apiKey: secret).partner.id == partner.id)
        #expect(throws: SesameError.self) { try sesame.partners.authenticate(grant: grant.secret) }
        try sesame.store.database.execute("ALTER TABLE partner_secrets_away RENAME TO partner_secrets", [])
        // Grants come and go without moving the configuration version.
        #expect(try sesame.partners.authenticate(grant: grant.secret).partner.id == partner.id)
        #expect(try sesame.partners.revokeGrant(grant.secret))
        #expect(try sesame.store.configurationVersion.current() == version)
        // Revoked beside the services (as another process would): only the version tells the cache.
        #expect(try sesame.store.partners.revokeSecret(partnerID: partner.id, id: key.id, at: Date()))
        #expect(try sesame.store.configurationVersion.current() > version)
        #expect(throws: SesameError.code(.unauthorized)) { try sesame.partners.authenticate(apiKey: secret) }
    }

    @Test("a platform, a relying party and a revoked key changed in the store are seen by the next lookup", arguments: Backend.allCases)
    func nextLookupSeesChanges(backend: Backend) throws {
        let sesame = try backend.makeSesame(configurationRefresh: .zero)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let (key, secret) = try sesame.apiKeys.create(projectID: project.id, name: "server", scopes: [.usersWrite])
        #expect(try sesame.apiKeys.authenticate(secret, requiring: .usersWrite).id == key.id)
        #expect(try sesame.projects.get(project.id).platforms.isEmpty)
        // Written beside the services (as another process would), so only the version tells the cache.
        try sesame.store.platforms.add(PlatformRecord(id: "p1", projectID: project.id, kind: "web", name: "Web", hostname: "shop.example",
                                                      createdAt: Date()))
        #expect(try sesame.projects.get(project.id).platforms.map(\.id) == ["p1"])
        try sesame.store.projects.setRelyingParty(projectID: project.id, rpID: "login.shop.example", rpName: "Shop", at: Date())
        #expect(try sesame.projects.get(project.id).relyingPartyID == "login.shop.example")
        _ = try sesame.store.apiKeys.revoke(projectID: project.id, id: key.id)
        #expect(throws: SesameError.code(.unauthorized)) { try sesame.apiKeys.authenticate(secret, requiring: .usersWrite) }
    }

    @Test("one request reads the version once; another node's change is seen by the next request, the request's own at once",
          arguments: Backend.allCases)
    func oneReadPerRequest(backend: Backend) throws {
        let sesame = try backend.makeSesame(configurationRefresh: .zero)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let (_, secret) = try sesame.apiKeys.create(projectID: project.id, name: "server", scopes: [.usersWrite])
        let cache = sesame.configurationCache
        // Outside a request, every lookup reads the version.
        var before = cache.versionReadCount
        _ = try sesame.apiKeys.authenticate(secret, requiring: .usersWrite)
        _ = try sesame.projects.get(project.id)
        #expect(cache.versionReadCount == before + 2)
        // Inside one, the first lookup reads it and the others use that reading.
        before = cache.versionReadCount
        try Sesame.servingOneRequest {
            _ = try sesame.apiKeys.authenticate(secret, requiring: .usersWrite)
            for _ in 0..<3 { #expect(try sesame.projects.get(project.id).relyingPartyID == "shop.example") }
            // Another node (here: the store beside the services) changes the relying party meanwhile: this request
            // keeps its view.
            try sesame.store.projects.setRelyingParty(projectID: project.id, rpID: "login.shop.example", rpName: "Shop", at: Date())
            #expect(try sesame.projects.get(project.id).relyingPartyID == "shop.example")
        }
        #expect(cache.versionReadCount == before + 1)
        // The next request sees it.
        #expect(try Sesame.servingOneRequest { try sesame.projects.get(project.id).relyingPartyID } == "login.shop.example")
        // A request's own change is seen by its next lookup (the change reads the version again).
        try Sesame.servingOneRequest {
            #expect(try sesame.projects.get(project.id).platforms.isEmpty)
            let added = try sesame.projects.addPlatform(projectID: project.id, .web(hostname: "shop.example"))
            #expect(try sesame.projects.get(project.id).platforms.map(\.id) == [added.id])
            #expect(try sesame.projects.setRelyingParty(projectID: project.id, id: "shop.example", name: "Shop").relyingPartyID == "shop.example")
            #expect(try sesame.projects.get(project.id).relyingPartyID == "shop.example")
        }
        // A key revoked inside a request fails that request's next authentication.
        let (other, otherSecret) = try sesame.apiKeys.create(projectID: project.id, name: "other", scopes: [.usersWrite])
        try Sesame.servingOneRequest {
            _ = try sesame.apiKeys.authenticate(otherSecret, requiring: .usersWrite)
            try sesame.apiKeys.revoke(projectID: project.id, id: other.id)
            #expect(throws: SesameError.code(.unauthorized)) { try sesame.apiKeys.authenticate(otherSecret, requiring: .usersWrite) }
        }
        // A request served within another reads the version for itself; the outer one goes on with its own reading.
        try Sesame.servingOneRequest {
            _ = try sesame.projects.get(project.id)
            let reads = cache.versionReadCount
            try Sesame.servingOneRequest { _ = try sesame.projects.get(project.id) }
            _ = try sesame.projects.get(project.id)
            #expect(cache.versionReadCount == reads + 1)
        }
        // After the requests, lookups on this thread are outside any request again.
        before = cache.versionReadCount
        _ = try sesame.projects.get(project.id)
        _ = try sesame.projects.get(project.id)
        #expect(cache.versionReadCount == before + 2)
    }

    @Test("an action code's default outcome set in the store is seen by the next track; one set in a request at once",
          arguments: Backend.allCases)
    func actionOutcomes(backend: Backend) throws {
        let sesame = try backend.makeSesame(configurationRefresh: .zero)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        func track() throws -> ActionState { try sesame.authsignal.track(project: project, userID: "u1", actionCode: "pay", input: TrackInput()).action.state }
        #expect(try track() == .allow)
        // Written beside the services (as the CLI in another process would), so only the version tells the cache.
        try sesame.store.authsignal.setOutcome(projectID: project.id, actionCode: "pay", state: ActionState.block.rawValue)
        #expect(try track() == .block)
        try sesame.store.authsignal.setOutcome(projectID: project.id, actionCode: "pay", state: ActionState.reviewRequired.rawValue)
        #expect(try track() == .reviewRequired)
        try sesame.store.authsignal.setOutcome(projectID: project.id, actionCode: "pay", state: nil)
        #expect(try track() == .allow)
        try Sesame.servingOneRequest {
            #expect(try track() == .allow)
            try sesame.authsignal.setOutcome(projectID: project.id, actionCode: "pay", state: .block)
            #expect(try track() == .block)
        }
    }

    @Test("a reading of the version serves every request for the refresh interval; a change made elsewhere is served after it, one made through the services at once",
          arguments: Backend.allCases)
    func refreshInterval(backend: Backend) throws {
        let interval = Duration.milliseconds(300)
        let sesame = try backend.makeSesame(configurationRefresh: interval)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let (key, secret) = try sesame.apiKeys.create(projectID: project.id, name: "server", scopes: [.usersWrite])
        let cache = sesame.configurationCache
        func relyingParty() throws -> String { try Sesame.servingOneRequest { try sesame.projects.get(project.id).relyingPartyID } }
        func authenticates() -> Bool { (try? Sesame.servingOneRequest { try sesame.apiKeys.authenticate(secret, requiring: .usersWrite) }) != nil }

        // A change through the services drops this node's reading: the version is read again and the change seen at once.
        #expect(try relyingParty() == "shop.example")
        var reads = cache.versionReadCount
        _ = try sesame.projects.setRelyingParty(projectID: project.id, id: "login.shop.example", name: "Shop")
        #expect(try relyingParty() == "login.shop.example")
        #expect(cache.versionReadCount > reads)
        #expect(authenticates())

        // Then requests within the interval read nothing, and do not see a change made beside the services...
        var readAt = ContinuousClock.now
        reads = cache.versionReadCount
        try sesame.store.projects.setRelyingParty(projectID: project.id, rpID: "shop.example", rpName: "Shop", at: Date())
        _ = try sesame.store.apiKeys.revoke(projectID: project.id, id: key.id)
        var stale = 0
        while ContinuousClock.now - readAt < interval / 2 {
            if try relyingParty() == "login.shop.example", authenticates() { stale += 1 }
        }
        #expect(stale > 0)
        #expect(cache.versionReadCount == reads, "no version read within the interval")
        // ...which every request after the interval does: one reads the version, the others use that reading.
        Thread.sleep(forTimeInterval: 0.35)
        readAt = ContinuousClock.now
        #expect(try relyingParty() == "shop.example")
        #expect(!authenticates(), "the revoked key is refused after the interval")
        for _ in 0..<5 { #expect(try relyingParty() == "shop.example") }
        if ContinuousClock.now - readAt < interval { #expect(cache.versionReadCount == reads + 1) }
    }

    @Test("a refresh interval is at most a second")
    func refreshIntervalBound() throws {
        #expect(ConfigurationCache(refreshInterval: .seconds(5)).refreshInterval == .seconds(1))
        #expect(ConfigurationCache(refreshInterval: .seconds(-1)).refreshInterval == .zero)
    }

    @Test("a key's last use is written on its first use, then at most once a minute", arguments: Backend.allCases)
    func touchOncePerMinute(backend: Backend) throws {
        let clock = ManualClock()
        let sesame = try backend.makeSesame(clock: clock)
        let project = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let (key, secret) = try sesame.apiKeys.create(projectID: project.id, name: "server", scopes: [.usersWrite])
        func lastUsed() throws -> Date? { try sesame.apiKeys.list(projectID: project.id).first { $0.id == key.id }?.lastUsedAt }
        let first = clock.now()
        _ = try sesame.apiKeys.authenticate(secret, requiring: .usersWrite)
        #expect(try lastUsed() == first)
        clock.advance(by: 59)
        _ = try sesame.apiKeys.authenticate(secret, requiring: .usersWrite)
        #expect(try lastUsed() == first, "no write within the minute")
        clock.advance(by: 1)
        _ = try sesame.apiKeys.authenticate(secret, requiring: .usersWrite)
        #expect(try lastUsed() == clock.now())
    }
}
