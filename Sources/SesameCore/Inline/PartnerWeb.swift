import Foundation
import SesameStore

/// A public site key of the web widget: it names a partner and an environment, and works only on its origins' pages.
public struct SiteKey: Sendable, Hashable {
    /// `pk_live_…` or `pk_test_…`: public, put in the partner's page.
    public let id: String
    public let partnerID: String
    public let environment: PartnerEnvironment
    /// The page origins that may use it (and frame the inline-passkey frame).
    public let origins: [String]
    public let createdAt: Date
    public let revokedAt: Date?
}

/// Return origins (where the hand-off page sends people back to) and site keys of the web widget.
extension PartnerService {
    /// The most origins one site key or one partner's return list holds.
    public static let maximumOrigins = 20

    /// The site key prefix of an environment: `pk_live_` or `pk_test_`.
    public static func siteKeyPrefix(_ environment: PartnerEnvironment) -> String { "pk_\(environment.rawValue)_" }

    // MARK: Return origins

    /// Registers an origin a `return_url` may point to.
    /// - Returns: the origin in canonical form.
    /// - Throws: `invalid_argument` (not an origin, or too many), `not_found` (partner).
    public func addReturnOrigin(partnerID: String, origin: String) throws(SesameError) -> String {
        let partner = try get(partnerID)
        let origin = try PartnerWebOrigin.normalized(origin)
        guard try listReturnOrigins(partnerID: partner.id).count < Self.maximumOrigins else {
            throw SesameError(.invalidArgument, "a partner has at most \(Self.maximumOrigins) return origins")
        }
        try StoreErrors.map { () throws(StoreError) in _ = try store.partnerWeb.addReturnOrigin(partnerID: partner.id, origin: origin, at: clock.now()) }
        return origin
    }

    /// Removes a return origin.
    /// - Throws: `not_found` when it is not registered.
    public func removeReturnOrigin(partnerID: String, origin: String) throws(SesameError) {
        let origin = try PartnerWebOrigin.normalized(origin)
        let removed = try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.removeReturnOrigin(partnerID: partnerID, origin: origin) }
        guard removed else { throw SesameError(.notFound, "return origin") }
    }

    /// A partner's return origins.
    public func listReturnOrigins(partnerID: String) throws(SesameError) -> [String] {
        try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.returnOrigins(partnerID: partnerID) }
    }

    /// Checks a `return_url`: an absolute URL whose origin is one of the partner's return origins.
    /// - Returns: the URL, unchanged.
    /// - Throws: `invalid_argument` with reason `return_url_not_allowed`.
    public func checkReturnURL(partnerID: String, _ url: String) throws(SesameError) -> String {
        guard let origin = PartnerWebOrigin.origin(ofURL: url), try listReturnOrigins(partnerID: partnerID).contains(origin) else {
            throw SesameError(.invalidArgument, "return_url's origin is not registered for this partner", reason: Self.returnURLNotAllowed)
        }
        return url
    }

    /// The reason of a refused `return_url`.
    public static let returnURLNotAllowed = "return_url_not_allowed"

    // MARK: Site keys

    /// Creates a site key for one environment and its page origins.
    /// - Throws: `invalid_argument` (origins), `not_found` (partner).
    public func createSiteKey(partnerID: String, environment: PartnerEnvironment, origins: [String]) throws(SesameError) -> SiteKey {
        let partner = try get(partnerID)
        let record = SiteKeyRecord(id: Identifiers.secret(prefix: Self.siteKeyPrefix(environment)), partnerID: partner.id,
                                   environment: environment.rawValue, origins: try Self.checkOrigins(origins), createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.createSiteKey(record) }
        return try SiteKey(record: record)
    }

    /// A partner's site keys, revoked ones included.
    public func listSiteKeys(partnerID: String) throws(SesameError) -> [SiteKey] {
        let records = try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.siteKeys(partnerID: partnerID) }
        return try records.map { record throws(SesameError) in try SiteKey(record: record) }
    }

    /// Replaces the origins of a site key.
    /// - Throws: `invalid_argument` (origins), `not_found` (no such unrevoked key of this partner).
    public func setSiteKeyOrigins(partnerID: String, id: String, origins: [String]) throws(SesameError) -> SiteKey {
        let origins = try Self.checkOrigins(origins)
        let updated = try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.setSiteKeyOrigins(partnerID: partnerID, id: id, origins: origins) }
        guard updated, let key = try listSiteKeys(partnerID: partnerID).first(where: { $0.id == id }) else { throw SesameError(.notFound, "site key") }
        return key
    }

    /// Revokes a site key: the widget stops working with it at once.
    /// - Throws: `not_found` when there is no such unrevoked key.
    public func revokeSiteKey(partnerID: String, id: String) throws(SesameError) {
        let revoked = try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.revokeSiteKey(partnerID: partnerID, id: id, at: clock.now()) }
        guard revoked else { throw SesameError(.notFound, "site key") }
    }

    /// The unrevoked site key `key`, or `nil` (malformed, unknown or revoked).
    public func activeSiteKey(_ key: String) throws(SesameError) -> SiteKey? {
        guard key.utf8.count <= 128, PartnerEnvironment.allCases.contains(where: { key.hasPrefix(Self.siteKeyPrefix($0)) }) else { return nil }
        let record = try StoreErrors.map { () throws(StoreError) in try store.partnerWeb.siteKey(id: key) }
        guard let record, record.revokedAt == nil else { return nil }
        return try SiteKey(record: record)
    }

    /// 1 to ``maximumOrigins`` distinct origins, each in canonical form.
    static func checkOrigins(_ origins: [String]) throws(SesameError) -> [String] {
        var checked: [String] = []
        for origin in origins {
            let normalized = try PartnerWebOrigin.normalized(origin)
            if !checked.contains(normalized) { checked.append(normalized) }
        }
        guard (1...Self.maximumOrigins).contains(checked.count) else {
            throw SesameError(.invalidArgument, "a site key has 1 to \(Self.maximumOrigins) origins")
        }
        return checked
    }
}

extension SiteKey {
    init(record: SiteKeyRecord) throws(SesameError) {
        guard let environment = PartnerEnvironment(rawValue: record.environment) else {
            throw SesameError(.internalFailure, "stored site key has an unknown environment")
        }
        self.init(id: record.id, partnerID: record.partnerID, environment: environment, origins: record.origins, createdAt: record.createdAt,
                  revokedAt: record.revokedAt)
    }
}
