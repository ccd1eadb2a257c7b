import SesameCrypto

/// The attestation object an authenticator returns at registration: `{fmt, attStmt, authData}` in CBOR.
///
/// - SeeAlso: [WebAuthn §6.5.4](https://www.w3.org/TR/webauthn-3/#sctn-generating-an-attestation-object)
public struct AttestationObject: Sendable {
    /// The attestation statement format identifier, such as `packed`.
    public let format: String
    /// The format-specific attestation statement (a CBOR map).
    public let statement: CBORValue
    public let authenticatorData: AuthenticatorData

    /// Parses an attestation object.
    /// - Throws: ``WebAuthnError`` `cbor_*`, `malformed_attestation_object`, or an authenticator data error.
    public init(cborEncoded: [UInt8]) throws(WebAuthnError) {
        let value = try CBORDecoder().decode(cborEncoded)
        guard let format = value["fmt"]?.text, !format.isEmpty else {
            throw WebAuthnError(.malformedAttestationObject, "fmt is missing or not a string")
        }
        guard let statement = value["attStmt"], statement.mapEntries != nil else {
            throw WebAuthnError(.malformedAttestationObject, "attStmt is missing or not a map")
        }
        guard let authData = value["authData"]?.bytes else {
            throw WebAuthnError(.malformedAttestationObject, "authData is missing or not a byte string")
        }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: authData)
    }
}

/// How an attestation vouches for a credential.
///
/// - SeeAlso: [WebAuthn §6.5.3](https://www.w3.org/TR/webauthn-3/#sctn-attestation-types)
public enum AttestationType: String, Sendable, Hashable {
    /// No attestation statement.
    case none
    /// Signed by the credential's own key.
    case `self`
    /// Signed by an attestation key whose certificate chains to the vendor (Basic); WebAuthn cannot tell it
    /// apart from AttCA without metadata, so x5c attestations report `basic`.
    case basic
    /// Signed by a key certified by an attestation CA.
    case attCA = "attca"
    /// Signed by an anonymization CA.
    case anonCA = "anonca"
}

/// What verifying an attestation statement established.
public struct AttestationResult: Sendable {
    public let type: AttestationType
    /// The attestation certificate and its chain as sent (`x5c`), leaf first; empty for none and self.
    public let trustPath: [Certificate]
}

/// One attestation statement format's verification procedure.
protocol AttestationFormat {
    /// The `fmt` identifier.
    static var identifier: String { get }

    /// Verifies the statement and returns its type and trust path.
    /// - Parameters:
    ///   - statement: `attStmt`.
    ///   - authenticatorData: the parsed `authData`, with attested credential data.
    ///   - clientDataHash: SHA-256 of `clientDataJSON`.
    ///   - credentialPublicKey: the parsed credential public key.
    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey) throws(WebAuthnError) -> AttestationResult
}

/// The formats Sesame verifies, and those it knows but does not verify yet.
enum AttestationFormats {
    /// Registered WebAuthn formats that are recognised but rejected for now.
    static let notYetSupported: Set<String> = ["tpm", "android-key", "android-safetynet", "apple", "compound"]

    /// The verifier of the format called `name`.
    /// - Throws: `unsupported_attestation_format` for a format Sesame does not verify.
    static func format(named name: String) throws(WebAuthnError) -> any AttestationFormat.Type {
        switch name {
        case NoneAttestation.identifier: return NoneAttestation.self
        case PackedAttestation.identifier: return PackedAttestation.self
        case FIDOU2FAttestation.identifier: return FIDOU2FAttestation.self
        default:
            let reason = notYetSupported.contains(name) ? "is not supported yet" : "is unknown"
            throw WebAuthnError(.unsupportedAttestationFormat, "§7.1 step 20: attestation format '\(name)' \(reason)")
        }
    }

    /// Parses `x5c`: a non-empty array of DER certificates, leaf first.
    static func certificates(_ value: CBORValue?, format: String) throws(WebAuthnError) -> [Certificate] {
        guard case .array(let items)? = value, !items.isEmpty else {
            throw WebAuthnError(.malformedAttestationStatement, "\(format): x5c is not a non-empty array")
        }
        var certificates: [Certificate] = []
        for item in items {
            guard let der = item.bytes else {
                throw WebAuthnError(.malformedAttestationStatement, "\(format): x5c holds a non-byte-string")
            }
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw WebAuthnError(.invalidAttestationCertificate, "\(format): x5c certificate does not parse")
            }
        }
        return certificates
    }
}
