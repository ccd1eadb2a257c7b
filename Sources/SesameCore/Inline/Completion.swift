import Foundation
import SesameStore
import WebAuthn

/// The claims of a verification token (spec §2.4): what was verified, never who.
public struct VerificationTokenClaims: Codable, Sendable, Hashable {
    /// The API origin.
    public var iss: String
    /// The partner (`org_…`) that created the request.
    public var aud: String
    public var iat: Int64
    /// `iat + 300`.
    public var exp: Int64
    /// A random token ID, recorded when the token is checked online.
    public var jti: String
    public var requestID: String
    public var scope: String
    /// `live` or `test`.
    public var env: String
    /// Always `true`: tokens are minted only on success.
    public var verified: Bool
    /// Whether the confirming person is the one linked to `partner_user_ref`.
    public var linked: Bool
    /// The partner's own ref, echoed when the request had one.
    public var partnerUserRef: String?
    /// The claims version, 1.
    public var ver: Int

    enum CodingKeys: String, CodingKey {
        case iss, aud, iat, exp, jti, scope, env, verified, linked, ver
        case requestID = "request_id"
        case partnerUserRef = "partner_user_ref"
    }

    /// The claims as the token's JSON object (what `Codable` writes, without a coder: `partner_user_ref` only when set).
    public var jsonObject: [String: JSONValue] {
        var object: [String: JSONValue] = [
            "iss": .string(iss), "aud": .string(aud), "iat": .integer(Int(iat)), "exp": .integer(Int(exp)), "jti": .string(jti),  // trap-safe: Int is 64-bit
            "request_id": .string(requestID), "scope": .string(scope), "env": .string(env), "verified": .bool(verified),
            "linked": .bool(linked), "ver": .integer(ver),
        ]
        if let partnerUserRef { object["partner_user_ref"] = .string(partnerUserRef) }
        return object
    }
}

/// Signs verification tokens; ``SigningKeyService`` in production, replaceable to test a signer that fails.
public protocol VerificationTokenSigner: Sendable {
    /// The claims as a compact JWS.
    func sign(_ claims: VerificationTokenClaims) throws(SesameError) -> String
    /// This signer with what it reads from storage read now, so that its ``sign(_:)`` reads nothing and may run
    /// inside a transaction (which must not wait on another connection).
    func readied() throws(SesameError) -> any VerificationTokenSigner
}

/// Why a completion did not happen; each is a `failed` outcome code on the wire.
public enum CompletionRefusal: String, Error, Sendable, Hashable {
    /// The request was completed, failed or expired first (by the hand-off, for example).
    case requestClosed = "request_closed"
    /// The hand-off's link could not be written: the ref or the person is linked already (one human, one account).
    case alreadyLinked = "already_linked"
    /// Minting the token or writing the completion failed; the request stays pending.
    case completionFailed = "completion_failed"
}

/// The one routine that completes a request, on every path (inline passkey and hand-off): the request moves from
/// pending to completed with its token, and `gate.human_verified` goes into the outbox in the same transaction, the
/// one that records the passkey's use (``InlineCeremony/finish(_:challengeID:credentialJSON:clientIP:binding:policy:admit:)``).
enum CompletionRoutine {
    /// How long a verification token is valid: 5 minutes.
    static let tokenLifetime: Int64 = 300
    static let eventType = "gate.human_verified"

    /// A completion ready to write: its token minted and sealed, its event built.
    struct Prepared {
        let request: VerificationRequestRecord
        /// Whether the completion links the request's ref to the passkey's owner.
        let linking: Bool
        let linked: Bool
        let sealedToken: String
        let tokenID: String
        let event: WebhookEventRecord
        let now: Date
    }

