import Foundation
import SesameStore

/// The environment of a partner's API key; it carries over to grants, requests, links, tokens and webhooks, and
/// nothing crosses from one environment to the other.
public enum PartnerEnvironment: String, Sendable, Hashable, CaseIterable {
    case live
    case test
}

/// An API client of a project for inline verification (an `org_…` organization on the wire).
public struct Partner: Sendable, Hashable {
    public let id: String
    public let projectID: String
    /// The name people see on the hosted pages.
    public let name: String
    public let createdAt: Date
}

/// A partner authenticated by an API key or a grant, in that secret's environment.
public struct PartnerCaller: Sendable, Hashable {
    public let partner: Partner
    public let environment: PartnerEnvironment
}

/// A native app a partner registered. Only an approved app counts: it enters the relying party's association files
/// and, for Android, the accepted origins.
public struct PartnerApp: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        case pending, approved, rejected, revoked
    }

    public let id: String
    public let partnerID: String
    /// `.apple(teamID:bundleID:)` or `.android(packageName:sha256Fingerprints:)`.
    public let platform: Platform
    public let state: State
    public let createdAt: Date
}

/// A partner API key as listed (the secret is shown once, at creation).
public struct PartnerAPIKey: Sendable, Hashable {
    public let id: String
    public let environment: PartnerEnvironment
    public let createdAt: Date
    public let revokedAt: Date?
}

/// A 5-minute grant for creating verification links, opened with an API key.
public struct PartnerGrant: Sendable, Hashable {
    /// `bss_` and 43 base64url characters; shown once, stored hashed.
    public let secret: String
    public let expiresAt: Date
}

/// A webhook endpoint of a partner in one environment.
public struct WebhookEndpoint: Sendable, Hashable {
    public let id: String
    public let partnerID: String
    public let environment: PartnerEnvironment
    public let url: String
    /// Whether deliveries go out (a `410 Gone` disables it).
    public let isEnabled: Bool
    public let createdAt: Date
}

/// A secured account: a partner's `partner_user_ref` linked to one person of the project.
public struct PartnerLink: Sendable, Hashable {
    /// New on every (re)link, so a relink between passkey-options and passkey-complete is detected.
    public let id: String
    public let partnerID: String
    public let environment: PartnerEnvironment
    public let partnerUserRef: String
    public let userID: String
    public let createdAt: Date
}

/// Partners and what belongs to them: API keys and grants, native apps, webhook endpoints and links.
public struct PartnerService: Sendable {
    let store: Store
    let clock: any SesameClock
    let cache: ConfigurationCache
    let configuration: InlineConfiguration

    /// How long a grant works: 5 minutes.
    public static let grantLifetime: TimeInterval = 300
    static let grantPrefix = "bss_"

    /// The API key prefix of an environment: `sesame_live_sk_` or `sesame_test_sk_`.
    public static func keyPrefix(_ environment: PartnerEnvironment) -> String { "sesame_\(environment.rawValue)_sk_" }

    // MARK: Partners

    /// Creates a partner of a project.
    /// - Throws: `invalid_argument` (name), `not_found` (project).
    public func create(projectID: String, name: String) throws(SesameError) -> Partner {
        let record = PartnerRecord(id: "org_" + Identifiers.unique(), projectID: projectID, name: try ProjectService.checkName(name),
                                   createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.partners.create(record) }
        cache.noteChange()
        return Partner(record: record)
    }

    /// - Throws: `not_found`.
    public func get(_ id: String) throws(SesameError) -> Partner {
        let record = try cache.partner(store, id: id) { () throws(SesameError) in
            try StoreErrors.map { () throws(StoreError) in try store.partners.get(id: id) }
        }
        guard let record else { throw SesameError(.notFound, "partner") }
        return Partner(record: record)
    }

    /// A project's partners, oldest first.
    public func list(projectID: String) throws(SesameError) -> [Partner] {
        try StoreErrors.map { () throws(StoreError) in try store.partners.list(projectID: projectID).map(Partner.init) }
    }

    // MARK: API keys and grants

    /// Creates an API key for one environment; the secret is returned once.
    public func createAPIKey(partnerID: String, environment: PartnerEnvironment) throws(SesameError) -> (key: PartnerAPIKey, secret: String) {
        let secret = Identifiers.secret(prefix: Self.keyPrefix(environment))
        let record = PartnerSecretRecord(id: Identifiers.unique(), partnerID: try get(partnerID).id, environment: environment.rawValue,
                                         kind: PartnerSecretRecord.apiKey, secretHash: Identifiers.hash(secret), createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.partners.createSecret(record) }
        cache.noteChange()
        return (PartnerAPIKey(record: record), secret)
    }

