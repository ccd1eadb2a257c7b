import Foundation
import SesameCrypto

/// The status of an authenticator model as the FIDO Alliance reports it (MDS3 `AuthenticatorStatus`).
///
/// Five statuses refuse registration (``refusal``); the others describe certification or a pending update.
///
/// - SeeAlso: [FIDO MDS3 §3.1.4](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#authenticatorstatus-enum)
public struct AuthenticatorStatus: Hashable, Sendable, CustomStringConvertible {
    /// The status as MDS3 writes it, for example `FIDO_CERTIFIED_L1`.
    public let rawValue: String

    private init(_ rawValue: String) { self.rawValue = rawValue }

    public static let notFIDOCertified = AuthenticatorStatus("NOT_FIDO_CERTIFIED")
    public static let fidoCertified = AuthenticatorStatus("FIDO_CERTIFIED")
    public static let userVerificationBypass = AuthenticatorStatus("USER_VERIFICATION_BYPASS")
    public static let attestationKeyCompromise = AuthenticatorStatus("ATTESTATION_KEY_COMPROMISE")
    public static let userKeyRemoteCompromise = AuthenticatorStatus("USER_KEY_REMOTE_COMPROMISE")
    public static let userKeyPhysicalCompromise = AuthenticatorStatus("USER_KEY_PHYSICAL_COMPROMISE")
    public static let updateAvailable = AuthenticatorStatus("UPDATE_AVAILABLE")
    public static let revoked = AuthenticatorStatus("REVOKED")
    public static let selfAssertionSubmitted = AuthenticatorStatus("SELF_ASSERTION_SUBMITTED")
    public static let fidoCertifiedL1 = AuthenticatorStatus("FIDO_CERTIFIED_L1")
    public static let fidoCertifiedL1Plus = AuthenticatorStatus("FIDO_CERTIFIED_L1plus")
    public static let fidoCertifiedL2 = AuthenticatorStatus("FIDO_CERTIFIED_L2")
    public static let fidoCertifiedL2Plus = AuthenticatorStatus("FIDO_CERTIFIED_L2plus")
    public static let fidoCertifiedL3 = AuthenticatorStatus("FIDO_CERTIFIED_L3")
    public static let fidoCertifiedL3Plus = AuthenticatorStatus("FIDO_CERTIFIED_L3plus")

    /// Every status MDS3 defines.
    public static let all: [AuthenticatorStatus] = [
        .notFIDOCertified, .fidoCertified, .userVerificationBypass, .attestationKeyCompromise, .userKeyRemoteCompromise,
        .userKeyPhysicalCompromise, .updateAvailable, .revoked, .selfAssertionSubmitted, .fidoCertifiedL1,
        .fidoCertifiedL1Plus, .fidoCertifiedL2, .fidoCertifiedL2Plus, .fidoCertifiedL3, .fidoCertifiedL3Plus,
    ]

    /// The status spelled `rawValue`, or nil when MDS3 defines no such status (matching is exact, case included).
    public init?(rawValue: String) {
        guard let known = Self.all.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = known
    }

    /// The code a registration is refused with when this is the authenticator's latest status, or nil.
    public var refusal: WebAuthnError.Code? {
        switch rawValue {
        case Self.revoked.rawValue: .authenticatorRevoked
        case Self.userVerificationBypass.rawValue: .authenticatorUserVerificationBypass
        case Self.attestationKeyCompromise.rawValue: .authenticatorAttestationKeyCompromise
        case Self.userKeyRemoteCompromise.rawValue: .authenticatorUserKeyRemoteCompromise
        case Self.userKeyPhysicalCompromise.rawValue: .authenticatorUserKeyPhysicalCompromise
        default: nil
        }
    }

    public var description: String { rawValue }
}

