import Foundation
import WebAuthn

/// The one relying-party resolver: which relying party a ceremony runs under and which origins it accepts, computed
/// from a project's platforms. Ceremonies, CORS, the management API, `sesame platform list` and the well-known files
/// all read it, so what is listed as accepted is exactly what a ceremony accepts.
public enum RelyingParties {
    /// The relying party ID development requests from `http://localhost:<port>` run under.
    public static let localhostID = "localhost"
    /// ES256 and RS256, as offered in `pubKeyCredParams` and accepted at registration.
    public static let algorithms: [COSEAlgorithmIdentifier] = [.init(rawValue: -7), .init(rawValue: -257)]

    /// The policy of an account ceremony of `project` (Appwrite's spec §4.4), given the request's `Origin`.
    ///
    /// A request from `http://localhost` (any port) gets the separate `localhost` relying party, accepting exactly
    /// that origin, when the project has a `localhost` web platform, so developers can try passkeys without touching
    /// the production relying party. Every other request gets the project's relying party with
    /// ``ProjectConfiguration/acceptedOrigins``.
    /// - Throws: `no_relying_party` when the project has no relying party ID or no platform gives it an origin; the
    ///   detail says what to add (it names only the project's own configuration, never request data).
    public static func policy(for project: ProjectConfiguration, requestOrigin: String?) throws(SesameError) -> RelyingPartyPolicy {
        if let origin = requestOrigin, isLocalhost(origin), project.platforms.contains(.web(hostname: localhostID)) {
            return RelyingPartyPolicy(id: localhostID, origins: [origin], allowedAlgorithms: algorithms)
        }
        let rpID = project.relyingPartyID
        guard !rpID.isEmpty else {
            throw SesameError(.noRelyingParty, "The project has no relying party ID: set one, then add a Web platform for it.")
        }
        let origins = project.relyingPartyOrigins
        guard !origins.isEmpty else {
            throw SesameError(.noRelyingParty,
                              "No platform of the project gives its relying party \(rpID) an origin: add a Web platform for \(rpID) or one of its subdomains.")
        }
        return RelyingPartyPolicy(id: rpID, origins: origins.sorted(), allowedAlgorithms: algorithms)
    }

    /// The policy of inline assertions (BotShield §2.7): `https://{rpId}` (iOS apps), the hosted pages' `appOrigin`,
    /// and each approved Android app's `android:apk-key-hash:` origin. User verification is the engine's to check.
    /// A request made by the web widget (`widgetOrigin`) may also be confirmed in the widget's frame, cross-origin, under
    /// that page origin only (§2.9).
    public static func inlinePolicy(for project: ProjectConfiguration, approvedApps: [Platform], appOrigin: String,
                                    widgetOrigin: String? = nil) -> RelyingPartyPolicy {
        let rpID = project.relyingPartyID
        let apps = approvedApps.flatMap { app -> [String] in
            if case .android = app { return app.origins(rpID: rpID) }
            return []
        }
        return RelyingPartyPolicy(id: rpID, origins: Array(Set(["https://\(rpID)", appOrigin] + apps)).sorted(), requiresUserVerification: false,
                                  crossOrigin: widgetOrigin.map { .allowed(topOrigins: [$0]) } ?? .forbidden, allowedAlgorithms: algorithms)
    }

    /// The policy of the hosted hand-off page's assertions: only the hosted pages' `appOrigin`.
    public static func handOffPolicy(for project: ProjectConfiguration, appOrigin: String) -> RelyingPartyPolicy {
        RelyingPartyPolicy(id: project.relyingPartyID, origins: [appOrigin], requiresUserVerification: false, allowedAlgorithms: algorithms)
    }

    /// The policy of the hosted setup page's ceremonies (BotShield §2.8): the hand-off page's relying party and origin,
    /// with user verification required by the core (registrations and sign-ins alike).
    public static func setupPolicy(for project: ProjectConfiguration, appOrigin: String) -> RelyingPartyPolicy {
        var policy = handOffPolicy(for: project, appOrigin: appOrigin)
        policy.requiresUserVerification = true
        return policy
    }

