import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// A partner's verification request as the partner sees it.
public struct VerificationRequest: Sendable, Hashable {
    /// What the partner reads: `pending`, `completed`, `expired` or `failed`.
    public enum Status: String, Sendable, Hashable {
        case pending, completed, expired, failed
    }

    /// `req_` and 32 lowercase hex characters: the only credential of the public endpoints.
    public let id: String
    public let partnerID: String
    public let environment: PartnerEnvironment
    public let scope: String
    public let partnerUserRef: String?
    /// Whether completing it on the hand-off also links the ref.
    public let linkIntent: Bool
    /// The partner's metadata object, as JSON text.
    public let metadata: String?
    public let status: Status
    /// Why it failed (`user_denied`, `already_linked`), when it did.
    public let failureReason: String?
    /// The verification token, once completed; the same on every read until it expires (5 minutes), then erased.
    public let verificationToken: String?
    public let createdAt: Date
    public let expiresAt: Date
    public let completedAt: Date?
}

/// Creates verification requests, reports their status, and checks tokens online.
///
/// An issued token is kept only as long as the status call needs it: sealed under the master key on the request, it is
/// returned, the same every time, until its own `exp` (5 minutes after completion), and erased by the sweep after
/// that; the webhook keeps its copy sealed beside the body until nothing is left to deliver (``WebhookOutbox``).
public struct VerificationService: Sendable {
    let sesame: Sesame

    /// How long a request lives: 5 minutes.
    public static let lifetime: TimeInterval = 300
    /// The largest metadata object, serialized.
    public static let maximumMetadataBytes = 2048

    /// A new request ID: `req_` and 128 random bits in lowercase hex.
    public static func newRequestID() -> String {
        "req_" + SecureRandom.bytes(count: 16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// Whether `text` has the shape of a request ID (checked before any lookup).
    public static func isRequestID(_ text: String) -> Bool {
        text.utf8.count == 36 && text.hasPrefix("req_") && text.utf8.dropFirst(4).allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A scope: 1 to 64 of `a-z 0-9 _ . : -`.
    /// - Throws: `invalid_argument`.
    public static func checkScope(_ scope: String) throws(SesameError) -> String {
        guard (1...64).contains(scope.count), scope.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || "_.:-".contains($0)) }) else {
            throw SesameError(.invalidArgument, "scope is 1 to 64 of a-z 0-9 _ . : -")
        }
        return scope
    }

    /// Metadata: a JSON object of at most 2 KB as compact JSON, kept as that text (members in name order), read
    /// strictly (``JSONValue/init(jsonEncoded:)``: no member name twice).
    /// - Throws: `invalid_argument`.
    public static func checkMetadata(_ json: [UInt8]) throws(SesameError) -> String {
        guard let value = try? JSONValue(jsonEncoded: json), case .object = value, let compact = try? value.jsonEncoded(),
              compact.count <= maximumMetadataBytes
        else { throw SesameError(.invalidArgument, "metadata is a JSON object of at most 2 KB") }
        return String(decoding: compact, as: UTF8.self)
    }

    /// A request's stored metadata as JSON text to answer with, when it is one JSON object (as ``checkMetadata(_:)``
    /// keeps it); `nil` for none, or for a stored value that is not one.
    public static func storedMetadata(_ text: String?) -> [UInt8]? {
        guard let text else { return nil }
        let bytes = Array(text.utf8)
        return JSONObjectMembers(bytes) == nil ? nil : bytes
    }

    /// Opens a request in the caller's environment, living 5 minutes.
    /// - Parameters:
    ///   - partnerUserRef: the partner's stable ID of the person, when the request is for one linked person.
    ///   - link: the hand-off also links the ref (needs `partnerUserRef`).
    ///   - metadata: a checked JSON object (``checkMetadata(_:)``).
    ///   - returnURL: where the hand-off page sends the person when done; its origin must be a registered return origin.
    ///   - widgetOrigin: the page origin a widget request comes from, already checked against its site key.
    /// - Throws: `invalid_argument` (reason `return_url_not_allowed` for a refused `returnURL`).
    public func create(_ caller: PartnerCaller, scope: String, partnerUserRef: String?, link: Bool, metadata: String?,
                       returnURL: String? = nil, widgetOrigin: String? = nil) throws(SesameError) -> VerificationRequest
    {
        let scope = try Self.checkScope(scope)
        let ref = try partnerUserRef.map(PartnerService.checkRef)
        if link, ref == nil { throw SesameError(.invalidArgument, "link needs partner_user_ref") }
        let returnURL = try returnURL.map { url throws(SesameError) in try sesame.partners.checkReturnURL(partnerID: caller.partner.id, url) }
        let now = sesame.clock.now()
        let record = VerificationRequestRecord(
            id: Self.newRequestID(), partnerID: caller.partner.id, environment: caller.environment.rawValue, scope: scope, partnerUserRef: ref,
            linkIntent: link, returnURL: returnURL, metadata: metadata, createdAt: now, expiresAt: now.addingTimeInterval(Self.lifetime),
            widgetOrigin: widgetOrigin
        )
        try StoreErrors.map { () throws(StoreError) in try sesame.store.verificationRequests.create(record) }
        return VerificationRequest(record: record, now: now)
    }

