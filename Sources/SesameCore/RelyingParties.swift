import Foundation
import WebAuthn

/// Works out the relying party a ceremony runs under, from a project and the calling origin.
public enum RelyingParties {
    /// The relying party ID development requests from `http://localhost:<port>` run under.
    public static let localhostID = "localhost"

    /// The policy for a ceremony of `project`, given the request's `Origin` header.
    ///
    /// A request from `http://localhost` (any port) gets the separate `localhost` relying party, accepting exactly
    /// that origin, so developers can try passkeys without touching the production relying party. Every other
    /// request gets the project's relying party with the origins computed from its platforms.
    public static func policy(for project: ProjectConfiguration, requestOrigin: String?) -> RelyingPartyPolicy {
        if let origin = requestOrigin, isLocalhost(origin) {
            return RelyingPartyPolicy(id: localhostID, origins: [origin])
        }
        return RelyingPartyPolicy(id: project.relyingPartyID, origins: project.acceptedOrigins)
    }

    /// Whether `origin` is `http://localhost` with an optional port.
    public static func isLocalhost(_ origin: String) -> Bool {
        guard origin.hasPrefix("http://localhost") else { return false }
        let rest = origin.dropFirst("http://localhost".count)
        guard !rest.isEmpty else { return true }
        guard rest.first == ":" else { return false }
        let port = rest.dropFirst()
        return !port.isEmpty && port.count <= 5 && port.allSatisfy(\.isNumber) && (Int(port) ?? 0) <= 65_535
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

    /// Every origin accepted in ceremonies, computed from the platforms, without duplicates, in order.
    public var acceptedOrigins: [String] {
        var seen = Set<String>()
        return platforms.flatMap { $0.origins(rpID: relyingPartyID) }.filter { seen.insert($0).inserted }
    }
}
