import Foundation
import SesameCrypto
import WebAuthn

/// A stand-in for the FIDO Metadata Service: a root, an intermediate and a BLOB signer, signing metadata BLOBs
/// that tests write as JSON text (so any member can be left out or broken).
public struct TestMetadataService: Sendable {
    /// The JWS signature scheme of a BLOB.
    public enum Algorithm: String, Sendable {
        case es256 = "ES256"
        case rs256 = "RS256"
    }

    public let root: TestCertificateAuthority
    public let intermediate: TestCertificateAuthority
    /// The P-256 signer, and its certificate under ``intermediate``.
    public let signingKey: PrivateKey
    public let signingCertificate: Certificate
    /// The RSA signer's certificate under ``intermediate`` (the key is ``TestRSAKey/shared``).
    public let rsaSigningCertificate: Certificate

    /// A service whose signing certificates are valid from `notBefore` to `notAfter` (the root and intermediate for
    /// the test default, 2025-2045).
    public init(notBefore: Date = TestCertificateAuthority.defaultNotBefore,
                notAfter: Date = TestCertificateAuthority.defaultNotAfter) {
        root = .root(commonName: "Sesame Test Metadata Root")
        intermediate = root.intermediate(commonName: "Sesame Test Metadata CA")
        signingKey = PrivateKey.generate(.p256)
        let subject = DER.name([("2.5.4.10", "Sesame Test"), ("2.5.4.3", "mds.example.test")])
        signingCertificate = intermediate.issue(subject: subject, key: signingKey.publicKey, extensions: [.basicConstraints(ca: false)],
                                                notBefore: notBefore, notAfter: notAfter)
        rsaSigningCertificate = intermediate.issue(subject: subject, key: TestRSAKey.shared.publicKey,
                                                   extensions: [.basicConstraints(ca: false)], notBefore: notBefore, notAfter: notAfter)
    }

    /// A signed BLOB: `base64url(header).base64url(payload).base64url(signature)`.
    /// - Parameters:
    ///   - payload: the payload JSON text.
    ///   - algorithm: ES256 (R‖S) or RS256.
    ///   - headerJSON: replaces the header (JSON text); by default `{"alg":…,"typ":"JWT","x5c":[signer, intermediate]}`.
    public func blob(payload: String, algorithm: Algorithm = .es256, headerJSON: String? = nil) -> String {
        let signer = algorithm == .es256 ? signingCertificate : rsaSigningCertificate
        let chain = [signer, intermediate.certificate].map { "\"\(Data($0.derRepresentation).base64EncodedString())\"" }
        let header = headerJSON ?? #"{"alg":"\#(algorithm.rawValue)","typ":"JWT","x5c":[\#(chain.joined(separator: ","))]}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature: [UInt8]
        switch algorithm {
        case .es256:
            let der = signingKey.signature(for: Array(input.utf8))
            do { signature = try ECDSASignature.rawRepresentation(derEncoded: der, curve: .p256) } catch {
                preconditionFailure("ECDSA signature does not convert: \(error.debugDescription)")
            }
        case .rs256:
            signature = TestRSAKey.shared.signature(for: Array(input.utf8), scheme: .pkcs1SHA256)
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// A payload's JSON text.
    public static func payload(number: Int = 7, nextUpdate: String = "2030-02-01", entries: [String],
                               legalHeader: String = "Test metadata, no rights reserved.") -> String {
        #"{"legalHeader":"\#(legalHeader)","no":\#(number),"nextUpdate":"\#(nextUpdate)","entries":[\#(entries.joined(separator: ","))]}"#
    }

    /// An entry's JSON text, with a FIDO2 or U2F statement whose roots are `roots`.
    /// - Parameters:
    ///   - statuses: the status reports as (status, effectiveDate) pairs.
    ///   - userVerification: the statement's `userVerificationDetails` as alternatives of method names; left out when nil.
    public static func entry(aaguid: String? = nil, keyIdentifiers: [String] = [], description: String = "Test Authenticator",
                             roots: [Certificate], statuses: [(String, String?)] = [("FIDO_CERTIFIED_L1", "2025-06-01")],
                             timeOfLastStatusChange: String = "2025-06-01", userVerification: [[String]]? = nil) -> String {
        let rootList = roots.map { "\"\(Data($0.derRepresentation).base64EncodedString())\"" }.joined(separator: ",")
        var identity = ""
        if let aaguid { identity += #""aaguid":"\#(aaguid)","# }
        if !keyIdentifiers.isEmpty {
            identity += #""attestationCertificateKeyIdentifiers":[\#(keyIdentifiers.map { "\"\($0)\"" }.joined(separator: ","))],"#
        }
        let family = aaguid == nil ? "u2f" : "fido2"
        let details = userVerification.map { alternatives in
            let text = alternatives.map { methods in
                "[" + methods.map { #"{"userVerificationMethod":"\#($0)"}"# }.joined(separator: ",") + "]"
            }
            return #","userVerificationDetails":[\#(text.joined(separator: ","))]"#
        } ?? ""
        let statement = #"{\#(identity)"description":"\#(description)","authenticatorVersion":1,"protocolFamily":"\#(family)","schema":3,"#
            + #""attestationTypes":["basic_full"],"attestationRootCertificates":[\#(rootList)]\#(details)}"#
        let reports = statuses.map { status, date in
            date.map { #"{"status":"\#(status)","effectiveDate":"\#($0)"}"# } ?? #"{"status":"\#(status)"}"#
        }
        return #"{\#(identity)"metadataStatement":\#(statement),"statusReports":[\#(reports.joined(separator: ","))],"#
            + #""timeOfLastStatusChange":"\#(timeOfLastStatusChange)"}"#
    }

    /// PEM text of a certificate.
    public static func pem(_ certificate: Certificate) -> String {
        let base64 = Data(certificate.derRepresentation).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }
}
