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

    private static func json(_ object: Any) -> [UInt8] {
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        } catch {
            preconditionFailure("plain dictionaries and arrays of strings always serialise")
        }
    }
}
