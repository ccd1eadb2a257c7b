import Foundation
import SesameCore
import WebAuthn

/// `sesame project policy show|set|reset`: a project's attestation policy (``AttestationPolicy``).
///
/// Output is the policy's JSON form on one line, which `set --file` reads back. Exit 0 on success, 1 when the
/// operation fails (an invalid policy: `invalid_argument: ...` on stderr), 2 on bad usage or an unreadable file.
enum PolicyCommands {
    static let usage = """
        usage (each takes --db and --master-key-file as the admin commands do; --project may be left out when there is
        exactly one project):
          sesame project policy show [--project ID]
          sesame project policy set [--project ID] [--file POLICY.json] [--none accept|refuse] [--self accept|refuse]
              [--allow-aaguid UUID ...] [--deny-aaguid UUID ...] [--minimum-certification LEVEL|none]
              [--user-verification-method METHOD ...]
          sesame project policy reset [--project ID]
        set replaces the whole policy: it starts from --file (or the default policy) and each flag given replaces that
        member (a repeated flag gives the whole list). Members of POLICY.json, each optional:
          {"acceptNoneAttestation": true, "acceptSelfAttestation": true, "allowedAAGUIDs": [], "deniedAAGUIDs": [],
           "minimumCertificationLevel": null, "userVerificationMethods": []}
        LEVEL: \(CertificationLevel.allCases.map(\.description).joined(separator: ", "))
        METHOD: \(AttestationPolicy.knownUserVerificationMethods.joined(separator: ", "))
        An allow list, a minimum certification or user verification methods need the FIDO metadata loaded
        ('sesame metadata load'); with them, or with --none refuse, registrations ask for attestation "direct".
        """

    static func run(_ raw: [String]) -> Int32 {
        if let first = raw.first, ["--help", "-h", "help"].contains(first) {
            print(usage)
            return 0
        }
        guard let verb = raw.first, !verb.hasPrefix("--") else { return fail("missing command\n\(usage)", status: 2) }
        let (rest, positionals) = AdminCommands.split(raw.dropFirst())
        do {
            guard positionals.isEmpty else { throw Arguments.UsageError(message: "unexpected arguments \(positionals)") }
            var args = try Arguments(rest, booleanFlags: [])
            switch verb {
            case "show":
                let sesame = try AdminCommands.openSesame(&args)
                let id = try AdminCommands.projectID(&args, sesame)
                try args.finish()
                print(try sesame.projects.get(id).readableAttestationPolicy().jsonText)
            case "set":
                var (policy, given) = try policyFlags(&args)
                let sesame = try AdminCommands.openSesame(&args)
                let id = try AdminCommands.projectID(&args, sesame)
                try args.finish()
                guard given else {
                    throw Arguments.UsageError(message: "set needs --file or a flag ('sesame project policy reset' restores the default)")
                }
                policy = try sesame.projects.setAttestationPolicy(projectID: id, policy).attestationPolicy
                print(policy.jsonText)
            case "reset":
                let sesame = try AdminCommands.openSesame(&args)
                let id = try AdminCommands.projectID(&args, sesame)
                try args.finish()
                print(try sesame.projects.setAttestationPolicy(projectID: id, .default).attestationPolicy.jsonText)
            default:
                return fail("unknown command 'project policy \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch {
            return AdminCommands.exitStatus(error, usage: usage)
        }
    }

    /// The policy `set` describes: `--file` or the default, with each flag given replacing its member; and whether
    /// `--file` or any flag was given at all.
    private static func policyFlags(_ args: inout Arguments) throws -> (AttestationPolicy, given: Bool) {
        let file = try args.optional("--file")
        var policy = try file.map(PolicyFile.read) ?? .default
        func acceptance(_ flag: String) throws -> Bool? {
            switch try args.optional(flag) {
            case nil: return nil
            case "accept": return true
            case "refuse": return false
            default: throw Arguments.UsageError(message: "\(flag) must be accept or refuse")
            }
        }
        var given = file != nil
        if let none = try acceptance("--none") { policy.acceptsNoneAttestation = none; given = true }
        if let selfAttestation = try acceptance("--self") { policy.acceptsSelfAttestation = selfAttestation; given = true }
        let allowed = args.all("--allow-aaguid"), denied = args.all("--deny-aaguid"), methods = args.all("--user-verification-method")
        if !allowed.isEmpty { policy.allowedAAGUIDs = allowed; given = true }
        if !denied.isEmpty { policy.deniedAAGUIDs = denied; given = true }
        if !methods.isEmpty { policy.userVerificationMethods = methods; given = true }
        if let level = try args.optional("--minimum-certification") {
            given = true
            if level == "none" {
                policy.minimumCertificationLevel = nil
            } else {
                guard let parsed = CertificationLevel(name: level) else {
                    throw Arguments.UsageError(message: "--minimum-certification must be none or one of "
                        + CertificationLevel.allCases.map(\.description).joined(separator: ", "))
                }
                policy.minimumCertificationLevel = parsed
            }
        }
        return (policy, given)
    }
}

/// An attestation policy file, read by `sesame project policy set --file` and `webauthn verify-registration --policy`.
enum PolicyFile {
    /// The most a policy file may hold.
    static let maximumSize = 1 << 20

    /// The policy in the JSON file at `path`.
    /// - Throws: a usage error naming the file and what is wrong with it.
    static func read(_ path: String) throws(Arguments.UsageError) -> AttestationPolicy {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw Arguments.UsageError(message: "cannot read policy file \(path)") }
        defer { try? handle.close() }
        let data = handle.readData(ofLength: maximumSize + 1)
        guard data.count <= maximumSize else { throw Arguments.UsageError(message: "policy file \(path) is larger than 1 MiB") }
        do { return try AttestationPolicy(jsonEncoded: Array(data)) } catch {
            throw Arguments.UsageError(message: "policy file \(path): \(error.detail)")
        }
    }
}
