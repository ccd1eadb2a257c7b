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

/// The claims as a token's payload, written and read by hand (every token a ceremony touches is minted or checked):
/// compact JSON with members in name order, read strictly (a member given twice refuses the payload).
extension AuthsignalTokenClaims: JSONWritable {
    public func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("aud", aud)
            object.member("exp", exp)
            object.member("iat", iat)
            object.member("jti", jti)
            object.key("other")
            object.object { other in
                other.member("actionCode", self.other.actionCode)
                other.member("idempotencyKey", self.other.idempotencyKey)
                other.member("tenantId", self.other.tenantId)
                other.member("userId", self.other.userId)
            }
            object.member("scope", scope)
            object.member("sub", sub)
        }
    }

    /// The claims of a payload, or `nil` when a member is missing or of another type.
    init?(payload: [UInt8]) {
        guard let claims = JSONObjectMembers(payload), let sub = claims.string("sub"), let aud = claims.string("aud"),
              let iat = claims.number("iat").flatMap({ Int($0) }), let exp = claims.number("exp").flatMap({ Int($0) }),
              let jti = claims.string("jti"), let scope = claims.string("scope"), let other = claims.object("other").flatMap(JSONObjectMembers.init),
              let tenantID = other.string("tenantId"), let userID = other.string("userId"), let actionCode = other.string("actionCode"),
              let idempotencyKey = other.string("idempotencyKey")
        else { return nil }
        self.init(sub: sub, aud: aud, iat: iat, exp: exp, jti: jti, scope: scope,
                  other: Other(tenantId: tenantID, userId: userID, actionCode: actionCode, idempotencyKey: idempotencyKey))
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
        return HS256JWT.sign(payload: claims.jsonBytes, key: try key(projectID))
    }

    /// The claims of a genuine, unexpired token; `projectID` pins the tenant when the caller knows it.
    /// - Throws: `unauthorized` (`token_invalid`: malformed, forged, another tenant's), `expired` (`token_expired`).
    func verify(_ token: String, projectID: String? = nil) throws(SesameError) -> AuthsignalTokenClaims {
        let invalid = SesameError(.unauthorized, "the token is malformed or forged", reason: "token_invalid")
        // The tenant is read from the payload before its signature is checked only to choose the key that checks it;
        // the claims are trusted once the signature over these very bytes verified.
        guard let parts = HS256JWT.segments(token), let payload = try? Base64URL.decode(String(parts.payload)),
              let claims = AuthsignalTokenClaims(payload: payload), projectID == nil || projectID == claims.aud
        else { throw invalid }
        let tenant = claims.aud
        guard (try? sesame.projects.get(tenant)) != nil, HS256JWT.verifiedPayload(token, key: try key(tenant)) == payload,
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
