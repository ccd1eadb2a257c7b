import Foundation
import SesameCrypto
import WebAuthn

/// The claims of a track or result token (Authsignal's `TokenPayload`): who, which action, which scopes, until when.
public struct AuthsignalTokenClaims: Codable, Sendable, Hashable {
    /// The members Authsignal nests under `other`.
    public struct Other: Codable, Sendable, Hashable {
        public let tenantId: String
        public let userId: String
        public let actionCode: String
        public let idempotencyKey: String
    }

    /// The integrator's user ID.
    public let sub: String
    /// The tenant ID.
    public let aud: String
    public let iat: Int
    public let exp: Int
    public let jti: String
    /// Space-separated ``AuthenticatorScope`` values.
    public let scope: String
    public let other: Other

    /// The scopes the token carries (unknown words are ignored).
    public var scopes: Set<AuthenticatorScope> {
        Set(scope.split(separator: " ").compactMap { AuthenticatorScope(rawValue: String($0)) })
    }
}

/// Mints and checks the face's tokens: HS256 under a per-tenant key derived from the project's sealed JWT secret
/// (never the tenant secret), living ``lifetime`` (10 minutes).
struct AuthsignalTokens {
    let sesame: Sesame

    /// How long a track or result token works.
    static let lifetime: TimeInterval = 600
    private static let keyLabel = "sesame/authsignal-token/v1"

    /// A token for `userID`'s `action`, with `scopes`.
    func mint(projectID: String, userID: String, action: AuthsignalActionRecordView, scopes: Set<AuthenticatorScope>) throws(SesameError) -> String {
        let now = Int(sesame.clock.now().timeIntervalSince1970)  // trap-safe: server clock
        let claims = AuthsignalTokenClaims(
            sub: userID, aud: projectID, iat: now, exp: now + Int(Self.lifetime), jti: Identifiers.uuid(),  // trap-safe: a constant
            scope: AuthenticatorScope.allCases.filter(scopes.contains).map(\.rawValue).joined(separator: " "),
            other: .init(tenantId: projectID, userId: userID, actionCode: action.actionCode, idempotencyKey: action.idempotencyKey)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let payload = try? encoder.encode(claims) else { preconditionFailure("strings and integers encode") }
        return HS256JWT.sign(payload: Array(payload), key: try key(projectID))
    }

    /// The claims of a genuine, unexpired token; `projectID` pins the tenant when the caller knows it.
    /// - Throws: `unauthorized` (`token_invalid`: malformed, forged, another tenant's), `expired` (`token_expired`).
    func verify(_ token: String, projectID: String? = nil) throws(SesameError) -> AuthsignalTokenClaims {
        let invalid = SesameError(.unauthorized, "the token is malformed or forged", reason: "token_invalid")
        // The tenant is read from the unverified payload only to choose the key that then verifies it.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= HS256JWT.maximumLength, parts.count == 3, let unverified = try? Base64URL.decode(String(parts[1])),
              let tenant = (try? JSONDecoder().decode(AuthsignalTokenClaims.self, from: Data(unverified)))?.aud,
              projectID == nil || projectID == tenant
        else { throw invalid }
        guard (try? sesame.projects.get(tenant)) != nil,
              let payload = HS256JWT.verifiedPayload(token, key: try key(tenant)),
              let claims = try? JSONDecoder().decode(AuthsignalTokenClaims.self, from: Data(payload)), claims.aud == tenant,
              claims.other.tenantId == tenant, claims.other.userId == claims.sub
        else { throw invalid }
        guard claims.exp > Int(sesame.clock.now().timeIntervalSince1970) else {  // trap-safe: server clock
            throw SesameError(.expired, "the token expired", reason: "token_expired")
        }
        return claims
    }

    private func key(_ projectID: String) throws(SesameError) -> [UInt8] {
        try sesame.jwts.derivedKey(projectID: projectID, label: Self.keyLabel)
    }
}

/// The parts of an action a token names.
struct AuthsignalActionRecordView {
    let actionCode: String
    let idempotencyKey: String
}
