import Foundation
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
    /// apart from AttCA without metadata, so packed x5c, fido-u2f, android-key and android-safetynet report `basic`.
    case basic
    /// Signed by a key certified by an attestation CA (`tpm`, whose AIK a privacy CA certifies).
    case attCA = "attca"
    /// Signed by an anonymization CA (`apple`).
    case anonCA = "anonca"
}

/// What verifying an attestation statement established.
public struct AttestationResult: Sendable {
    public let type: AttestationType
    /// The attestation certificate and its chain as sent (`x5c`), leaf first; empty for none and self.
    public let trustPath: [Certificate]
}

/// What the relying party decides where an attestation format's verification procedure leaves the choice to it.
///
/// - SeeAlso: [WebAuthn §8.4](https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation),
///   [WebAuthn §8.5](https://www.w3.org/TR/webauthn-3/#sctn-android-safetynet-attestation)
public struct AttestationOptions: Sendable, Hashable {
    /// `android-key`: also take `origin` and `purpose` from `softwareEnforced`, not only from `teeEnforced`.
    ///
    /// False by default: only keys whose generation and signing purpose a TEE or StrongBox enforces are accepted.
    public var androidKeyAcceptsSoftwareEnforced: Bool
    /// `android-safetynet`: how far, in seconds, `timestampMs` may lie before or after the ceremony time (60).
    public var safetyNetTimestampTolerance: TimeInterval

    /// Creates the options; the defaults are the strict ones.
    /// - Parameters:
    ///   - androidKeyAcceptsSoftwareEnforced: accept software-enforced `origin` and `purpose` in android-key.
    ///   - safetyNetTimestampTolerance: seconds either side of the ceremony time for SafetyNet's `timestampMs`.
    public init(androidKeyAcceptsSoftwareEnforced: Bool = false, safetyNetTimestampTolerance: TimeInterval = 60) {
        self.androidKeyAcceptsSoftwareEnforced = androidKeyAcceptsSoftwareEnforced
        self.safetyNetTimestampTolerance = safetyNetTimestampTolerance
    }
}

/// The ceremony's context a verification procedure may need beyond its inputs.
struct AttestationContext {
    /// The moment the ceremony is judged at.
    var time: Date
    var options: AttestationOptions
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
    ///   - context: the ceremony time and the relying party's attestation options.
    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult
}

/// The formats Sesame verifies, and those it knows but does not verify yet.
enum AttestationFormats {
    /// Registered WebAuthn formats that are recognised but rejected for now.
    static let notYetSupported: Set<String> = ["compound"]

    /// The verifier of the format called `name`.
    /// - Throws: `unsupported_attestation_format` for a format Sesame does not verify.
    static func format(named name: String) throws(WebAuthnError) -> any AttestationFormat.Type {
        switch name {
        case NoneAttestation.identifier: return NoneAttestation.self
        case PackedAttestation.identifier: return PackedAttestation.self
        case FIDOU2FAttestation.identifier: return FIDOU2FAttestation.self
        case TPMAttestation.identifier: return TPMAttestation.self
        case AndroidKeyAttestation.identifier: return AndroidKeyAttestation.self
        case AndroidSafetyNetAttestation.identifier: return AndroidSafetyNetAttestation.self
        case AppleAttestation.identifier: return AppleAttestation.self
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

    /// The public key of an attestation certificate.
    /// - Throws: `invalid_attestation_certificate` when the key is unusable.
    static func publicKey(of certificate: Certificate, _ step: String) throws(WebAuthnError) -> PublicKey {
        do { return try certificate.publicKey() } catch {
            throw WebAuthnError(.invalidAttestationCertificate, "\(step): certificate key is unusable")
        }
    }
}

extension PublicKey {
    /// Whether `other` is the same public key, whatever the encoding it was read from (EC points compared as
    /// affine coordinates, other keys by their canonical SubjectPublicKeyInfo).
    func isSameKey(as other: PublicKey) -> Bool {
        guard kind == other.kind else { return false }
        if case .ellipticCurve = kind {
            guard let mine = ellipticCurvePoint, let theirs = other.ellipticCurvePoint else { return false }
            return mine.x == theirs.x && mine.y == theirs.y
        }
        return derEncodedSubjectPublicKeyInfo == other.derEncodedSubjectPublicKeyInfo
    }
}
