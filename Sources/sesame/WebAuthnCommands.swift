import Foundation
import SesameCore
import SesameCrypto
import WebAuthn

/// `sesame webauthn verify-registration|verify-authentication`: verify one ceremony read from stdin.
///
/// Exit codes: 0 verified, 1 verification failed (JSON with the stable error code on stdout), 2 unusable input.
enum WebAuthnCommands {
    static let usage = """
        usage:
          sesame webauthn verify-registration --rp-id ID --origin ORIGIN [--origin ...] --challenge B64URL
              [--require-user-verification] [--no-require-user-presence] [--top-origin ORIGIN ...]
              [--trust-anchor PEM_FILE ...] [--now ISO8601]
              [--metadata BLOB_FILE [--metadata-root PEM_FILE ...]] [--policy POLICY_FILE]   < RegistrationResponseJSON
          sesame webauthn verify-authentication --rp-id ID --origin ORIGIN [--origin ...] --challenge B64URL
              --public-key B64URL_COSE_KEY --sign-count N [--backup-eligible true|false]
              [--user-handle B64URL] [--usernameless] [--require-user-verification] [--top-origin ORIGIN ...]
              < AuthenticationResponseJSON
        verify-authentication identifies the user in one of three ways (WebAuthn L3 §7.2 step 6):
          (default)                  by the credential record given: a userHandle in the response is optional
                                     and only reported;
          --user-handle H            the record belongs to account H: a returned userHandle must be H;
          --usernameless [--user-handle H]
                                     usernameless sign-in: the response must carry userHandle
                                     (user_handle_missing), and with --user-handle it must be H.
          A mismatch is user_handle_mismatch. A returned userHandle is printed as "userHandle" (base64url).
        --metadata judges the registration by a FIDO metadata (MDS3) BLOB, verified at --now to --metadata-root (default:
        the built-in FIDO Alliance root): the authenticator's entry names it ("authenticator", "metadataStatus"), a
        refusing status fails it (authenticator_revoked, ...), and its attestation chain must reach the entry's roots.
        --policy then judges it by an attestation policy file, as the server judges a project's registrations (see
        'sesame project policy --help' for the format): a refusal fails it with its code (attestation_none_refused,
        aaguid_not_allowed, certification_level_too_low, ...); rules about the model need --metadata.
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let subcommand = arguments.first else { return usageFailure("missing subcommand") }
        do {
            switch subcommand {
            case "verify-registration": return try verifyRegistration(Array(arguments.dropFirst()))
            case "verify-authentication": return try verifyAuthentication(Array(arguments.dropFirst()))
            case "--help", "-h", "help":
                print(usage)
                return 0
            default: return usageFailure("unknown subcommand '\(subcommand)'")
            }
        } catch {
            return usageFailure(error.message)
        }
    }

    private static func verifyRegistration(_ raw: [String]) throws(Arguments.UsageError) -> Int32 {
        var args = try Arguments(raw, booleanFlags: ["--require-user-verification", "--no-require-user-presence"])
        let policy = try relyingPartyPolicy(&args)
        let challenge = try decodeFlag(try args.required("--challenge"), "--challenge")
        let requiresUserPresence = !args.flag("--no-require-user-presence")
        var anchors: [Certificate] = []
        for path in args.all("--trust-anchor") { anchors += try readCertificates(path) }
        let now = try parseDate(try args.optional("--now"))
        let metadata = try readMetadata(try args.optional("--metadata"), roots: args.all("--metadata-root"), at: now)
        let attestationPolicy = try args.optional("--policy").map(PolicyFile.read) ?? .default
        try args.finish()
        let input = try readStandardInput()

        let expectations = RegistrationExpectations(
            policy: policy, challenge: challenge, requiresUserPresence: requiresUserPresence, trustAnchors: anchors)
        return report { () throws -> RegistrationOutput in
            let registration = try RegistrationVerifier.verify(
                try RegistrationCredential(json: input), expectations: expectations, at: now)
            let entry = metadata?.entry(for: registration)
            // The server's judgement after the core: the entry's status and roots, then the attestation policy.
            let verdict = try attestationPolicy.judge(registration, entry: entry, at: now)
            return RegistrationOutput(
                verified: true, credentialId: Base64URL.encode(registration.credentialID),
                publicKey: Base64URL.encode(registration.publicKey.cborEncoded),
                algorithm: registration.publicKey.algorithm.rawValue, format: registration.format,
                attestationType: registration.attestationType.rawValue, aaguid: registration.aaguid,
                signCount: registration.signCount, userVerified: registration.userVerified,
                backupEligible: registration.backupEligible, backedUp: registration.backedUp,
                transports: registration.transports, authenticator: entry?.metadataStatement?.description,
                metadataStatus: verdict?.status?.status.rawValue, certificationLevel: entry?.certificationLevel(at: now)?.description)
        }
    }

    /// The verified BLOB of `--metadata`, judged at `time` against `--metadata-root` or the built-in FIDO root.
    private static func readMetadata(_ path: String?, roots rootPaths: [String], at time: Date) throws(Arguments.UsageError) -> MetadataBLOB? {
        guard let path else {
            guard rootPaths.isEmpty else { throw Arguments.UsageError(message: "--metadata-root needs --metadata") }
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Arguments.UsageError(message: "cannot read metadata BLOB file \(path)")
        }
        var roots: [Certificate] = []
        for rootPath in rootPaths { roots += try readCertificates(rootPath) }
        do {
            return try MetadataBLOB(jwsCompactSerialization: Array(data), rootCertificates: roots.isEmpty ? [FIDOMetadataRoot.certificate] : roots,
                                    at: time)
        } catch {
            throw Arguments.UsageError(message: "metadata BLOB \(path): \(error.code): \(error.detail)")
        }
    }

    private static func verifyAuthentication(_ raw: [String]) throws(Arguments.UsageError) -> Int32 {
        var args = try Arguments(raw, booleanFlags: ["--require-user-verification", "--usernameless"])
        let policy = try relyingPartyPolicy(&args)
        let challenge = try decodeFlag(try args.required("--challenge"), "--challenge")
        let publicKeyBytes = try decodeFlag(try args.required("--public-key"), "--public-key")
        let signCountText = try args.required("--sign-count")
        guard let signCount = UInt32(signCountText) else {
            throw Arguments.UsageError(message: "--sign-count must be an integer from 0 to \(UInt32.max)")
        }
        let backupEligible: Bool?
        switch try args.optional("--backup-eligible") {
        case nil: backupEligible = nil
        case "true": backupEligible = true
        case "false": backupEligible = false
        default: throw Arguments.UsageError(message: "--backup-eligible must be true or false")
        }
        let userHandle = try args.optional("--user-handle").map { value throws(Arguments.UsageError) in
            try decodeFlag(value, "--user-handle")
        }
        // §7.2 step 6: the caller holds the credential record, so by default the user is its owner; only
        // --usernameless demands that the response name the user. --user-handle is the record's owner either way.
        let identification: UserIdentification =
            args.flag("--usernameless") ? .usernameless : .identified(expectedUserHandle: userHandle)
        try args.finish()
        let input = try readStandardInput()

        return report { () throws(WebAuthnError) -> AuthenticationOutput in
            let credential = try AuthenticationCredential(json: input)
            // The stored key is the relying party's own data; a bad one is reported like any failed step.
            let record = CredentialRecord(id: credential.rawID, publicKey: try COSEKey(cborEncoded: publicKeyBytes),
                                          signCount: signCount, backupEligible: backupEligible, userHandle: userHandle)
            let expectations = AuthenticationExpectations(policy: policy, challenge: challenge, identification: identification)
            let result = try AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
            return AuthenticationOutput(
                verified: true, credentialId: Base64URL.encode(result.credentialID), newSignCount: result.newSignCount,
                userVerified: result.userVerified, backupEligible: result.backupEligible, backedUp: result.backedUp,
                userHandle: credential.userHandle.map { Base64URL.encode($0) })
        }
    }

    // MARK: - Shared pieces

    private static func relyingPartyPolicy(_ args: inout Arguments) throws(Arguments.UsageError) -> RelyingPartyPolicy {
        let rpID = try args.required("--rp-id")
        let origins = args.all("--origin")
        guard !origins.isEmpty else { throw Arguments.UsageError(message: "missing --origin") }
        let topOrigins = args.all("--top-origin")
        return RelyingPartyPolicy(
            id: rpID, origins: origins, requiresUserVerification: args.flag("--require-user-verification"),
            crossOrigin: topOrigins.isEmpty ? .forbidden : .allowed(topOrigins: topOrigins))
    }

    private static func decodeFlag(_ value: String, _ flag: String) throws(Arguments.UsageError) -> [UInt8] {
        do { return try Base64URL.decode(value) } catch {
            throw Arguments.UsageError(message: "\(flag) is not base64url")
        }
    }

    private static func readCertificates(_ path: String) throws(Arguments.UsageError) -> [Certificate] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Arguments.UsageError(message: "cannot read trust anchor file \(path)")
        }
        guard let certificates = try? Certificate.certificates(pemBundle: text), !certificates.isEmpty else {
            throw Arguments.UsageError(message: "\(path) holds no PEM certificate")
        }
        return certificates
    }

    private static func parseDate(_ text: String?) throws(Arguments.UsageError) -> Date {
        guard let text else { return Date() }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        guard let date = formatter.date(from: text) else {
            throw Arguments.UsageError(message: "--now must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z")
        }
        return date
    }

    /// Reads stdin (at most 1 MiB) and checks that it is JSON at all; its shape is the verifier's business.
    private static func readStandardInput() throws(Arguments.UsageError) -> [UInt8] {
        let limit = 1 << 20
        let data = FileHandle.standardInput.readData(ofLength: limit + 1)
        guard data.count <= limit else { throw Arguments.UsageError(message: "standard input is larger than 1 MiB") }
        guard (try? JSONSerialization.jsonObject(with: data)) != nil else {
            throw Arguments.UsageError(message: "standard input is not JSON")
        }
        return Array(data)
    }

    /// Runs a verification and prints its JSON outcome; returns the exit code.
    /// - Parameter verify: throws a ``WebAuthnError`` (the core) or a ``SesameError`` (metadata and policy judgement).
    private static func report<Output: Encodable>(_ verify: () throws -> Output) -> Int32 {
        do {
            printJSON(try verify())
            return 0
        } catch let error as WebAuthnError {
            printJSON(FailureOutput(verified: false, error: error.code.rawValue, message: error.detail))
        } catch let error as SesameError {
            printJSON(FailureOutput(verified: false, error: error.reason, message: error.detail))
        } catch {
            printJSON(FailureOutput(verified: false, error: "internal_failure", message: "\(error)"))
        }
        return 1
    }

    private static func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain structs of strings, numbers and booleans cannot fail.
        let data = try! encoder.encode(value)
        print(String(decoding: data, as: UTF8.self))
    }

    private static func usageFailure(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("sesame webauthn: \(message)\n\(usage)\n".utf8))
        return 2
    }
}

private struct RegistrationOutput: Encodable {
    let verified: Bool
    let credentialId: String
    let publicKey: String
    let algorithm: Int
    let format: String
    let attestationType: String
    let aaguid: String
    let signCount: UInt32
    let userVerified: Bool
    let backupEligible: Bool
    let backedUp: Bool
    let transports: [String]
    /// The model's `description` from metadata, when `--metadata` has an entry for it.
    let authenticator: String?
    /// The status report in force, when `--metadata` has an entry for it.
    let metadataStatus: String?
    /// The certification level in force (`FIDO_CERTIFIED_L1`, ...), when `--metadata` has an entry that grants one.
    let certificationLevel: String?
}

private struct AuthenticationOutput: Encodable {
    let verified: Bool
    let credentialId: String
    let newSignCount: UInt32
    let userVerified: Bool
    let backupEligible: Bool
    let backedUp: Bool
    /// The response's userHandle, base64url; absent when the response carries none.
    let userHandle: String?
}

private struct FailureOutput: Encodable {
    let verified: Bool
    let error: String
    let message: String
}
