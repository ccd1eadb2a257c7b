import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// Short-lived JSON Web Tokens (HS256) that stand for one session: `{"userId", "sessionId", "iat", "exp"}`, signed
/// with a random per-project secret kept in the database, sealed under the master key. A token works only while its
/// session does.
public struct JWTService: Sendable {
    let store: Store
    let clock: any SesameClock
    let secrets: SecretsAtRest

    /// The lifetime when the caller names none: 15 minutes.
    public static let defaultLifetime: TimeInterval = 900
    /// The longest lifetime: one hour.
    public static let maximumLifetime: TimeInterval = 3600

    /// A token for `session`, living `lifetime` seconds (0 to one hour; 15 minutes by default).
    /// - Throws: `invalid_argument` for a bad lifetime.
    public func issue(for session: Session, lifetime: TimeInterval?) throws(SesameError) -> String {
        let lifetime = lifetime ?? Self.defaultLifetime
        guard lifetime >= 0, lifetime <= Self.maximumLifetime, lifetime.rounded() == lifetime else {
            throw SesameError(.invalidArgument, "duration must be a whole number of seconds from 0 to 3600")
        }
        let now = Int(clock.now().timeIntervalSince1970)  // trap-safe: server clock
        let claims = Claims(userId: session.userID, sessionId: session.id, iat: now, exp: now + Int(lifetime))  // trap-safe: lifetime checked to 0...3600 above
        guard let encoded = try? JSONEncoder().encode(claims) else { preconditionFailure("two strings and two integers encode") }
        return HS256JWT.sign(payload: [UInt8](encoded), key: try secret(session.projectID))
    }

    /// The live session and user a token stands for.
    /// - Throws: `invalid_jwt` for a malformed, forged or expired token, or one whose session ended or user is blocked.
    public func verify(projectID: String, token: String) throws(SesameError) -> (session: Session, user: User) {
        let invalid = SesameError(.invalidJWT, "the JWT is invalid or expired")
        guard let payload = HS256JWT.verifiedPayload(token, key: try secret(projectID)),
              let claims = try? JSONDecoder().decode(Claims.self, from: Data(payload)),
              claims.exp > Int(clock.now().timeIntervalSince1970)  // trap-safe: server clock
        else { throw invalid }
        let found = try StoreErrors.map { () throws(StoreError) -> (Session, User)? in
            guard let record = try store.sessions.get(projectID: projectID, userID: claims.userId, id: claims.sessionId, now: clock.now()),
                  let user = try store.users.get(projectID: projectID, id: record.userID), user.status == UserRecord.active
            else { return nil }
            return (Session(record: record), User(record: user))
        }
        guard let found else { throw invalid }
        return found
    }

    private struct Claims: Codable {
        let userId: String
        let sessionId: String
        let iat: Int
        let exp: Int
    }

    /// A key for another kind of token of the project, derived from its secret: HMAC-SHA256(secret, `label`), so
    /// tokens of different kinds never verify as each other.
    func derivedKey(projectID: String, label: String) throws(SesameError) -> [UInt8] {
        HMAC.sha256(key: try secret(projectID), message: Array(label.utf8))
    }

    /// The project's secret, made on first use; stored sealed (bound to the project), opened here.
    private func secret(_ projectID: String) throws(SesameError) -> [UInt8] {
        try secrets.cache.jwtSecret(store, projectID: projectID) { () throws(SesameError) in
            let candidate = Array(try secrets.seal(SecureRandom.bytes(count: 32), for: .jwtSecret, row: projectID).utf8)
            let stored = try StoreErrors.map { () throws(StoreError) in
                try store.sessions.jwtSecret(projectID: projectID, candidate: candidate, now: clock.now())
            }
            return try secrets.open(stored, for: .jwtSecret, row: projectID)
        }
    }
}

/// Compact HS256 JSON Web Tokens: `base64url({"alg":"HS256","typ":"JWT"}).base64url(payload).base64url(HMAC)`.
enum HS256JWT {
    /// The longest token read, in bytes.
    static let maximumLength = 4096
    private static let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    /// Signs a JSON payload with `key`.
    static func sign(payload: [UInt8], key: [UInt8]) -> String {
        let input = header + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMAC.sha256(key: key, message: Array(input.utf8)))
    }

    /// The payload of a token whose HMAC under `key` checks (compared in constant time) and whose header says HS256;
    /// `nil` for anything else.
    static func verifiedPayload(_ token: String, key: [UInt8]) -> [UInt8]? {
        guard let parts = segments(token), let signature = try? Base64URL.decode(String(parts.signature)) else { return nil }
        let expected = HMAC.sha256(key: key, message: Array(parts.signingInput.utf8))
        guard constantTimeEquals(signature, expected), let header = try? Base64URL.decode(String(parts.header)),
              JSONObjectMembers(header)?.string("alg") == "HS256"
        else { return nil }
        return try? Base64URL.decode(String(parts.payload))
    }

    /// The parts of a compact token of at most ``maximumLength`` bytes and exactly three dot-separated parts, found
    /// byte by byte; `signingInput` is the header, the dot and the payload, as signed.
    static func segments(_ token: String) -> (header: Substring, payload: Substring, signature: Substring, signingInput: Substring)? {
        let utf8 = token.utf8, dot = UInt8(ascii: ".")
        guard utf8.count <= maximumLength, let first = utf8.firstIndex(of: dot) else { return nil }
        let payloadStart = utf8.index(after: first)
        guard let second = utf8[payloadStart...].firstIndex(of: dot) else { return nil }
        let signatureStart = utf8.index(after: second)
        guard !utf8[signatureStart...].contains(dot) else { return nil }
        return (token[..<first], token[payloadStart..<second], token[signatureStart...], token[..<second])
    }
}
