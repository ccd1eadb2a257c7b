import Foundation
import SesameCore
import SesameStore

/// `sesame project|platform|apikey ...`: administration on the same database the server uses.
///
/// Output is JSON, one object per line, so scripts can read it. Exit 0 on success, 1 when the operation
/// fails (the error code and message on stderr), 2 on bad usage.
enum AdminCommands {
    static let usage = """
        usage (every command takes --db sqlite:PATH | postgres://..., default SESAME_DB or sqlite:./.sesame/sesame.db,
        and --master-key-file PATH, default SESAME_MASTER_KEY_FILE, SESAME_MASTER_KEY or master.key beside a SQLite file):
          sesame project create --name NAME --rp-id ID [--rp-name NAME]
          sesame project list
          sesame project show [--project ID]
          sesame project set-rp [--project ID] --rp-id ID [--rp-name NAME]
          sesame project policy show|set|reset [--project ID] ...   (see 'sesame project policy --help')
          sesame platform add [--project ID] (--web HOST | --android PACKAGE --fingerprint SHA256 [--fingerprint ...]
                                             | --apple TEAMID --bundle-id BUNDLE) [--name NAME]
          sesame platform list [--project ID]
          sesame platform remove [--project ID] PLATFORM_ID
          sesame apikey create [--project ID] --name NAME [--scope SCOPE ...]   (scopes: \(APIKey.Scope.all.map(\.rawValue).sorted().joined(separator: ", ")); default all)
          sesame apikey list [--project ID]
          sesame apikey revoke [--project ID] KEY_ID
        --project may be left out when there is exactly one project.
        """