    /// Mints and seals the token of `request` for an assertion that answered `challenge`, and builds its event.
    /// The person is linked when the challenge was issued to the linked person; a challenge issued to nobody (the
    /// hand-off of an unlinked request) links the ref to the passkey's owner when the request intends to link.
    /// - Parameter signer: ready (``VerificationTokenSigner/readied()``): this runs inside the completion's transaction.
    static func prepare(_ request: VerificationRequestRecord, challenge: ChallengeRecord, signer: any VerificationTokenSigner,
                        sesame: Sesame) throws(CompletionRefusal) -> Prepared {
        let linking = challenge.userID == nil && request.linkIntent && request.partnerUserRef != nil
        let linked = challenge.userID != nil || linking
        let now = sesame.clock.now()
        let issuedAt = Int64(now.timeIntervalSince1970)  // trap-safe: server clock
        let claims = VerificationTokenClaims(
            iss: sesame.inline.issuer, aud: request.partnerID, iat: issuedAt, exp: issuedAt + Self.tokenLifetime,
            jti: Identifiers.unique() + Identifiers.unique(), requestID: request.id, scope: request.scope, env: request.environment,
            verified: true, linked: linked, partnerUserRef: request.partnerUserRef, ver: 1
        )
        let token: String
        do { token = try signer.sign(claims) } catch { throw .completionFailed }
        // The token is stored sealed, on the request (until it expires) and beside the event's body (until delivered).
        let eventID = StandardWebhooks.newMessageID()
        let body = Self.eventBody(request, linked: linked, at: now)
        let sealedToken: String, sealedEventToken: String
        do {
            sealedToken = try sesame.secrets.seal(Array(token.utf8), for: .verificationToken, row: request.id)
            sealedEventToken = try sesame.secrets.seal(Array(token.utf8), for: .webhookToken, row: eventID)
        } catch {
            throw .completionFailed
        }
        let event = WebhookEventRecord(id: eventID, partnerID: request.partnerID, environment: request.environment, type: Self.eventType,
                                       body: body.body, createdAt: now, sealedToken: sealedEventToken, tokenOffset: body.offset)
        return Prepared(request: request, linking: linking, linked: linked, sealedToken: sealedToken, tokenID: claims.jti, event: event, now: now)
    }

    /// Writes `prepared` in `transaction`: the request completed with its token, the hand-off's link to `owner`, the
    /// event.
    /// - Returns: whether the request was still pending (if not, nothing is written).
    /// - Throws: `conflict` when the link cannot be written (the ref or the person is linked already).
    static func write(_ prepared: Prepared, owner: UserRecord, in transaction: StoreTransaction) throws(StoreError) -> Bool {
        let request = prepared.request
        guard try transaction.verificationRequests.complete(id: request.id, linked: prepared.linked, token: prepared.sealedToken,
                                                            tokenID: prepared.tokenID, at: prepared.now)
        else { return false }
        if prepared.linking, let ref = request.partnerUserRef {
            try transaction.partners.createLink(PartnerLinkRecord(id: Identifiers.unique(), partnerID: request.partnerID, environment: request.environment,
                                                                  partnerUserRef: ref, userID: owner.id, createdAt: prepared.now))
        }
        try transaction.webhooks.enqueue(prepared.event)
        return true
    }

    /// The `gate.human_verified` body, serialized once without its token, and where the token goes: these bytes with
    /// the token put back are signed and sent on every attempt. Identical whichever path completed the request.
    /// Members in name order, so `verification_token` is the last member of `data` (``WebhookBodies/extractToken(_:)``).
    static func eventBody(_ request: VerificationRequestRecord, linked: Bool, at time: Date) -> (body: [UInt8], offset: Int) {
        var offset = 0
        var writer = JSONWriter()
        writer.object { writer in
            writer.key("data")
            writer.object { writer in
                writer.member("env", request.environment)
                writer.member("linked", linked)
                if let metadata = VerificationService.storedMetadata(request.metadata) { writer.member("metadata", json: metadata) }
                if let ref = request.partnerUserRef { writer.member("partner_user_ref", ref) }
                writer.member("request_id", request.id)
                writer.member("scope", request.scope)
                writer.member("verification_token", "")
                offset = writer.bytes.count - 1  // between the empty string's quotes
            }
            writer.member("timestamp", Timestamps.rfc3339(time))
            writer.member("type", eventType)
        }
        return (writer.bytes, offset)
    }
}