    /// A partner's API keys, revoked ones included.
    public func listAPIKeys(partnerID: String) throws(SesameError) -> [PartnerAPIKey] {
        try StoreErrors.map { () throws(StoreError) in try store.partners.listKeys(partnerID: partnerID).map(PartnerAPIKey.init) }
    }

    /// Revokes an API key.
    /// - Throws: `not_found` when there is no such unrevoked key.
    public func revokeAPIKey(partnerID: String, id: String) throws(SesameError) {
        let revoked = try StoreErrors.map { () throws(StoreError) in try store.partners.revokeSecret(partnerID: partnerID, id: id, at: clock.now()) }
        guard revoked else { throw SesameError(.notFound, "API key") }
        cache.noteChange()
    }

    /// The partner and environment of an API key.
    /// - Throws: `unauthorized` for anything but a live key.
    public func authenticate(apiKey: String) throws(SesameError) -> PartnerCaller {
        try caller(secret: apiKey, kind: PartnerSecretRecord.apiKey)
    }

    /// Opens a 5-minute grant in the caller's environment.
    ///
    /// The grant is ceremony state in flight, written as bookkeeping (its commit does not wait for the disk): a power
    /// cut can only lose it as its expiry would (`invalid_grant`, and the partner opens another), and the verification
    /// link it opens is a durable commit, whose flush carries the grant with it.
    public func openGrant(_ caller: PartnerCaller) throws(SesameError) -> PartnerGrant {
        let secret = Identifiers.secret(prefix: Self.grantPrefix)
        let now = clock.now()
        let record = PartnerSecretRecord(
            id: Identifiers.unique(), partnerID: caller.partner.id, environment: caller.environment.rawValue, kind: PartnerSecretRecord.grant,
            secretHash: Identifiers.hash(secret), createdAt: now, expiresAt: now.addingTimeInterval(Self.grantLifetime)
        )
        try StoreErrors.map { () throws(StoreError) in try store.partners.createSecret(record, durability: .process) }
        return PartnerGrant(secret: secret, expiresAt: now.addingTimeInterval(Self.grantLifetime))
    }

    /// The partner and environment of an open grant.
    /// - Throws: `unauthorized` for an unknown, expired or revoked grant.
    public func authenticate(grant: String) throws(SesameError) -> PartnerCaller {
        try caller(secret: grant, kind: PartnerSecretRecord.grant)
    }

    /// Ends a grant early.
    /// - Returns: whether an open grant ended.
    public func revokeGrant(_ grant: String) throws(SesameError) -> Bool {
        let caller: PartnerCaller
        do { caller = try authenticate(grant: grant) } catch where error.code == .unauthorized { return false }
        return try StoreErrors.map { () throws(StoreError) in
            try store.partners.revokeSecret(partnerID: caller.partner.id, hash: Identifiers.hash(grant), at: clock.now())
        }
    }

    private func caller(secret: String, kind: String) throws(SesameError) -> PartnerCaller {
        let prefixes = kind == PartnerSecretRecord.grant ? [Self.grantPrefix] : PartnerEnvironment.allCases.map(Self.keyPrefix)
        guard secret.count <= 128, prefixes.contains(where: secret.hasPrefix) else { throw SesameError(.unauthorized, "not a partner \(kind)") }
        let hash = Identifiers.hash(secret), now = clock.now()
        let read = { () throws(SesameError) in
            try StoreErrors.map { () throws(StoreError) in try store.partners.findSecret(hash: hash, kind: kind, now: now) }
        }
        // API keys are configuration, read from memory (a kept key is checked for expiry again); grants come and go with
        // every verification, so they are read.
        let found = kind == PartnerSecretRecord.apiKey ? try cache.partnerKey(store, secretHash: hash, load: read) : try read()
        guard let found, found.secret.expiresAt.map({ $0 > now }) ?? true,
              let environment = PartnerEnvironment(rawValue: found.secret.environment)
        else { throw SesameError(.unauthorized, "unknown, expired or revoked \(kind)") }
        return PartnerCaller(partner: Partner(record: found.partner), environment: environment)
    }

    // MARK: Native apps

