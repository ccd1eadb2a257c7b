import Foundation
import SesameCrypto

/// The `sesame` command: the passkey server and its tools.
@main
enum SesameCommand {
    static let usage = """
        Sesame, a self-hosted passkey (WebAuthn) server.

        usage: sesame [--db DATABASE] [--project ID] <command> [arguments]

        commands:
          serve                            run the server (see 'sesame serve --help')
          project create|list|show|set-rp  manage projects and their relying party
          project policy show|set|reset    a project's attestation policy (see 'sesame project policy --help')
          platform add|list|remove         manage a project's web, Android and Apple platforms
          apikey create|list|revoke        manage a project's API keys
          partner ...                      inline-verification partners: keys, apps, webhooks, links
          signing-key list|rotate          verification-token signing keys
          authsignal secret|action ...     the Authsignal face: tenant secrets, default action outcomes
          master-key generate|status|rotate  the key that seals stored secrets (see 'sesame master-key')
          metadata load|status             FIDO Metadata Service (MDS3) BLOB, loaded offline (see 'sesame metadata --help')
          webauthn verify-registration     verify a registration response read from stdin
          webauthn verify-authentication   verify an authentication response read from stdin
          help                             show this text

        --db (default SESAME_DB, else sqlite:./.sesame/sesame.db), --project and --master-key-file may come before
        the command or after it. Run 'sesame webauthn --help' for the verifier's flags.
        """

    static func main() {
        CryptoLibrary.keepLoadedUntilExit()
        let arguments: [String]
        do {
            arguments = try GlobalFlags.normalized(Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("sesame: \(error.message)\n\n\(usage)\n".utf8))
            exit(2)
        }
        switch arguments.first {
        case "webauthn":
            exit(WebAuthnCommands.run(Array(arguments.dropFirst())))
        case "serve":
            if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
                print(ServeCommand.usage)
                return
            }
            CrashReports.arrange(arguments: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            exit(ServeCommand.run(Array(arguments.dropFirst())))
        case "project" where arguments.dropFirst().first == "policy":
            exit(PolicyCommands.run(Array(arguments.dropFirst(2))))
        case "project", "platform", "apikey":
            exit(AdminCommands.run(arguments[0], Array(arguments.dropFirst())))
        case "partner", "signing-key":
            exit(PartnerCommands.run(arguments[0], Array(arguments.dropFirst())))
        case "authsignal":
            exit(AuthsignalCommands.run(Array(arguments.dropFirst())))
        case "master-key":
            exit(MasterKeyCommands.run(Array(arguments.dropFirst())))
        case "metadata":
            exit(MetadataCommands.run(Array(arguments.dropFirst())))
        case nil, "help", "--help", "-h":
            print(usage)
        default:
            FileHandle.standardError.write(Data("sesame: unknown command '\(arguments[0])'\n\n\(usage)\n".utf8))
            exit(2)
        }
    }
}