/// A FIDO certification level that MDS3 status reports grant, ordered from the lowest (L1) to the highest (L3+).
///
/// - SeeAlso: [FIDO MDS3 §3.1.4](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#authenticatorstatus-enum)
public enum CertificationLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// `FIDO_CERTIFIED_L1` (and the deprecated `FIDO_CERTIFIED`).
    case l1
    /// `FIDO_CERTIFIED_L1plus`.
    case l1Plus
    /// `FIDO_CERTIFIED_L2`.
    case l2
    /// `FIDO_CERTIFIED_L2plus`.
    case l2Plus
    /// `FIDO_CERTIFIED_L3`.
    case l3
    /// `FIDO_CERTIFIED_L3plus`.
    case l3Plus

    /// The status that grants this level, for example `FIDO_CERTIFIED_L1plus`.
    public var status: AuthenticatorStatus {
        switch self {
        case .l1: .fidoCertifiedL1
        case .l1Plus: .fidoCertifiedL1Plus
        case .l2: .fidoCertifiedL2
        case .l2Plus: .fidoCertifiedL2Plus
        case .l3: .fidoCertifiedL3
        case .l3Plus: .fidoCertifiedL3Plus
        }
    }

    /// The level a status grants: `FIDO_CERTIFIED_L1` to `FIDO_CERTIFIED_L3plus`, and the deprecated `FIDO_CERTIFIED`
    /// as L1; nil for every other status.
    /// - Parameter status: a status report's status.
    public init?(_ status: AuthenticatorStatus) {
        if status == .fidoCertified {
            self = .l1
            return
        }
        guard let level = Self.allCases.first(where: { $0.status == status }) else { return nil }
        self = level
    }

    /// The level spelled as its status (`FIDO_CERTIFIED_L2`, exact case), or nil.
    /// - Parameter name: the status text.
    public init?(name: String) {
        guard let status = AuthenticatorStatus(rawValue: name), status != .fidoCertified, let level = Self(status) else { return nil }
        self = level
    }

    public var description: String { status.rawValue }

    public static func < (lhs: CertificationLevel, rhs: CertificationLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One status report of a metadata entry (MDS3 `StatusReport`): what Sesame reads of it.
///
/// - SeeAlso: [FIDO MDS3 §3.1.3](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#statusreport-dictionary)
public struct MetadataStatusReport: Sendable, Hashable {
    public let status: AuthenticatorStatus
    /// The day the status took effect (midnight UTC), when the report says.
    public let effectiveDate: Date?
    /// The certificate the status is about (for example a compromised attestation certificate), when given.
    public let certificate: Certificate?
}

/// The parts of a metadata statement (FIDO Metadata Statement v3) that Sesame uses.
///
/// - SeeAlso: [FIDO Metadata Statement §4](https://fidoalliance.org/specs/mds/fido-metadata-statement-v3.0-ps-20210518.html#metadata-keys)
public struct MetadataStatement: Sendable {
    /// The human-readable name of the authenticator model, for example "YubiKey 5 Series".
    public let description: String
    /// `fido2`, `u2f` or `uaf`.
    public let protocolFamily: String
    /// The statement's own AAGUID (lowercase), for FIDO2 authenticators.
    public let aaguid: String?
    /// The statement's own attestation certificate key identifiers (lowercase hex), for U2F authenticators.
    public let attestationCertificateKeyIdentifiers: [String]
    /// The attestation types the model supports, for example `basic_full`, `attca`, `none`.
    public let attestationTypes: [String]
    /// The trust anchors of the model's attestation certificate chains.
    public let attestationRootCertificates: [Certificate]
    /// The ways the model verifies its user (`userVerificationDetails`): each alternative is the set of methods it
    /// combines, for example `[["fingerprint_internal"], ["passcode_internal", "presence_internal"]]`; nil when the
    /// statement does not say.
    public let userVerificationDetails: [[String]]?
}

/// One entry of a metadata BLOB (MDS3 `MetadataBLOBPayloadEntry`): an authenticator model, its statement and status.
///
/// - SeeAlso: [FIDO MDS3 §3.1.1](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#metadata-blob-payload-entry-dictionary)
public struct MetadataEntry: Sendable {
    /// The AAGUID in lowercase UUID form, for FIDO2 authenticators.
    public let aaguid: String?
    /// Lowercase hex SHA-1 of the subjectPublicKey of each attestation certificate, for U2F authenticators.
    public let attestationCertificateKeyIdentifiers: [String]
    /// The UAF `aaid`, when given (Sesame does not look entries up by it).
    public let aaid: String?
    /// The metadata statement, when given.
    public let metadataStatement: MetadataStatement?
    /// The status reports, in BLOB order.
    public let statusReports: [MetadataStatusReport]
    /// The day of the latest status change (midnight UTC).
    public let timeOfLastStatusChange: Date
    /// The entry's JSON text as it appeared in the BLOB, to store and read again with ``init(jsonEncoded:)``.
    public let jsonText: [UInt8]

    /// Parses one entry strictly: required members present with their types, identifiers well formed, every root
    /// certificate a base64 DER certificate and every status one MDS3 defines; unknown members are ignored.
    /// - Parameter bytes: the entry's JSON object text.
    /// - Throws: `metadata_malformed`, or `metadata_unknown_status` for a status MDS3 does not define.
    public init(jsonEncoded bytes: [UInt8]) throws(WebAuthnError) {
        func malformed(_ detail: String) -> WebAuthnError { WebAuthnError(.metadataMalformed, "MDS3 §3.1.1: entry \(detail)") }
        guard let entry = JSONObjectMembers(bytes) else { throw malformed("is not one JSON object") }
        aaid = try Self.optionalString(entry, "aaid", malformed)
        if entry.isAbsentOrNull("aaguid") {
            aaguid = nil
        } else {
            guard let text = entry.string("aaguid"), let normalized = Self.normalizedAAGUID(text) else {
                throw malformed("aaguid is not a UUID string")
            }
            aaguid = normalized
        }
        attestationCertificateKeyIdentifiers = try Self.keyIdentifiers(entry, malformed)
        guard aaguid != nil || aaid != nil || !attestationCertificateKeyIdentifiers.isEmpty else {
            throw malformed("has none of aaid, aaguid and attestationCertificateKeyIdentifiers")
        }
        if entry.isAbsentOrNull("metadataStatement") {
            metadataStatement = nil
        } else {
            guard let statement = entry.object("metadataStatement") else { throw malformed("metadataStatement is not an object") }
            metadataStatement = try Self.statement(statement)
        }
        guard let reports = entry.objects("statusReports") else { throw malformed("statusReports is not an array of objects") }
        var statusReports: [MetadataStatusReport] = []
        for report in reports { statusReports.append(try Self.statusReport(report)) }
        self.statusReports = statusReports
        guard let changed = entry.string("timeOfLastStatusChange"), let date = MetadataDate.parse(changed) else {
            throw malformed("timeOfLastStatusChange is not a yyyy-mm-dd date")
        }
        timeOfLastStatusChange = date
        jsonText = bytes
    }

    /// The status report in force at `time`: of the reports whose `effectiveDate` is not after `time` (a report
    /// without one counts as the earliest), the latest; between reports of the same day, the later in BLOB order.
    /// - Parameter time: the moment to judge, for example the ceremony's time.
    /// - Returns: the report, or nil when none is in force.
    public func latestStatusReport(at time: Date) -> MetadataStatusReport? {
        var latest: MetadataStatusReport? = nil
        for report in statusReports {
            let effective = report.effectiveDate ?? .distantPast
            guard effective <= time else { continue }
            if let current = latest, (current.effectiveDate ?? .distantPast) > effective { continue }
            latest = report
        }
        return latest
    }

    /// The certification level in force at `time`: of the status reports in force (ordered as in
    /// ``latestStatusReport(at:)``), the latest that is about certification decides; `NOT_FIDO_CERTIFIED` ends a
    /// level, and statuses such as `UPDATE_AVAILABLE` leave it as it was.
    /// - Parameter time: the moment to judge, for example the ceremony's time.
    /// - Returns: the level, or nil when no certification is in force.
    public func certificationLevel(at time: Date) -> CertificationLevel? {
        let inForce = statusReports.enumerated()
            .filter { ($0.element.effectiveDate ?? .distantPast) <= time }
            .sorted { ($0.element.effectiveDate ?? .distantPast, $0.offset) < ($1.element.effectiveDate ?? .distantPast, $1.offset) }
        var level: CertificationLevel? = nil
        for (_, report) in inForce {
            if report.status == .notFIDOCertified {
                level = nil
            } else if let granted = CertificationLevel(report.status) {
                level = granted
            }
        }
        return level
    }

    /// The trust anchors this entry gives attestation chains: its statement's `attestationRootCertificates`.
    public var trustAnchors: [Certificate] { metadataStatement?.attestationRootCertificates ?? [] }

    private static func optionalString(_ members: JSONObjectMembers, _ name: String,
                                       _ malformed: (String) -> WebAuthnError) throws(WebAuthnError) -> String? {
        if members.isAbsentOrNull(name) { return nil }
        guard let value = members.string(name) else { throw malformed("\(name) is not a string") }
        return value
    }

    private static func keyIdentifiers(_ members: JSONObjectMembers,
                                       _ malformed: (String) -> WebAuthnError) throws(WebAuthnError) -> [String] {
        let name = "attestationCertificateKeyIdentifiers"
        if members.isAbsentOrNull(name) { return [] }
        guard let identifiers = members.strings(name) else { throw malformed("\(name) is not an array of strings") }
        var normalized: [String] = []
        for identifier in identifiers {
            // A hex SHA-1: 40 hex digits (lowercase in MDS3; normalized here).
            let lower = identifier.lowercased()
            guard lower.utf8.count == 40, lower.utf8.allSatisfy(Self.isHexDigit) else {
                throw malformed("\(name) holds something that is not 40 hex digits")
            }
            normalized.append(lower)
        }
        return normalized
    }

    private static func statement(_ bytes: [UInt8]) throws(WebAuthnError) -> MetadataStatement {
        func malformed(_ detail: String) -> WebAuthnError {
            WebAuthnError(.metadataMalformed, "Metadata Statement §4: metadataStatement \(detail)")
        }
        guard let statement = JSONObjectMembers(bytes) else { throw malformed("is not one JSON object") }
        guard let description = statement.string("description") else { throw malformed("description is not a string") }
        guard let family = statement.string("protocolFamily") else { throw malformed("protocolFamily is not a string") }
        var aaguid: String? = nil
        if !statement.isAbsentOrNull("aaguid") {
            guard let text = statement.string("aaguid"), let normalized = normalizedAAGUID(text) else {
                throw malformed("aaguid is not a UUID string")
            }
            aaguid = normalized
        }
        let identifiers = try keyIdentifiers(statement, malformed)
        guard let types = statement.strings("attestationTypes") else { throw malformed("attestationTypes is not an array of strings") }
        guard let roots = statement.strings("attestationRootCertificates") else {
            throw malformed("attestationRootCertificates is not an array of strings")
        }
        var certificates: [Certificate] = []
        for root in roots {
            // Base64 (not base64url) DER, per the statement's definition.
            do { certificates.append(try Certificate(derEncoded: Base64URL.decode(root))) } catch {
                throw malformed("attestationRootCertificates holds something that is not a base64 DER certificate")
            }
        }
        var userVerification: [[String]]? = nil
        if !statement.isAbsentOrNull("userVerificationDetails") {
            // An array of alternatives, each an array of VerificationMethodDescriptor objects (Metadata Statement §3.1).
            guard let alternatives = statement.objectArrays("userVerificationDetails") else {
                throw malformed("userVerificationDetails is not an array of arrays of objects")
            }
            var details: [[String]] = []
            for alternative in alternatives {
                var methods: [String] = []
                for descriptor in alternative {
                    guard let method = JSONObjectMembers(descriptor)?.string("userVerificationMethod") else {
                        throw malformed("userVerificationDetails holds a descriptor without a userVerificationMethod string")
                    }
                    methods.append(method)
                }
                details.append(methods)
            }
            userVerification = details
        }
        return MetadataStatement(description: description, protocolFamily: family, aaguid: aaguid,
                                 attestationCertificateKeyIdentifiers: identifiers, attestationTypes: types,
                                 attestationRootCertificates: certificates, userVerificationDetails: userVerification)
    }

    private static func statusReport(_ bytes: [UInt8]) throws(WebAuthnError) -> MetadataStatusReport {
        func malformed(_ detail: String) -> WebAuthnError { WebAuthnError(.metadataMalformed, "MDS3 §3.1.3: status report \(detail)") }
        guard let report = JSONObjectMembers(bytes) else { throw malformed("is not one JSON object") }
        guard let text = report.string("status") else { throw malformed("status is not a string") }
        guard let status = AuthenticatorStatus(rawValue: text) else {
            throw WebAuthnError(.metadataUnknownStatus, "MDS3 §3.1.4: status \"\(text.prefix(64))\" is not an AuthenticatorStatus")
        }
        var effective: Date? = nil
        if !report.isAbsentOrNull("effectiveDate") {
            guard let date = report.string("effectiveDate").flatMap(MetadataDate.parse) else {
                throw malformed("effectiveDate is not a yyyy-mm-dd date")
            }
            effective = date
        }
        var certificate: Certificate? = nil
        if !report.isAbsentOrNull("certificate") {
            do {
                guard let text = report.string("certificate") else { throw WebAuthnError(.metadataMalformed, "") }
                certificate = try Certificate(derEncoded: Base64URL.decode(text))
            } catch {
                throw malformed("certificate is not a base64 DER certificate")
            }
        }
        return MetadataStatusReport(status: status, effectiveDate: effective, certificate: certificate)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// `text` in lowercase when it is a UUID of the 8-4-4-4-12 hex form, else nil.
    /// - Parameter text: an AAGUID as written, for example `CB69481E-8FF7-4039-93EC-0A2729A154A8`.
    /// - Returns: the lowercase form the verifier reports (``VerifiedRegistration/aaguid``), or nil.
    public static func normalizedAAGUID(_ text: String) -> String? {
        let lower = Array(text.lowercased().utf8)
        guard lower.count == 36 else { return nil }
        for (index, byte) in lower.enumerated() {
            let isDash = index == 8 || index == 13 || index == 18 || index == 23
            guard isDash ? byte == UInt8(ascii: "-") : isHexDigit(byte) else { return nil }
        }
        return String(decoding: lower, as: UTF8.self)
    }
}

/// The `yyyy-mm-dd` dates of MDS3 (`nextUpdate`, `effectiveDate`, `timeOfLastStatusChange`), as midnight UTC.
enum MetadataDate {
    /// The date, or nil for anything but a real calendar day written as exactly `yyyy-mm-dd`.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))  // at most 4 digits: cannot overflow
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...12).contains(month), day >= 1
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day <= lengths[month - 1] else { return nil }
        // Days from 1970-01-01 (H. Hinnant's days_from_civil); every value is small.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days) * 86_400)
    }
}