    /// Registers a native app, pending approval.
    /// - Throws: `invalid_argument` (web platforms or malformed fields), `not_found` (partner).
    public func addApp(partnerID: String, platform: Platform) throws(SesameError) -> PartnerApp {
        let partner = try get(partnerID)
        let now = clock.now()
        let record: PartnerAppRecord
        switch try ProjectService.validated(platform) {
        case .apple(let team, let bundle):
            guard !team.isEmpty else { throw SesameError(.invalidArgument, "an iOS app needs its team ID") }
            record = PartnerAppRecord(id: Identifiers.unique(), partnerID: partner.id, platform: "ios", identifier: "\(team).\(bundle)",
                                      fingerprints: [], state: PartnerApp.State.pending.rawValue, createdAt: now, updatedAt: now)
        case .android(let package, let fingerprints):
            guard !fingerprints.isEmpty else { throw SesameError(.invalidArgument, "an Android app needs a signing certificate fingerprint") }
            record = PartnerAppRecord(id: Identifiers.unique(), partnerID: partner.id, platform: "android", identifier: package,
                                      fingerprints: fingerprints.map(PlatformValidation.fingerprintText), state: PartnerApp.State.pending.rawValue,
                                      createdAt: now, updatedAt: now)
        case .web:
            throw SesameError(.invalidArgument, "partner web origins never get the relying party; register a native app")
        }
        try StoreErrors.map { () throws(StoreError) in try store.partners.createApp(record) }
        cache.noteChange()
        return try PartnerApp(record: record)
    }

    /// A partner's apps, oldest first.
    public func listApps(partnerID: String) throws(SesameError) -> [PartnerApp] {
        let records = try StoreErrors.map { () throws(StoreError) in try store.partners.listApps(partnerID: partnerID) }
        return try records.map { record throws(SesameError) in try PartnerApp(record: record) }
    }

    /// Moves an app along `pending → approved | rejected`, `approved → revoked`.
    /// - Throws: `conflict` when the app is not in a state that allows the move, `not_found` when there is no such app.
    public func setAppState(partnerID: String, appID: String, to state: PartnerApp.State) throws(SesameError) -> PartnerApp {
        let from: [PartnerApp.State] = switch state {
        case .approved, .rejected: [.pending]
        case .revoked: [.approved]
        case .pending: []
        }
        let moved = try StoreErrors.map { () throws(StoreError) in
            try store.partners.setAppState(partnerID: partnerID, id: appID, from: from.map(\.rawValue), to: state.rawValue, at: clock.now())
        }
        if moved { cache.noteChange() }
        guard let app = try listApps(partnerID: partnerID).first(where: { $0.id == appID }) else { throw SesameError(.notFound, "app") }
        guard moved else { throw SesameError(.conflict, "an app in state \(app.state.rawValue) cannot become \(state.rawValue)") }
        return app
    }

    /// The platforms of every approved app of the project's partners.
    public func approvedPlatforms(projectID: String) throws(SesameError) -> [Platform] {
        try cache.approvedPlatforms(store, projectID: projectID) { () throws(SesameError) in
            let records = try StoreErrors.map { () throws(StoreError) in
                try store.partners.listApps(projectID: projectID, state: PartnerApp.State.approved.rawValue)
            }
            return try records.map { record throws(SesameError) in try PartnerApp(record: record).platform }
        }
    }

    // MARK: Webhook endpoints

    /// Adds a webhook endpoint for one environment and returns its signing secret (`whsec_…`), shown once here but kept
    /// by the server, which needs it to sign.
    /// - Throws: `invalid_argument` when the URL is not `https://` (or `http://` where allowed) or resolves to a
    ///   loopback, private or link-local address the operator did not allow.
    public func addWebhookEndpoint(partnerID: String, environment: PartnerEnvironment, url: String) throws(SesameError)
        -> (endpoint: WebhookEndpoint, secret: String)
    {
        let partner = try get(partnerID)
        _ = try EndpointAddressPolicy.check(url: url, allowPrivate: configuration.allowLocalWebhooks,
                                            allowHTTP: configuration.allowLocalWebhooks)
        let secret = StandardWebhooks.newSecret()
        let record = WebhookEndpointRecord(id: Identifiers.unique(), partnerID: partner.id, environment: environment.rawValue, url: url,
                                           secret: secret, state: WebhookEndpointRecord.enabled, createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.webhooks.createEndpoint(record) }
        return (WebhookEndpoint(record: record), secret)
    }