    static func run(_ group: String, _ raw: [String]) -> Int32 {
        guard let verb = raw.first, !verb.hasPrefix("--") else { return fail("missing command\n\(usage)", status: 2) }
        let (rest, positionals) = split(raw.dropFirst())
        guard positionals.count <= 1 else { return fail("unexpected arguments \(positionals.dropFirst())\n\(usage)", status: 2) }
        let positional = positionals.first
        if positional != nil, !["remove", "revoke"].contains(verb) {
            return fail("unexpected argument '\(positional!)'\n\(usage)", status: 2)
        }
        do {
            var args = try Arguments(rest, booleanFlags: [])
            let sesame = try openSesame(&args)
            switch (group, verb) {
            case ("project", "create"):
                let name = try args.required("--name"), rpID = try args.required("--rp-id"), rpName = try args.optional("--rp-name")
                try args.finish()
                printJSON(ProjectOutput(try sesame.projects.create(name: name, relyingPartyID: rpID, relyingPartyName: rpName)))
            case ("project", "list"):
                try args.finish()
                try sesame.projects.list().forEach { printJSON(ProjectOutput($0)) }
            case ("project", "show"):
                let id = try projectID(&args, sesame)
                try args.finish()
                printJSON(ProjectOutput(try sesame.projects.get(id)))
            case ("project", "set-rp"):
                let id = try projectID(&args, sesame)
                let rpID = try args.required("--rp-id"), rpName = try args.optional("--rp-name")
                try args.finish()
                printJSON(ProjectOutput(try sesame.projects.setRelyingParty(projectID: id, id: rpID, name: rpName ?? rpID)))
            case ("platform", "add"):
                let id = try projectID(&args, sesame)
                let platform = try platformFlags(&args)
                let name = try args.optional("--name")
                try args.finish()
                let entry = try sesame.projects.addPlatform(projectID: id, platform, name: name)
                printJSON(PlatformOutput(entry))
                warnIfCORSOnly(entry.platform, project: try sesame.projects.get(id))
            case ("platform", "list"):
                let id = try projectID(&args, sesame)
                try args.finish()
                try sesame.projects.get(id).platforms.forEach { printJSON(PlatformOutput($0)) }
            case ("platform", "remove"):
                let id = try projectID(&args, sesame)
                try args.finish()
                guard let platformID = positional else { throw Arguments.UsageError(message: "missing PLATFORM_ID") }
                try sesame.projects.removePlatform(projectID: id, platformID: platformID)
                printJSON(["removed": platformID])
            case ("apikey", "create"):
                let id = try projectID(&args, sesame)
                let name = try args.required("--name")
                let scopes = args.all("--scope").map(APIKey.Scope.init)
                try args.finish()
                let (key, secret) = try sesame.apiKeys.create(projectID: id, name: name, scopes: scopes.isEmpty ? APIKey.Scope.all : Set(scopes))
                printJSON(APIKeyOutput(key, secret: secret))
            case ("apikey", "list"):
                let id = try projectID(&args, sesame)
                try args.finish()
                try sesame.apiKeys.list(projectID: id).forEach { printJSON(APIKeyOutput($0, secret: nil)) }
            case ("apikey", "revoke"):
                let id = try projectID(&args, sesame)
                try args.finish()
                guard let keyID = positional else { throw Arguments.UsageError(message: "missing KEY_ID") }
                try sesame.apiKeys.revoke(projectID: id, id: keyID)
                printJSON(["revoked": keyID])
            default:
                return fail("unknown command '\(group) \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch {
            return exitStatus(error, usage: usage)
        }
    }

    /// Warns on stderr when a web platform is outside the project's relying party: accepted (pages there may call
    /// the API, CORS), but no passkey can be made or used there, and the browser says only `SecurityError`.
    static func warnIfCORSOnly(_ platform: Platform, project: Project) {
        guard case .web(let host) = platform, host != RelyingParties.localhostID else { return }
        let rpID = project.relyingPartyID
        guard !RelyingParties.isOnRelyingParty(webPlatform: host, rpID: rpID) else { return }
        let relyingParty = rpID.isEmpty ? "the project has no relying party ID" : "the relying party ID is \(rpID)"
        FileHandle.standardError.write(Data("""
            sesame: warning: web platform \(host) added for CORS only: \(relyingParty), and a browser runs passkeys only on \
            pages whose host is the relying party ID or under it (elsewhere it refuses with SecurityError). Pages on \(host) may \
            call the API; for passkeys there, use a host under the relying party ID, or set it with 'sesame project set-rp'.

            """.utf8))
    }

    /// Splits an admin command's words into flags with their values (`switches` take none) and positional words: a
    /// word that is neither a flag nor a flag's value is positional.
    static func split(_ words: ArraySlice<String>, switches: Set<String> = []) -> (flags: [String], positionals: [String]) {
        var flags: [String] = []
        var positionals: [String] = []
        var words = words.makeIterator()
        while let word = words.next() {
            if word.hasPrefix("--") {
                flags.append(word)
                if !switches.contains(word), let value = words.next() { flags.append(value) }
            } else {
                positionals.append(word)
            }
        }
        return (flags, positionals)
    }

    /// Reports a failed admin command on stderr: exit 2 for bad usage (with `usage`), 1 for anything else.
    static func exitStatus(_ error: any Error, usage: String) -> Int32 {
        switch error {
        case let error as MasterKeySettings.Failure: fail(error.message, status: 1)
        case let error as Arguments.UsageError: fail("\(error.message)\n\(usage)", status: 2)
        case let error as SesameError: fail("\(error.code): \(error.detail)", status: 1)
        case let error as StoreError: fail("database: \(error.debugDescription)", status: 1)
        default: fail("\(error)", status: 1)
        }
    }

    /// The domain over the database of `--db`, with the master keys of `--master-key-file` or the environment.
    static func openSesame(_ args: inout Arguments, inline: InlineConfiguration = InlineConfiguration()) throws -> Sesame {
        let database = try Defaults.database(&args)
        let settings = try MasterKeySettings(&args)
        return try settings.openForAdmin(database: database, store: try Store.open(database), inline: inline)
    }

    /// `--project ID`, or the only project.
    static func projectID(_ args: inout Arguments, _ sesame: Sesame) throws -> String {
        if let id = try args.optional("--project") { return id }
        let projects = try sesame.projects.list()
        guard projects.count == 1 else {
            throw Arguments.UsageError(message: projects.isEmpty ? "there is no project yet" : "several projects exist: give --project ID")
        }
        return projects[0].id
    }

    private static func platformFlags(_ args: inout Arguments) throws -> Platform {
        let web = try args.optional("--web"), android = try args.optional("--android"), apple = try args.optional("--apple")
        switch (web, android, apple) {
        case (let host?, nil, nil):
            return .web(hostname: host)
        case (nil, let package?, nil):
            let fingerprints = try args.all("--fingerprint").map(PlatformValidation.sha256Fingerprint)
            guard !fingerprints.isEmpty else { throw Arguments.UsageError(message: "--android needs --fingerprint") }
            return .android(packageName: package, sha256Fingerprints: fingerprints)
        case (nil, nil, let team?):
            return .apple(teamID: team, bundleID: try args.required("--bundle-id"))
        default:
            throw Arguments.UsageError(message: "give exactly one of --web, --android or --apple")
        }
    }

    static func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try! encoder.encode(value), as: UTF8.self))
    }
}

private struct ProjectOutput: Encodable {
    let id: String, name: String, rpId: String, rpName: String, origins: [String], platforms: [PlatformOutput]
    init(_ project: Project) {
        id = project.id
        name = project.name
        rpId = project.relyingPartyID
        rpName = project.relyingPartyName
        origins = project.configuration.acceptedOrigins
        platforms = project.platforms.map(PlatformOutput.init)
    }
}

private struct PlatformOutput: Encodable {
    let id: String, name: String, type: String, value: String
    init(_ entry: PlatformEntry) {
        id = entry.id
        name = entry.name
        type = entry.platform.kind
        switch entry.platform {
        case .web(let host): value = host
        case .android(let package, let fingerprints):
            value = ([package] + fingerprints.map(PlatformValidation.fingerprintText)).joined(separator: " ")
        case .apple(let team, let bundle): value = "\(team).\(bundle)"
        }
    }
}

private struct APIKeyOutput: Encodable {
    let id: String, name: String, scopes: [String], createdAt: Date, revoked: Bool
    /// Present only at creation.
    let secret: String?
    init(_ key: APIKey, secret: String?) {
        id = key.id
        name = key.name
        scopes = key.scopes.map(\.rawValue).sorted()
        createdAt = key.createdAt
        revoked = key.revokedAt != nil
        self.secret = secret
    }
}
