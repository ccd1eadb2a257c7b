import Foundation

/// The files a relying party's host serves under `/.well-known/`, generated from the project's platforms.
public enum WellKnownFiles {
    /// `apple-app-site-association`: the Apple apps that may use this domain's credentials.
    ///
    /// - SeeAlso: [Supporting associated domains](https://developer.apple.com/documentation/xcode/supporting-associated-domains)
    public static func appleAppSiteAssociation(_ configuration: ProjectConfiguration) -> [UInt8] {
        let apps = configuration.platforms.compactMap { platform -> String? in
            if case .apple(let team, let bundle) = platform, !team.isEmpty { return "\(team).\(bundle)" }
            return nil
        }
        return json(["webcredentials": ["apps": apps]])
    }

    /// `assetlinks.json`: for each Android app, sign-in credential sharing and app links.
    ///
    /// - SeeAlso: [Digital Asset Links](https://developers.google.com/digital-asset-links/v1/getting-started)
    public static func assetLinks(_ configuration: ProjectConfiguration) -> [UInt8] {
        let statements: [[String: Any]] = configuration.platforms.compactMap { platform in
            guard case .android(let package, let fingerprints) = platform else { return nil }
            return [
                "relation": ["delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls"],
                "target": [
                    "namespace": "android_app", "package_name": package,
                    "sha256_cert_fingerprints": fingerprints.map(PlatformValidation.fingerprintText),
                ] as [String: Any],
            ]
        }
        return json(statements)
    }

    /// `webauthn`: the web origins outside the relying party's domain allowed to use its ID (Related Origin Requests), or
    /// `nil` (served as 404) when there are none. Only the project's own web platforms appear: partner web origins never
    /// get the relying party.
    ///
    /// - SeeAlso: [WebAuthn §5.11](https://www.w3.org/TR/webauthn-3/#sctn-related-origins)
    public static func relatedOrigins(_ configuration: ProjectConfiguration) -> [UInt8]? {
        // An origin on the relying party ID or one of its subdomains may use it anyway (WebAuthn §5.1.4.1), so listing it
        // would only turn the file on: it is left out.
        let rpID = configuration.relyingPartyID
        let origins = configuration.platforms.filter { if case .web = $0 { true } else { false } }
            .flatMap { $0.origins(rpID: rpID) }
            .filter { !$0.contains("*") && !($0 == "https://\(rpID)" || $0.hasSuffix(".\(rpID)")) }
        var seen = Set<String>()
        let unique = origins.filter { seen.insert($0).inserted }
        return unique.isEmpty ? nil : json(["origins": unique])
    }

    private static func json(_ object: Any) -> [UInt8] {
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        } catch {
            preconditionFailure("plain dictionaries and arrays of strings always serialise")
        }
    }
}
