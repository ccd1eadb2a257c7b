import Foundation
import SesameCore
import SesameCrypto
import WebAuthn

/// `sesame metadata load|status`: the FIDO Metadata Service (MDS3) BLOB, loaded offline from a file.
///
/// Output is JSON, one object per line. Exit 0 on success, 1 when the operation fails (the reason code and detail
/// on stderr, for example `metadata_invalid_signature: ...`), 2 on bad usage.
enum MetadataCommands {
    static let usage = """
        usage (each takes --db and --master-key-file as the admin commands do):
          sesame metadata load FILE [--root CERT.pem]   verify a metadata BLOB downloaded from https://mds3.fidoalliance.org/
                                                        and store its statements; the BLOB's x5c chain must reach the root
                                                        (default: the FIDO Alliance's, GlobalSign Root CA - R3, built in)
                                                        and its no must be greater than the loaded BLOB's
          sesame metadata status                        what is loaded: no, nextUpdate, entries
        """

    static func run(_ raw: [String]) -> Int32 {
        guard let verb = raw.first, !verb.hasPrefix("--") else { return fail("missing command\n\(usage)", status: 2) }
        if verb == "--help" || verb == "-h" || verb == "help" {
            print(usage)
            return 0
        }
        let (rest, positionals) = AdminCommands.split(raw.dropFirst())
        do {
            var args = try Arguments(rest, booleanFlags: [])
            switch verb {
            case "load":
                guard positionals.count == 1 else {
                    throw Arguments.UsageError(message: positionals.isEmpty ? "missing FILE" : "unexpected arguments \(positionals.dropFirst())")
                }
                let roots = try rootCertificates(try args.optional("--root"))
                let blob: [UInt8]
                do { blob = Array(try Data(contentsOf: URL(fileURLWithPath: positionals[0]))) } catch {
                    return fail("cannot read \(positionals[0]): \(error.localizedDescription)", status: 1)
                }
                let sesame = try AdminCommands.openSesame(&args)
                try args.finish()
                let summary = try sesame.metadata.load(blob, rootCertificates: roots)
                AdminCommands.printJSON(StatusOutput(summary))
            case "status":
                guard positionals.isEmpty else { throw Arguments.UsageError(message: "unexpected arguments \(positionals)") }
                let sesame = try AdminCommands.openSesame(&args)
                try args.finish()
                if let summary = try sesame.metadata.status() {
                    AdminCommands.printJSON(StatusOutput(summary))
                } else {
                    AdminCommands.printJSON(["loaded": false])
                }
            default:
                return fail("unknown command 'metadata \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch let error as SesameError {
            // The reason names the failed check (metadata_untrusted_chain, metadata_expired, ...): this is the operator.
            return fail("\(error.reason): \(error.detail)", status: 1)
        } catch {
            return AdminCommands.exitStatus(error, usage: usage)
        }
    }

    /// The roots of `--root FILE` (a PEM bundle), or the built-in FIDO Alliance root.
    private static func rootCertificates(_ path: String?) throws -> [Certificate] {
        guard let path else { return [FIDOMetadataRoot.certificate] }
        let text: String
        do { text = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8) } catch {
            throw Arguments.UsageError(message: "cannot read --root \(path): \(error.localizedDescription)")
        }
        do { return try Certificate.certificates(pemBundle: text) } catch {
            throw Arguments.UsageError(message: "--root \(path) is not a PEM certificate: \(error.debugDescription)")
        }
    }
}

private struct StatusOutput: Encodable {
    let loaded = true
    let no: Int64, nextUpdate: String, entries: Int64, lookupKeys: Int64, legalHeader: String, loadedAt: Date
    /// Whether the nextUpdate day has ended: a newer BLOB should be loaded.
    let stale: Bool

    init(_ summary: MetadataSummary) {
        no = summary.number
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd"
        nextUpdate = formatter.string(from: summary.nextUpdate)
        entries = summary.entryCount
        lookupKeys = summary.lookupKeyCount
        legalHeader = summary.legalHeader
        loadedAt = summary.loadedAt
        stale = Date() >= summary.nextUpdate.addingTimeInterval(86_400)
    }
}
