import Foundation
import SesameCrypto
import SesameStore

/// The Authsignal model over Sesame's domain: tenants are projects, tenant secrets are API keys that hold only
/// ``APIKey/Scope/authsignalTenant``, users are addressed by the integrator's user ID, and actions carry the state
/// that the track and result tokens point at. Passkey ceremonies run on the ceremony engine
/// (``AuthsignalService/registrationOptions(token:username:displayName:requestOrigin:)`` and its siblings).
public struct AuthsignalService: Sendable {
    let sesame: Sesame

    /// How long a track or result token works: 10 minutes.
    public static let tokenLifetime: TimeInterval = AuthsignalTokens.lifetime
    /// The action code of a tenant-authenticated sign-in that names none.
    public static let defaultSignInAction = "signInWithPasskey"

    var store: Store { sesame.store }
    var clock: any SesameClock { sesame.clock }
    var tokens: AuthsignalTokens { AuthsignalTokens(sesame: sesame) }

    // MARK: Tenants and secrets

    /// Creates a tenant secret for `projectID`; the secret is shown once and stored only as a hash.
    /// - Throws: `not_found` for an unknown project.
    public func createSecret(projectID: String) throws(SesameError) -> (key: APIKey, secret: String) {
        _ = try sesame.projects.get(projectID)
        return try sesame.apiKeys.create(projectID: projectID, name: "authsignal", scopes: [.authsignalTenant])
    }

    /// The tenant's secrets, revoked ones included.
    public func secrets(projectID: String) throws(SesameError) -> [APIKey] {
        try sesame.apiKeys.list(projectID: projectID).filter { $0.scopes == [.authsignalTenant] }
    }

    /// Revokes one of the tenant's secrets; it stops working at once on every node.
    /// - Throws: `not_found` when the tenant has no such secret.
    public func revokeSecret(projectID: String, id: String) throws(SesameError) {
        guard try secrets(projectID: projectID).contains(where: { $0.id == id }) else { throw SesameError(.notFound, "tenant secret") }
        try sesame.apiKeys.revoke(projectID: projectID, id: id)
    }

    /// The tenant whose live secret this is.
    /// - Throws: `unauthorized` for anything but a live tenant secret.
    public func tenant(secret: String) throws(SesameError) -> Project {
        let key: APIKey
        do { key = try sesame.apiKeys.authenticate(secret, requiring: .authsignalTenant) } catch where error.code == .forbidden {
            throw SesameError(.unauthorized, "not a tenant secret")
        }
        return try tenant(id: key.projectID)
    }

    /// The tenant with this ID (what the client SDKs send in tenant Basic).
    /// - Throws: `unauthorized` for an unknown tenant.
    public func tenant(id: String) throws(SesameError) -> Project {
        do { return try sesame.projects.get(id) } catch where error.code == .notFound || error.code == .invalidArgument {
            throw SesameError(.unauthorized, "unknown tenant")
        }
    }

    /// The claims of a genuine, unexpired token.
    /// - Throws: `unauthorized` (`token_invalid`) or `expired` (`token_expired`).
    public func verifyToken(_ token: String) throws(SesameError) -> (claims: AuthsignalTokenClaims, project: Project) {
        let claims = try tokens.verify(token)
        return (claims, try tenant(id: claims.aud))
    }

    // MARK: Limits

    /// Client-API calls a tenant may receive each minute, as a multiple of the per-IP limit.
    public static let tenantLimitFactor = 100

    /// Counts a client-API call from `clientIP` for `project`: at most the deployment's public per-IP limit
    /// (``InlineConfiguration/publicCallsPerMinutePerIP``, 60 by default) per minute and address (unless
    /// ``Sesame/perIPLimits`` is off), and ``tenantLimitFactor`` times that per tenant.
    /// - Throws: `rate_limited`.
    public func limitClientCall(project: Project, clientIP: String) throws(SesameError) {
        let perIP = sesame.inline.publicCallsPerMinutePerIP
        let perTenant = perIP.multipliedReportingOverflow(by: Self.tenantLimitFactor)
        let tenantLimit = perTenant.overflow ? Int.max : perTenant.partialValue
        var limits: [(key: String, limit: Int)] = [("authsignal-tenant:\(project.id)", tenantLimit)]
        if sesame.perIPLimits { limits.insert(("authsignal-ip:\(clientIP)", perIP), at: 0) }
        // One atomic step; an address over its own limit spends nothing of the tenant's.
        let decision = try sesame.rateLimiter.hit(limits, window: 60)
        guard decision.allowed else { throw SesameError(.rateLimited, "client calls per IP or tenant per minute", rateLimit: decision) }
    }

    // MARK: Checks

    /// Action codes: 1 to 64 of `A-Z a-z 0-9 _ -`.
    public static func checkActionCode(_ code: String) throws(SesameError) -> String {
        guard (1...64).contains(code.utf8.count), code.utf8.allSatisfy(isCodeByte) else {
            throw SesameError(.invalidArgument, "an action code is 1 to 64 of A-Z a-z 0-9 _ -")
        }
        return code
    }

    /// Integrator user IDs and idempotency keys: 1 to 255 bytes of printable text.
    public static func checkIdentifier(_ id: String, _ what: String) throws(SesameError) -> String {
        guard (1...255).contains(id.utf8.count), !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw SesameError(.invalidArgument, "\(what) is 1 to 255 bytes of printable text")
        }
        return id
    }

    private static func isCodeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    // MARK: Default outcomes

    /// Sets the outcome a track of `actionCode` gets (for example `BLOCK`), or with `nil` goes back to the default.
    /// - Throws: `invalid_argument`, `not_found` (project).
    public func setOutcome(projectID: String, actionCode: String, state: ActionState?) throws(SesameError) {
        _ = try sesame.projects.get(projectID)
        let code = try Self.checkActionCode(actionCode)
        try StoreErrors.map { () throws(StoreError) in try store.authsignal.setOutcome(projectID: projectID, actionCode: code, state: state?.rawValue) }
        sesame.configurationCache.noteChange()
    }

    /// The tenant's configured outcomes by action code.
    public func outcomes(projectID: String) throws(SesameError) -> [(actionCode: String, state: String)] {
        try StoreErrors.map { () throws(StoreError) in try store.authsignal.outcomes(projectID: projectID) }
    }

    /// The outcome the operator configured for `actionCode`, if any (from memory: outcomes are configuration).
    func configuredOutcome(project: Project, actionCode: String) throws(SesameError) -> ActionState? {
        try sesame.configurationCache.actionOutcomes(store, projectID: project.id) { () throws(SesameError) in
            Dictionary(try outcomes(projectID: project.id), uniquingKeysWith: { first, _ in first })
        }[actionCode].flatMap(ActionState.init(rawValue:))
    }
}

extension Sesame {
    /// The Authsignal model: tenants, users by integrator ID, actions, tokens and the passkey ceremonies on the engine.
    public var authsignal: AuthsignalService { AuthsignalService(sesame: self) }
}

extension AuthsignalAction {
    init(_ record: AuthsignalActionRecord) {
        self.init(id: record.id, userID: record.externalUserID, actionCode: record.actionCode, idempotencyKey: record.idempotencyKey,
                  state: ActionState(rawValue: record.state) ?? .challengeRequired, stateUpdatedAt: record.stateUpdatedAt,
                  createdAt: record.createdAt, verificationMethod: record.verificationMethod)
    }
}

extension AuthsignalActionRecord {
    var view: AuthsignalActionRecordView { AuthsignalActionRecordView(actionCode: actionCode, idempotencyKey: idempotencyKey) }
}
