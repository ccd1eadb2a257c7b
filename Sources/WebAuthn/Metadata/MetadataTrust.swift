import Foundation
import SesameCrypto

/// What identifies an authenticator model in metadata: its AAGUID, or for U2F authenticators (whose AAGUID is all
/// zeros) the key identifier of the attestation certificate.
public enum MetadataIdentifier: Sendable, Hashable {
    /// A FIDO2 authenticator's AAGUID, lowercase UUID form.
    case aaguid(String)
    /// Lowercase hex SHA-1 of the attestation certificate's subjectPublicKey.
    case attestationCertificateKeyIdentifier(String)

    /// The all-zero AAGUID of U2F authenticators and of authenticators that do not say.
    static let zeroAAGUID = "00000000-0000-0000-0000-000000000000"

    /// The identifier to look a registration's authenticator up by: its AAGUID when not all zeros, else the key
    /// identifier of its attestation certificate (the trust path's first), else nil.
    /// - Parameter registration: a verified registration.
    public init?(_ registration: VerifiedRegistration) {
        if registration.aaguid != Self.zeroAAGUID {
            self = .aaguid(registration.aaguid)
        } else if let leaf = registration.attestationTrustPath.first, let identifier = Self.keyIdentifier(of: leaf) {
            self = .attestationCertificateKeyIdentifier(identifier)
        } else {
            return nil
        }
    }

    /// The attestation certificate key identifier of a certificate: lowercase hex SHA-1 of the value of its
    /// subjectPublicKey BIT STRING (without tag, length and unused-bits octet), RFC 5280 §4.2.1.2 method (1).
    /// - Parameter certificate: an attestation certificate.
    /// - Returns: 40 lowercase hex digits, or nil when the certificate's DER cannot be read that far.
    public static func keyIdentifier(of certificate: Certificate) -> String? {
        let bitString = DERReader.Tag(tagClass: 0, isConstructed: false, number: 3)
        do throws(DERReader.Failure) {
            var outer = DERReader(certificate.derRepresentation)
            var fields = DERReader(try outer.read(.sequence))
            var tbs = DERReader(try fields.read(.sequence))
            _ = try tbs.readIfPresent(.context(0))  // version
            _ = try tbs.read(.integer)  // serialNumber
            _ = try tbs.read(.sequence)  // signature
            _ = try tbs.read(.sequence)  // issuer
            _ = try tbs.read(.sequence)  // validity
            _ = try tbs.read(.sequence)  // subject
            var spki = DERReader(try tbs.read(.sequence))
            _ = try spki.read(.sequence)  // algorithm
            let key = try spki.read(bitString)
            guard key.first == 0 else { return nil }
            return Digest.sha1(Array(key.dropFirst())).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        } catch {
            return nil
        }
    }
}

/// What metadata said about a registration that it did not refuse.
public struct MetadataVerdict: Sendable {
    /// The authenticator's entry.
    public let entry: MetadataEntry
    /// The status report in force at the ceremony's time, if any.
    public let status: MetadataStatusReport?
    /// Whether the registration's attestation chain was validated to the entry's `attestationRootCertificates`
    /// (false for self and none attestation, which have no chain).
    public let chainValidated: Bool
}

/// Judges a verified registration by the authenticator's metadata: its status, and its attestation chain against
/// the statement's roots.
///
/// - SeeAlso: [WebAuthn §7.1 steps 22-23](https://www.w3.org/TR/webauthn-3/#sctn-registering-a-new-credential),
///   [FIDO MDS3 §3.1.4](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#authenticatorstatus-enum)
public enum MetadataTrust {
    /// Judges `registration` by `entry` at `time`.
    ///
    /// 1. The status report in force at `time` (``MetadataEntry/latestStatusReport(at:)``) refuses the registration
    ///    when it is `REVOKED`, `USER_VERIFICATION_BYPASS`, `ATTESTATION_KEY_COMPROMISE`, `USER_KEY_REMOTE_COMPROMISE`
    ///    or `USER_KEY_PHYSICAL_COMPROMISE`, each with its own code.
    /// 2. An attestation with a trust path must validate at `time` to the statement's `attestationRootCertificates`
    ///    (§7.1 steps 22-23 with metadata as the source of trust anchors); with no statement or no roots it cannot.
    /// - Parameters:
    ///   - registration: the verified registration (its trust path as sent; the verifier need not have judged it).
    ///   - entry: the authenticator's entry, for example ``MetadataBLOB/entry(for:)``.
    ///   - time: the ceremony's time.
    /// - Returns: the verdict, when nothing refuses.
    /// - Throws: `authenticator_revoked`, `authenticator_user_verification_bypass`,
    ///   `authenticator_attestation_key_compromise`, `authenticator_user_key_remote_compromise`,
    ///   `authenticator_user_key_physical_compromise`, or `untrusted_attestation` for a chain that does not validate.
    public static func evaluate(_ registration: VerifiedRegistration, entry: MetadataEntry,
                                at time: Date) throws(WebAuthnError) -> MetadataVerdict {
        let status = entry.latestStatusReport(at: time)
        if let status, let refusal = status.status.refusal {
            throw WebAuthnError(refusal, "MDS3 §3.1.4: the authenticator's latest status is \(status.status)")
        }
        guard let leaf = registration.attestationTrustPath.first else {
            return MetadataVerdict(entry: entry, status: status, chainValidated: false)
        }
        let anchors = entry.trustAnchors
        guard !anchors.isEmpty else {
            throw WebAuthnError(.untrustedAttestation, "§7.1 step 22: the metadata entry has no attestationRootCertificates")
        }
        do {
            try CertificateChain.validate(leaf: leaf, intermediates: Array(registration.attestationTrustPath.dropFirst()),
                                          trustAnchors: anchors, at: time)
        } catch {
            throw WebAuthnError(.untrustedAttestation, "§7.1 step 23: attestation chain to the metadata roots: \(error.debugDescription)")
        }
        return MetadataVerdict(entry: entry, status: status, chainValidated: true)
    }
}