    /// Whether `origin` is `http://localhost` with an optional port (1 to 5 ASCII digits, at most 65535).
    public static func isLocalhost(_ origin: String) -> Bool {
        let prefix = "http://localhost".utf8
        let bytes = origin.utf8
        guard bytes.starts(with: prefix) else { return false }
        let rest = bytes.dropFirst(prefix.count)
        guard let separator = rest.first else { return true }
        let port = rest.dropFirst()
        guard separator == UInt8(ascii: ":"), (1...5).contains(port.count),
              port.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return false }
        return port.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 65_535
    }

    /// Whether pages of the web platform `hostname` (`*.` wildcards included) may run ceremonies for `rpID`: the
    /// hostname is the relying party ID or under it. WebAuthn refuses any other (`SecurityError` in the browser), so
    /// such a platform serves CORS only.
    public static func isOnRelyingParty(webPlatform hostname: String, rpID: String) -> Bool {
        let bare = hostname.hasPrefix("*.") ? String(hostname.dropFirst(2)) : hostname
        return !rpID.isEmpty && (bare == rpID || bare.hasSuffix("." + rpID))
    }

    /// Whether the web platform `hostname` (`*.` wildcards included) covers `host`: the hostname itself, or for a
    /// wildcard every subdomain but not the apex.
    static func covers(_ hostname: String, host: String) -> Bool {
        if hostname.hasPrefix("*.") { return host.hasSuffix(String(hostname.dropFirst())) }
        return host == hostname
    }
}

/// A project's relying party and platforms: what its ceremonies and well-known files are computed from.
public struct ProjectConfiguration: Sendable, Hashable {
    public var relyingPartyID: String
    public var relyingPartyName: String
    public var platforms: [Platform]

    /// Creates a configuration.
    public init(relyingPartyID: String, relyingPartyName: String, platforms: [Platform]) {
        self.relyingPartyID = relyingPartyID
        self.relyingPartyName = relyingPartyName
        self.platforms = platforms
    }

    /// Every origin a ceremony accepts, as the management API, `sesame platform list` and the passkey policy show
    /// them: ``relyingPartyOrigins``, then `http://localhost` (any port, under the separate `localhost` relying party)
    /// when a `localhost` web platform exists.
    public var acceptedOrigins: [String] {
        relyingPartyOrigins + (platforms.contains(.web(hostname: RelyingParties.localhostID)) ? ["http://localhost"] : [])
    }

    /// The origins a ceremony on the project's relying party accepts, without duplicates, in order: web platforms on
    /// the relying party ID or its subdomains (a web platform on another domain contributes nothing), each Android
    /// app's signing keys, and `https://<rpId>` for Apple apps (Appwrite's spec §4.4). Empty without a relying party ID.
    public var relyingPartyOrigins: [String] {
        let rpID = relyingPartyID
        guard !rpID.isEmpty else { return [] }
        var seen = Set<String>()
        return platforms.flatMap { platform -> [String] in
            if case .web(let host) = platform {
                return RelyingParties.isOnRelyingParty(webPlatform: host, rpID: rpID) ? platform.origins(rpID: rpID) : []
            }
            return platform.origins(rpID: rpID)
        }.filter { seen.insert($0).inserted }
    }

    /// Whether a browser `Origin` belongs to one of the web platforms (any scheme and port, as in Appwrite): the
    /// CORS check of the account API, which any web platform passes, on the relying party's domain or not.
    public func allowsBrowserOrigin(_ origin: String) -> Bool {
        guard let host = URL(string: origin)?.host?.lowercased() else { return false }
        return platforms.contains { platform in
            guard case .web(let hostname) = platform else { return false }
            return RelyingParties.covers(hostname, host: host)
        }
    }
}
