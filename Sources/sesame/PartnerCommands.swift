import Foundation
import SesameCore
import SesameStore

/// `sesame partner ...` and `sesame signing-key ...`: inline-verification partners (API keys, native apps, webhook
/// endpoints, links) and the token signing keys. Output is one JSON object per line, as for the other admin commands.
enum PartnerCommands {
    static let usage = """
        usage (every command takes --db and --master-key-file; --project may be left out when there is exactly one project):
          sesame partner create [--project ID] --name NAME
          sesame partner list [--project ID]
          sesame partner add-key --partner ORG --env live|test          (prints the key once)
          sesame partner list-keys --partner ORG
          sesame partner revoke-key --partner ORG KEY_ID
          sesame partner add-app --partner ORG (--ios TEAMID --bundle-id BUNDLE | --android PACKAGE --fingerprint SHA256 ...)
          sesame partner list-apps --partner ORG
          sesame partner approve-app|reject-app|revoke-app --partner ORG APP_ID
          sesame partner add-webhook --partner ORG --env live|test --url URL [--allow-local]   (prints the secret)
          sesame partner list-webhooks --partner ORG
          sesame partner remove-webhook --partner ORG ENDPOINT_ID
          sesame partner link --partner ORG --env live|test --ref PARTNER_USER_REF --user USER_ID
          sesame partner unlink --partner ORG --env live|test --ref PARTNER_USER_REF
          sesame partner add-return-origin --partner ORG ORIGIN                     (https://HOST[:PORT], or http://localhost|127.0.0.1[:PORT])
          sesame partner list-return-origins --partner ORG
          sesame partner remove-return-origin --partner ORG ORIGIN
          sesame partner add-site-key --partner ORG --env live|test --origin ORIGIN ...   (a public pk_live_/pk_test_ key for the widget)
          sesame partner list-site-keys --partner ORG
          sesame partner set-site-key-origins --partner ORG SITE_KEY --origin ORIGIN ...
          sesame partner revoke-site-key --partner ORG SITE_KEY
          sesame signing-key list
          sesame signing-key rotate [--activate-in SECONDS]              (default 86400: publish a day before signing)
        """