    /// A request of the caller's partner and environment; any other request reads as absent.
    /// - Throws: `not_found`.
    public func status(_ caller: PartnerCaller, requestID: String) throws(SesameError) -> VerificationRequest {
        guard Self.isRequestID(requestID) else { throw SesameError(.notFound, "verification request") }
        let record = try StoreErrors.map { () throws(StoreError) in try sesame.store.verificationRequests.get(id: requestID) }
        guard let record, record.partnerID == caller.partner.id, record.environment == caller.environment.rawValue else {
            throw SesameError(.notFound, "verification request")
        }
        let now = sesame.clock.now()
        return VerificationRequest(record: record, now: now, token: try Self.openToken(record, now: now, secrets: sesame.secrets))
    }

    /// A completed request's token, opened, while it is valid; `nil` once it has expired (it is then erased from the store).
    static func openToken(_ record: VerificationRequestRecord, now: Date, secrets: SecretsAtRest) throws(SesameError) -> String? {
        guard let sealed = record.token, let completedAt = record.completedAt,
              now.timeIntervalSince(completedAt) < Double(CompletionRoutine.tokenLifetime)
        else { return nil }
        return String(decoding: try secrets.open(Array(sealed.utf8), for: .verificationToken, row: record.id), as: UTF8.self)
    }

    /// The online token check: the token must be genuine, for this partner and environment, unexpired, and checked here
    /// for the first time (its `jti` is then recorded as used).
    /// - Returns: the claims, or the reason it is not valid: `malformed`, `invalid_signature`, `wrong_audience`,
    ///   `expired`, `unknown_request` or `already_used`.
    public func checkToken(_ caller: PartnerCaller, token: String) throws(SesameError) -> TokenCheck {
        let claims: VerificationTokenClaims
        do {
            claims = try sesame.signingKeys.verify(token)
        } catch where error.code == .invalidJWT {
            // The signing keys say which: `invalid_signature` or `malformed`.
            return TokenCheck(valid: false, reason: error.reason, claims: nil)
        }
        let now = sesame.clock.now()
        guard claims.aud == caller.partner.id, claims.env == caller.environment.rawValue, claims.iss == sesame.inline.issuer else {
            return TokenCheck(valid: false, reason: "wrong_audience", claims: nil)
        }
        let seconds = Int64(now.timeIntervalSince1970)  // trap-safe: server clock
        guard claims.exp > seconds, claims.iat <= seconds + 60 else { return TokenCheck(valid: false, reason: "expired", claims: nil) }
        let record = try StoreErrors.map { () throws(StoreError) in try sesame.store.verificationRequests.get(id: claims.requestID) }
        guard let record, record.partnerID == caller.partner.id, record.tokenID == claims.jti else {
            return TokenCheck(valid: false, reason: "unknown_request", claims: nil)
        }
        let first = try StoreErrors.map { () throws(StoreError) in
            try sesame.store.verificationRequests.markTokenChecked(id: record.id, tokenID: claims.jti, at: now)
        }
        return first ? TokenCheck(valid: true, reason: nil, claims: claims) : TokenCheck(valid: false, reason: "already_used", claims: nil)
    }
}

/// The answer of an online token check.
public struct TokenCheck: Sendable, Hashable {
    public let valid: Bool
    public let reason: String?
    public let claims: VerificationTokenClaims?
}

extension VerificationRequest {
    init(record: VerificationRequestRecord, now: Date, token: String? = nil) {
        let status: Status = switch record.status {
        case VerificationRequestRecord.completed: .completed
        case VerificationRequestRecord.failed: .failed
        default: record.isExpired(at: now) ? .expired : .pending
        }
        self.init(id: record.id, partnerID: record.partnerID, environment: PartnerEnvironment(rawValue: record.environment) ?? .test,
                  scope: record.scope, partnerUserRef: record.partnerUserRef, linkIntent: record.linkIntent, metadata: record.metadata,
                  status: status, failureReason: record.failureReason, verificationToken: token, createdAt: record.createdAt,
                  expiresAt: record.expiresAt, completedAt: record.completedAt)
    }
}
