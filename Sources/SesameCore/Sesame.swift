import SesameStore

/// The domain of one Sesame deployment: every service over one store and one clock.
public struct Sesame: Sendable {
    public let store: Store
    public let clock: any SesameClock
    public var projects: ProjectService { ProjectService(store: store, clock: clock) }
    public var apiKeys: APIKeyService { APIKeyService(store: store, clock: clock) }
    public var challenges: ChallengeService { ChallengeService(store: store, clock: clock) }
    public var rateLimiter: RateLimiter { RateLimiter(store: store, clock: clock) }
    public var users: UserService { UserService(store: store, clock: clock) }
    public var sessions: SessionService { SessionService(store: store, clock: clock) }
    public var passkeys: PasskeyService { PasskeyService(store: store, clock: clock) }
    public var jwts: JWTService { JWTService(store: store, clock: clock) }
    public var housekeeping: Housekeeping { Housekeeping(store: store, clock: clock) }

    /// Creates the domain over an opened store.
    public init(store: Store, clock: any SesameClock = SystemClock()) {
        self.store = store
        self.clock = clock
    }
}
