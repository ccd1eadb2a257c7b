import Foundation
import SesameCore
import SesameStore

/// `sesame authsignal ...`: the Authsignal face's tenant secrets and the default outcome of action codes. Output is one
/// JSON object per line, as for the other admin commands; a secret is printed once, at creation.
enum AuthsignalCommands {
    static let usage = """
        usage (every command takes --db and --master-key-file; --project may be left out when there is exactly one project):
          sesame authsignal secret create [--project ID] [--public-url URL]   (prints {"tenantId","secret","apiUrl"} once)
          sesame authsignal secret list [--project ID]
          sesame authsignal secret revoke [--project ID] SECRET_ID
          sesame authsignal action set-outcome [--project ID] --action CODE --state STATE|default
          sesame authsignal action list-outcomes [--project ID]
        STATE is one of \(ActionState.allCases.map { $0.rawValue }.joined(separator: ", ")); the public URL defaults to
        SESAME_PUBLIC_URL, else http://localhost:8080.
        """

    static func run(_ raw: [String]) -> Int32 {
        guard raw.count >= 2, !raw[0].hasPrefix("--"), !raw[1].hasPrefix("--") else {
            return fail("missing command\n\(usage)", status: 2)
        }
        let (group, verb) = (raw[0], raw[1])
        let (rest, positionals) = AdminCommands.split(raw.dropFirst(2))
        guard positionals.count <= 1 else { return fail("unexpected arguments\n\(usage)", status: 2) }
        do {
            var args = try Arguments(rest, booleanFlags: [])
            let sesame = try AdminCommands.openSesame(&args)
            let project = try AdminCommands.projectID(&args, sesame)
            switch (group, verb) {
            case ("secret", "create"):
                let publicURL = try args.optional("--public-url") ?? ProcessInfo.processInfo.environment["SESAME_PUBLIC_URL"] ?? "http://localhost:8080"
                try args.finish()
                let created = try sesame.authsignal.createSecret(projectID: project)
                let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
                AdminCommands.printJSON(["tenantId": project, "secret": created.secret, "apiUrl": base + "/authsignal/v1"])
            case ("secret", "list"):
                try args.finish()
                try sesame.authsignal.secrets(projectID: project).forEach { AdminCommands.printJSON(SecretOutput($0)) }
            case ("secret", "revoke"):
                try args.finish()
                guard let id = positionals.first else { throw Arguments.UsageError(message: "missing SECRET_ID") }
                try sesame.authsignal.revokeSecret(projectID: project, id: id)
                AdminCommands.printJSON(["revoked": id])
            case ("action", "set-outcome"):
                let code = try args.required("--action"), text = try args.required("--state")
                try args.finish()
                let state = text == "default" ? nil : ActionState(rawValue: text)
                guard state != nil || text == "default" else { throw Arguments.UsageError(message: "--state is a state or default") }
                try sesame.authsignal.setOutcome(projectID: project, actionCode: code, state: state)
                AdminCommands.printJSON(["action": code, "state": state?.rawValue ?? "default"])
            case ("action", "list-outcomes"):
                try args.finish()
                try sesame.authsignal.outcomes(projectID: project).forEach { AdminCommands.printJSON(["action": $0.actionCode, "state": $0.state]) }
            default:
                return fail("unknown command 'authsignal \(group) \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch {
            return AdminCommands.exitStatus(error, usage: usage)
        }
    }
}

private struct SecretOutput: Encodable {
    let id: String, tenantId: String, createdAt: Date, lastUsedAt: Date?, revoked: Bool
    init(_ key: APIKey) {
        id = key.id
        tenantId = key.projectID
        createdAt = key.createdAt
        lastUsedAt = key.lastUsedAt
        revoked = key.revokedAt != nil
    }
}
