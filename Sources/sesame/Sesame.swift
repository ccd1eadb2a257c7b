import Foundation

/// The `sesame` command: the passkey server and its tools.
@main
enum Sesame {
    static let usage = """
        Sesame, a self-hosted passkey (WebAuthn) server.

        usage: sesame <command> [arguments]

        commands:
          webauthn verify-registration     verify a registration response read from stdin
          webauthn verify-authentication   verify an authentication response read from stdin
          help                             show this text

        Run 'sesame webauthn --help' for the verifier's flags.
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "webauthn":
            exit(WebAuthnCommands.run(Array(arguments.dropFirst())))
        case nil, "help", "--help", "-h":
            print(usage)
        default:
            FileHandle.standardError.write(Data("sesame: unknown command '\(arguments[0])'\n\n\(usage)\n".utf8))
            exit(2)
        }
    }
}