    static func run(_ group: String, _ raw: [String]) -> Int32 {
        guard let verb = raw.first, !verb.hasPrefix("--") else { return fail("missing command\n\(usage)", status: 2) }
        let (rest, positionals) = AdminCommands.split(raw.dropFirst(), switches: ["--allow-local"])
        guard positionals.count <= 1 else { return fail("unexpected arguments\n\(usage)", status: 2) }
        do {
            var args = try Arguments(rest, booleanFlags: ["--allow-local"])
            let allowLocal = args.flag("--allow-local")
            let sesame = try AdminCommands.openSesame(&args, inline: InlineConfiguration(allowLocalWebhooks: allowLocal))
            func positional(_ name: String) throws -> String {
                guard let value = positionals.first else { throw Arguments.UsageError(message: "missing \(name)") }
                return value
            }
            func environment() throws -> PartnerEnvironment {
                guard let environment = PartnerEnvironment(rawValue: try args.required("--env")) else {
                    throw Arguments.UsageError(message: "--env is live or test")
                }
                return environment
            }
            switch (group, verb) {
            case ("partner", "create"):
                let project = try AdminCommands.projectID(&args, sesame), name = try args.required("--name")
                try args.finish()
                AdminCommands.printJSON(PartnerOutput(try sesame.partners.create(projectID: project, name: name)))
            case ("partner", "list"):
                let project = try AdminCommands.projectID(&args, sesame)
                try args.finish()
                try sesame.partners.list(projectID: project).forEach { AdminCommands.printJSON(PartnerOutput($0)) }
            case ("partner", "add-key"):
                let partner = try args.required("--partner"), env = try environment()
                try args.finish()
                let (key, secret) = try sesame.partners.createAPIKey(partnerID: partner, environment: env)
                AdminCommands.printJSON(KeyOutput(key, secret: secret))
            case ("partner", "list-keys"):
                let partner = try args.required("--partner")
                try args.finish()
                try sesame.partners.listAPIKeys(partnerID: partner).forEach { AdminCommands.printJSON(KeyOutput($0, secret: nil)) }
            case ("partner", "revoke-key"):
                let partner = try args.required("--partner")
                try args.finish()
                let id = try positional("KEY_ID")
                try sesame.partners.revokeAPIKey(partnerID: partner, id: id)
                AdminCommands.printJSON(["revoked": id])
            case ("partner", "add-app"):
                let partner = try args.required("--partner"), platform = try appFlags(&args)
                try args.finish()
                AdminCommands.printJSON(AppOutput(try sesame.partners.addApp(partnerID: partner, platform: platform)))
            case ("partner", "list-apps"):
                let partner = try args.required("--partner")
                try args.finish()
                try sesame.partners.listApps(partnerID: partner).forEach { AdminCommands.printJSON(AppOutput($0)) }
            case ("partner", "approve-app"), ("partner", "reject-app"), ("partner", "revoke-app"):
                let partner = try args.required("--partner")
                try args.finish()
                let state: PartnerApp.State = verb == "approve-app" ? .approved : verb == "reject-app" ? .rejected : .revoked
                AdminCommands.printJSON(AppOutput(try sesame.partners.setAppState(partnerID: partner, appID: try positional("APP_ID"), to: state)))
            case ("partner", "add-webhook"):
                let partner = try args.required("--partner"), env = try environment(), url = try args.required("--url")
                try args.finish()
                let (endpoint, secret) = try sesame.partners.addWebhookEndpoint(partnerID: partner, environment: env, url: url)
                AdminCommands.printJSON(WebhookOutput(endpoint, secret: secret))
            case ("partner", "list-webhooks"):
                let partner = try args.required("--partner")
                try args.finish()
                try sesame.partners.listWebhookEndpoints(partnerID: partner).forEach { AdminCommands.printJSON(WebhookOutput($0, secret: nil)) }
            case ("partner", "remove-webhook"):
                let partner = try args.required("--partner")
                try args.finish()
                let id = try positional("ENDPOINT_ID")
                try sesame.partners.removeWebhookEndpoint(partnerID: partner, id: id)
                AdminCommands.printJSON(["removed": id])
            case ("partner", "link"):
                let partner = try args.required("--partner"), env = try environment()
                let ref = try args.required("--ref"), user = try args.required("--user")
                try args.finish()
                let link = try sesame.partners.link(partnerID: partner, environment: env, partnerUserRef: ref, userID: user)
                AdminCommands.printJSON(["partner": link.partnerID, "env": link.environment.rawValue, "ref": link.partnerUserRef, "user": link.userID])
            case ("partner", "unlink"):
                let partner = try args.required("--partner"), env = try environment(), ref = try args.required("--ref")
                try args.finish()
                AdminCommands.printJSON(["unlinked": try sesame.partners.unlink(partnerID: partner, environment: env, partnerUserRef: ref)])
            case ("partner", "add-return-origin"):
                let partner = try args.required("--partner")
                try args.finish()
                AdminCommands.printJSON(["partner": partner, "returnOrigin": try sesame.partners.addReturnOrigin(partnerID: partner, origin: try positional("ORIGIN"))])
            case ("partner", "list-return-origins"):
                let partner = try args.required("--partner")
                try args.finish()
                try sesame.partners.listReturnOrigins(partnerID: partner).forEach { AdminCommands.printJSON(["returnOrigin": $0]) }
            case ("partner", "remove-return-origin"):
                let partner = try args.required("--partner")
                try args.finish()
                let origin = try positional("ORIGIN")
                try sesame.partners.removeReturnOrigin(partnerID: partner, origin: origin)
                AdminCommands.printJSON(["removed": origin])
            case ("partner", "add-site-key"):
                let partner = try args.required("--partner"), env = try environment(), origins = args.all("--origin")
                try args.finish()
                AdminCommands.printJSON(SiteKeyOutput(try sesame.partners.createSiteKey(partnerID: partner, environment: env, origins: origins)))
            case ("partner", "list-site-keys"):
                let partner = try args.required("--partner")
                try args.finish()
                try sesame.partners.listSiteKeys(partnerID: partner).forEach { AdminCommands.printJSON(SiteKeyOutput($0)) }
            case ("partner", "set-site-key-origins"):
                let partner = try args.required("--partner"), origins = args.all("--origin")
                try args.finish()
                let key = try positional("SITE_KEY")
                AdminCommands.printJSON(SiteKeyOutput(try sesame.partners.setSiteKeyOrigins(partnerID: partner, id: key, origins: origins)))
            case ("partner", "revoke-site-key"):
                let partner = try args.required("--partner")
                try args.finish()
                let key = try positional("SITE_KEY")
                try sesame.partners.revokeSiteKey(partnerID: partner, id: key)
                AdminCommands.printJSON(["revoked": key])
            case ("signing-key", "list"):
                try args.finish()
                try sesame.signingKeys.keys().forEach { AdminCommands.printJSON(SigningKeyOutput($0)) }
            case ("signing-key", "rotate"):
                let delay = try args.optional("--activate-in").map { text throws in
                    guard let seconds = Double(text), seconds >= 0 else { throw Arguments.UsageError(message: "--activate-in is seconds, 0 or more") }
                    return seconds
                } ?? SigningKeyService.defaultActivationDelay
                try args.finish()
                AdminCommands.printJSON(SigningKeyOutput(try sesame.signingKeys.rotate(activateAfter: delay)))
            default:
                return fail("unknown command '\(group) \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch {
            return AdminCommands.exitStatus(error, usage: usage)
        }
    }

    private static func appFlags(_ args: inout Arguments) throws -> Platform {
        switch (try args.optional("--ios"), try args.optional("--android")) {
        case (let team?, nil):
            return .apple(teamID: team, bundleID: try args.required("--bundle-id"))
        case (nil, let package?):
            let fingerprints = try args.all("--fingerprint").map(PlatformValidation.sha256Fingerprint)
            guard !fingerprints.isEmpty else { throw Arguments.UsageError(message: "--android needs --fingerprint") }
            return .android(packageName: package, sha256Fingerprints: fingerprints)
        default:
            throw Arguments.UsageError(message: "give exactly one of --ios or --android")
        }
    }
}

private struct PartnerOutput: Encodable {
    let id: String, project: String, name: String
    init(_ partner: Partner) {
        id = partner.id
        project = partner.projectID
        name = partner.name
    }
}

private struct KeyOutput: Encodable {
    let id: String, env: String, createdAt: Date, revoked: Bool
    /// Present only at creation.
    let secret: String?
    init(_ key: PartnerAPIKey, secret: String?) {
        id = key.id
        env = key.environment.rawValue
        createdAt = key.createdAt
        revoked = key.revokedAt != nil
        self.secret = secret
    }
}

private struct AppOutput: Encodable {
    let id: String, platform: String, app: String, state: String
    init(_ app: PartnerApp) {
        id = app.id
        state = app.state.rawValue
        switch app.platform {
        case .apple(let team, let bundle):
            platform = "ios"
            self.app = "\(team).\(bundle)"
        case .android(let package, let fingerprints):
            platform = "android"
            self.app = ([package] + fingerprints.map(PlatformValidation.fingerprintText)).joined(separator: " ")
        case .web(let host):
            platform = "web"
            self.app = host
        }
    }
}

private struct WebhookOutput: Encodable {
    let id: String, env: String, url: String, enabled: Bool
    /// Present only at creation.
    let secret: String?
    init(_ endpoint: WebhookEndpoint, secret: String?) {
        id = endpoint.id
        env = endpoint.environment.rawValue
        url = endpoint.url
        enabled = endpoint.isEnabled
        self.secret = secret
    }
}

private struct SiteKeyOutput: Encodable {
    let siteKey: String, env: String, origins: [String], createdAt: Date, revoked: Bool
    init(_ key: SiteKey) {
        siteKey = key.id
        env = key.environment.rawValue
        origins = key.origins
        createdAt = key.createdAt
        revoked = key.revokedAt != nil
    }
}

private struct SigningKeyOutput: Encodable {
    let kid: String, generation: Int64, activatesAt: Date, signing: Bool
    init(_ key: SigningKeyService.Key) {
        kid = key.kid
        generation = key.generation
        activatesAt = key.activatesAt
        signing = key.isSigning
    }
}