    /// A partner's webhook endpoints.
    public func listWebhookEndpoints(partnerID: String) throws(SesameError) -> [WebhookEndpoint] {
        try StoreErrors.map { () throws(StoreError) in try store.webhooks.listEndpoints(partnerID: partnerID).map(WebhookEndpoint.init) }
    }

    /// Removes an endpoint; its undelivered events are dropped.
    /// - Throws: `not_found`.
    public func removeWebhookEndpoint(partnerID: String, id: String) throws(SesameError) {
        let removed = try StoreErrors.map { () throws(StoreError) in try store.webhooks.deleteEndpoint(partnerID: partnerID, id: id) }
        guard removed else { throw SesameError(.notFound, "webhook endpoint") }
    }

    // MARK: Links

    /// A `partner_user_ref`: 1 to 128 of `A-Za-z0-9._:-`; never an email address.
    /// - Throws: `invalid_argument`.
    public static func checkRef(_ ref: String) throws(SesameError) -> String {
        guard (1...128).contains(ref.count), ref.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) }) else {
            throw SesameError(.invalidArgument, "partner_user_ref is 1 to 128 of A-Z a-z 0-9 . _ : - and never an email address")
        }
        return ref
    }

    /// Links a ref to a person of the partner's project (secures the account).
    /// - Throws: `invalid_argument`, `not_found` (partner or person), `conflict` (the ref or the person is linked already:
    ///   one human, one account).
    public func link(partnerID: String, environment: PartnerEnvironment, partnerUserRef: String, userID: String) throws(SesameError) -> PartnerLink {
        let partner = try get(partnerID)
        let ref = try Self.checkRef(partnerUserRef)
        let user = try StoreErrors.map { () throws(StoreError) in try store.users.get(projectID: partner.projectID, id: userID) }
        guard let user else { throw SesameError(.notFound, "user") }
        let record = PartnerLinkRecord(id: Identifiers.unique(), partnerID: partner.id, environment: environment.rawValue, partnerUserRef: ref,
                                       userID: user.id, createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.partners.createLink(record) }
        return PartnerLink(record: record)
    }

    /// Unlinks a ref.
    /// - Returns: whether it was linked.
    public func unlink(partnerID: String, environment: PartnerEnvironment, partnerUserRef: String) throws(SesameError) -> Bool {
        let ref = try Self.checkRef(partnerUserRef)
        return try StoreErrors.map { () throws(StoreError) in
            try store.partners.deleteLink(partnerID: partnerID, environment: environment.rawValue, partnerUserRef: ref)
        }
    }
}

extension Partner {
    init(record: PartnerRecord) {
        self.init(id: record.id, projectID: record.projectID, name: record.name, createdAt: record.createdAt)
    }
}

extension PartnerAPIKey {
    init(record: PartnerSecretRecord) {
        self.init(id: record.id, environment: PartnerEnvironment(rawValue: record.environment) ?? .test, createdAt: record.createdAt,
                  revokedAt: record.revokedAt)
    }
}

extension PartnerApp {
    init(record: PartnerAppRecord) throws(SesameError) {
        let platform: Platform
        if record.platform == "ios", let dot = record.identifier.firstIndex(of: ".") {
            platform = .apple(teamID: String(record.identifier[..<dot]), bundleID: String(record.identifier[record.identifier.index(after: dot)...]))
        } else if record.platform == "android" {
            let fingerprints = try record.fingerprints.map { text throws(SesameError) in try PlatformValidation.sha256Fingerprint(text) }
            platform = .android(packageName: record.identifier, sha256Fingerprints: fingerprints)
        } else {
            throw SesameError(.internalFailure, "stored app has an unknown platform")
        }
        guard let state = State(rawValue: record.state) else { throw SesameError(.internalFailure, "stored app has an unknown state") }
        self.init(id: record.id, partnerID: record.partnerID, platform: platform, state: state, createdAt: record.createdAt)
    }
}

extension WebhookEndpoint {
    init(record: WebhookEndpointRecord) {
        self.init(id: record.id, partnerID: record.partnerID, environment: PartnerEnvironment(rawValue: record.environment) ?? .test,
                  url: record.url, isEnabled: record.state == WebhookEndpointRecord.enabled, createdAt: record.createdAt)
    }
}

extension PartnerLink {
    init(record: PartnerLinkRecord) {
        self.init(id: record.id, partnerID: record.partnerID, environment: PartnerEnvironment(rawValue: record.environment) ?? .test,
                  partnerUserRef: record.partnerUserRef, userID: record.userID, createdAt: record.createdAt)
    }
}
