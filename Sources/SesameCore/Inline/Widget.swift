import Foundation
import SesameStore

/// The server side of the web widget `<botshield-verify>` (spec §2.9): a page on a site key's origin opens an ordinary
/// verification request and watches its status; the request is confirmed on the hand-off (QR code, phone) or, with the
/// `inline-passkey` beta, in the widget's frame through `passkey-options` and `passkey-complete`.
public struct WidgetService: Sendable {
    let sesame: Sesame

    /// Reason of an unknown, malformed or revoked site key.
    public static let invalidSiteKey = "invalid_site_key"
    /// Reason of a page origin the site key does not list (or no `Origin` at all).
    public static let originNotAllowed = "origin_not_allowed"

    /// Opens a request for the site key's partner, in the key's environment, as create-verification-link does.
    /// - Parameters:
    ///   - origin: the request's `Origin` header; it must be one of the key's origins.
    ///   - clientIP: for the per-IP limit; the site key has its own per-minute limit as well.
    /// - Returns: the new request and the page origin it is bound to.
    /// - Throws: `unauthorized` (`invalid_site_key`), `forbidden` (`origin_not_allowed`), `rate_limited`,
    ///   `invalid_argument` (scope, ref).
    public func createVerification(siteKey: String, origin: String?, scope: String, partnerUserRef: String?, clientIP: String?)
        throws(SesameError) -> VerificationRequest
    {
        guard siteKey.utf8.count <= 128, PartnerEnvironment.allCases.contains(where: { siteKey.hasPrefix(PartnerService.siteKeyPrefix($0)) }) else {
            throw SesameError(.unauthorized, "not a site key", reason: Self.invalidSiteKey)
        }
        try InlinePasskeyService(sesame: sesame).limit(clientIP, further: [("widget-key:\(siteKey)", sesame.inline.widgetCallsPerMinutePerSiteKey)])
        guard let key = try sesame.partners.activeSiteKey(siteKey) else {
            throw SesameError(.unauthorized, "unknown or revoked site key", reason: Self.invalidSiteKey)
        }
        guard let origin, let pageOrigin = try? PartnerWebOrigin.normalized(origin), key.origins.contains(pageOrigin) else {
            throw SesameError(.forbidden, "the page origin is not one of the site key's origins", reason: Self.originNotAllowed)
        }
        let caller = PartnerCaller(partner: try sesame.partners.get(key.partnerID), environment: key.environment)
        return try sesame.verifications.create(caller, scope: scope, partnerUserRef: partnerUserRef, link: false, metadata: nil,
                                               widgetOrigin: pageOrigin)
    }

    /// The status of a request the widget opened; `nil` for any other ID (malformed, unknown, or not a widget request).
    /// - Throws: `rate_limited` (per IP).
    public func status(requestID: String, clientIP: String?) throws(SesameError) -> VerificationRequest.Status? {
        try InlinePasskeyService(sesame: sesame).limit(clientIP)
        guard VerificationService.isRequestID(requestID) else { return nil }
        let record = try StoreErrors.map { () throws(StoreError) in try sesame.store.verificationRequests.get(id: requestID) }
        guard let record, record.widgetOrigin != nil else { return nil }
        return VerificationRequest(record: record, now: sesame.clock.now()).status
    }

    /// The page origins allowed to frame the inline-passkey frame for `siteKey`: its origins, or none for a malformed,
    /// unknown or revoked key.
    public func frameAncestors(siteKey: String) throws(SesameError) -> [String] {
        try sesame.partners.activeSiteKey(siteKey)?.origins ?? []
    }
}

extension HandOffService {
    /// Where the hand-off page sends the person once a request is finished (completed or failed): the partner's
    /// `return_url`, or `nil` while the request is pending, when it has none, or for an unknown ID.
    public func returnURL(requestID: String) throws(SesameError) -> String? {
        guard VerificationService.isRequestID(requestID) else { return nil }
        let record = try StoreErrors.map { () throws(StoreError) in try sesame.store.verificationRequests.get(id: requestID) }
        guard let record, record.status != VerificationRequestRecord.pending else { return nil }
        return record.returnURL
    }
}
