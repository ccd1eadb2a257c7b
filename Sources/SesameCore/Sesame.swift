import SesameStore

/// The domain of one Sesame deployment: every service over one store and one clock.
public struct Sesame: Sendable {
    public let store: Store
    public let clock: any SesameClock
    /// Inline-verification settings (hosted pages and API URLs, webhook address policy).
    public let inline: InlineConfiguration
    /// The master keys that seal the secrets the server reads back (never stored in the database).
    public let masterKeys: MasterKeyring
    /// Whether the per-IP rate limits hold (passkey sign-in, token exchange, the public inline endpoints); off only
    /// by the development switch `--dev-no-ip-limits`, for one developer on loopback.
    public let perIPLimits: Bool
    private let signerOverride: (any VerificationTokenSigner)?
    /// Projects, platforms, API keys and secrets read from memory while the configuration version stays.
    let configurationCache: ConfigurationCache

    public var projects: ProjectService { ProjectService(store: store, clock: clock, cache: configurationCache) }
    public var apiKeys: APIKeyService { APIKeyService(store: store, clock: clock, cache: configurationCache) }
    public var challenges: ChallengeService { ChallengeService(store: store, clock: clock) }
    public var rateLimiter: RateLimiter { RateLimiter(store: store, clock: clock) }
    public var users: UserService { UserService(store: store, clock: clock) }
    public var sessions: SessionService { SessionService(store: store, clock: clock, secrets: secrets, perIPLimits: perIPLimits) }
    /// The one ceremony engine every face's passkey registration and sign-in finish through.
    public var ceremonies: CeremonyEngine { CeremonyEngine(store: store, clock: clock) }
    public var passkeys: PasskeyService { PasskeyService(store: store, clock: clock, secrets: secrets, perIPLimits: perIPLimits) }
    public var jwts: JWTService { JWTService(store: store, clock: clock, secrets: secrets) }
    /// Sealing, opening and re-sealing the secrets at rest under ``masterKeys``.
    public var secrets: SecretsAtRest { SecretsAtRest(store: store, clock: clock, cache: configurationCache, keys: masterKeys) }
    public var housekeeping: Housekeeping { Housekeeping(store: store, clock: clock) }
    public var partners: PartnerService { PartnerService(store: store, clock: clock, cache: configurationCache, configuration: inline) }
    public var verifications: VerificationService { VerificationService(sesame: self) }
    public var inlinePasskey: InlinePasskeyService { InlinePasskeyService(sesame: self) }
    public var handOff: HandOffService { HandOffService(sesame: self) }
    /// The web widget's public calls (site keys, create-verification, status).
    public var widget: WidgetService { WidgetService(sesame: self) }
    /// The hosted setup page's sign-in, "Create your ID" and added passkeys.
    public var setup: SetupService { SetupService(sesame: self) }
    public var signingKeys: SigningKeyService { SigningKeyService(store: store, clock: clock, secrets: secrets) }
    public var webhooks: WebhookOutbox { WebhookOutbox(store: store, clock: clock, configuration: inline, secrets: secrets) }
    /// What signs verification tokens: the stored signing keys unless a test replaced it.
    public var tokenSigner: any VerificationTokenSigner { signerOverride ?? signingKeys }

    /// How long one reading of the configuration version serves unless told: a change made on another node or by the CLI
    /// is served here within it.
    public static let defaultConfigurationRefresh: Duration = .milliseconds(250)
    /// The longest a reading of the configuration version may serve: every change reaches every node within a second.
    public static let longestConfigurationRefresh: Duration = .seconds(1)

    /// Serves one request in `body`: its configuration lookups all use the version its first lookup saw, read at most
    /// once per refresh interval (see ``ConfigurationCache``). The server wraps every request in it.
    public static func servingOneRequest<T>(_ body: () throws -> T) rethrows -> T {
        let memo = ConfigurationCache.RequestMemo.forThisThread()
        // A request served within another (a test's) has a reading of its own; the outer one's is back afterwards.
        let outer = (memo.serving, memo.version)
        (memo.serving, memo.version) = (true, nil)
        defer { (memo.serving, memo.version) = outer }
        return try body()
    }

    /// Creates the domain over an opened store.
    /// - Parameters:
    ///   - masterKeys: the master keys (``MasterKeyring/none`` leaves every sealed secret unusable).
    ///   - tokenSigner: replaces the stored signing keys (tests of a failing signer).
    ///   - perIPLimits: false switches the per-IP rate limits off (development only).
    ///   - configurationRefresh: how long one reading of the configuration version serves, so how soon a change made
    ///     elsewhere (another node, the CLI) is served here (see ``ConfigurationCache``); at most a second.
    public init(store: Store, clock: any SesameClock = SystemClock(), inline: InlineConfiguration = InlineConfiguration(),
                masterKeys: MasterKeyring, tokenSigner: (any VerificationTokenSigner)? = nil, perIPLimits: Bool = true,
                configurationRefresh: Duration = defaultConfigurationRefresh) {
        self.store = store
        self.configurationCache = ConfigurationCache(refreshInterval: configurationRefresh)
        self.clock = clock
        self.inline = inline
        self.masterKeys = masterKeys
        self.signerOverride = tokenSigner
        self.perIPLimits = perIPLimits
    }
}
