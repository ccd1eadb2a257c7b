import Foundation
import WebAuthn

/// What a project accepts of the authenticators that register passkeys with it: attestation types, AAGUIDs, a
/// minimum FIDO certification level and user verification methods, judged after the WebAuthn core and the metadata
/// status (``evaluate(_:metadata:at:)``), the one place these rules live.
///
/// The default accepts every authenticator the WebAuthn core and the loaded metadata accept, and registrations ask
/// for `attestation: "none"`. A rule about the authenticator's model (an allow list, a minimum certification level,
/// user verification methods) trusts the AAGUID only when the attestation chain was validated to the roots of the
/// model's FIDO metadata entry, so such a policy needs the metadata loaded (`sesame metadata load`) and registrations
/// then ask for `attestation: "direct"` (``attestationConveyance``).
public struct AttestationPolicy: Sendable, Hashable {
    /// Whether a registration with `none` attestation (nothing vouches for the authenticator) is accepted.
    public var acceptsNoneAttestation: Bool
    /// Whether a registration with self attestation (signed by the credential key alone) is accepted.
    public var acceptsSelfAttestation: Bool
    /// When not empty, only these AAGUIDs (lowercase) may register, and only with an attestation metadata proves.
    public var allowedAAGUIDs: [String]
    /// AAGUIDs (lowercase) that may never register, whatever the attestation (a claim of one is refused).
    public var deniedAAGUIDs: [String]
    /// When set, the authenticator's certification level in force in metadata must be at least this.
    public var minimumCertificationLevel: CertificationLevel?
    /// When not empty, the authenticator's metadata statement must offer a way of verifying the user (one of its
    /// `userVerificationDetails` alternatives) that involves one of these methods (for example `fingerprint_internal`).
    public var userVerificationMethods: [String]

    /// Accepts what the WebAuthn core and the metadata accept; asks for no attestation.
    public static let `default` = AttestationPolicy()

    /// The user verification methods of the FIDO Registry (§3.1) a policy may list; `none` and `all` are not methods.
    public static let knownUserVerificationMethods: [String] = [
        "presence_internal", "fingerprint_internal", "passcode_internal", "voiceprint_internal", "faceprint_internal",
        "location_internal", "eyeprint_internal", "pattern_internal", "handprint_internal", "passcode_external",
        "pattern_external",
    ]

    /// The most AAGUIDs or methods a list may hold.
    public static let maximumListCount = 10_000

    /// The reason codes a refusal carries (``SesameError/reason``), stable for metrics and logs.
    public enum Refusal {
        /// The authenticator claims an AAGUID of ``AttestationPolicy/deniedAAGUIDs``.
        public static let aaguidDenied = "aaguid_denied"
        /// A `none` attestation where ``AttestationPolicy/acceptsNoneAttestation`` is false.
        public static let noneAttestation = "attestation_none_refused"
        /// A self attestation where ``AttestationPolicy/acceptsSelfAttestation`` is false.
        public static let selfAttestation = "attestation_self_refused"
        /// The AAGUID is not in a non-empty ``AttestationPolicy/allowedAAGUIDs``.
        public static let aaguidNotAllowed = "aaguid_not_allowed"
        /// A rule about the model needs its metadata entry, and the loaded metadata has none for it.
        public static let notInMetadata = "authenticator_not_in_metadata"
        /// A rule about the model needs an attestation chain validated to the entry's roots, and there is none.
        public static let notAttested = "authenticator_not_attested"
        /// The certification level in force is below ``AttestationPolicy/minimumCertificationLevel``, or there is none.
        public static let certificationTooLow = "certification_level_too_low"
        /// No alternative of the statement's `userVerificationDetails` involves a listed method, or it lists none.
        public static let userVerificationMethod = "user_verification_method_not_allowed"

        /// Every code, in the order the rules are judged.
        public static let all = [aaguidDenied, noneAttestation, selfAttestation, aaguidNotAllowed, notInMetadata, notAttested,
                                 certificationTooLow, userVerificationMethod]
    }

    /// Creates a policy; lists are normalized (lowercase, sorted, without duplicates) by ``validated()``.
    public init(acceptsNoneAttestation: Bool = true, acceptsSelfAttestation: Bool = true, allowedAAGUIDs: [String] = [],
                deniedAAGUIDs: [String] = [], minimumCertificationLevel: CertificationLevel? = nil, userVerificationMethods: [String] = []) {
        self.acceptsNoneAttestation = acceptsNoneAttestation
        self.acceptsSelfAttestation = acceptsSelfAttestation
        self.allowedAAGUIDs = allowedAAGUIDs
        self.deniedAAGUIDs = deniedAAGUIDs
        self.minimumCertificationLevel = minimumCertificationLevel
        self.userVerificationMethods = userVerificationMethods
    }

    /// Whether a rule is about the authenticator's model, which only an attestation metadata validates can prove.
    public var needsProvenModel: Bool {
        !allowedAAGUIDs.isEmpty || minimumCertificationLevel != nil || !userVerificationMethods.isEmpty
    }

    /// WebAuthn's `attestation` conveyance preference for this policy's registrations: `direct` when the policy needs
    /// an attestation (`none` refused, or a rule about the model), else `none`.
    public var attestationConveyance: String { !acceptsNoneAttestation || needsProvenModel ? "direct" : "none" }

    // MARK: Judging

    /// Judges a verified registration by the authenticator's metadata entry (status and attestation chain,
    /// ``MetadataTrust``) and then by this policy (``evaluate(_:metadata:at:)``): what the ceremony engine and
    /// `sesame webauthn verify-registration` run after the WebAuthn core.
    /// - Parameters:
    ///   - registration: the verified registration.
    ///   - entry: the authenticator's metadata entry, or nil when the loaded metadata has none.
    ///   - time: the ceremony's time.
    /// - Returns: what metadata said, when it has an entry.
    /// - Throws: `verification_failed` whose ``SesameError/reason`` is the WebAuthn core's code (`authenticator_revoked`,
    ///   …, `untrusted_attestation`) or one of ``Refusal``.
    @discardableResult
    public func judge(_ registration: VerifiedRegistration, entry: MetadataEntry?, at time: Date) throws(SesameError) -> MetadataVerdict? {
        let verdict: MetadataVerdict?
        do { verdict = try entry.map { entry throws(WebAuthnError) in try MetadataTrust.evaluate(registration, entry: entry, at: time) } } catch {
            throw SesameError.verification(error)
        }
        try evaluate(registration, metadata: verdict, at: time)
        return verdict
    }

    /// Judges a registration the WebAuthn core verified and the metadata did not refuse.
    /// - Parameters:
    ///   - registration: the verified registration.
    ///   - metadata: what metadata said of it (``MetadataTrust/evaluate(_:entry:at:)``), or nil when the loaded
    ///     metadata has no entry for the authenticator.
    ///   - time: the ceremony's time, at which the certification level is read.
    /// - Throws: `verification_failed` whose ``SesameError/reason`` is one of ``Refusal``.
    public func evaluate(_ registration: VerifiedRegistration, metadata: MetadataVerdict?, at time: Date) throws(SesameError) {
        func refuse(_ reason: String, _ detail: String) -> SesameError {
            SesameError(.verificationFailed, "attestation policy: \(detail)", reason: reason)
        }
        let aaguid = registration.aaguid
        // §7.1 step 23 leaves "acceptable" to the Relying Party's policy; this policy's rules, in order:
        // Rule 1: a denied AAGUID is refused even when only claimed (refusing a claim is always safe).
        if deniedAAGUIDs.contains(aaguid) { throw refuse(Refusal.aaguidDenied, "AAGUID \(aaguid) is denied") }
        // §7.1 step 23: no attestation, or self attestation, must be acceptable under the Relying Party's policy.
        if registration.attestationType == .none, !acceptsNoneAttestation {
            throw refuse(Refusal.noneAttestation, "none attestation is refused")
        }
        if registration.attestationType == .self, !acceptsSelfAttestation {
            throw refuse(Refusal.selfAttestation, "self attestation is refused")
        }
        // Rule 2: the allow list, by the AAGUID the attested credential data names (§6.5.1).
        if !allowedAAGUIDs.isEmpty, !allowedAAGUIDs.contains(aaguid) {
            throw refuse(Refusal.aaguidNotAllowed, "AAGUID \(aaguid) is not on the allow list")
        }
        guard needsProvenModel else { return }
        // Rule 3: the model is proven only by an attestation chain validated to its metadata entry's roots (§7.1
        // steps 22-23 with metadata as the source of trust anchors, judged by MetadataTrust before this).
        guard let metadata else {
            throw refuse(Refusal.notInMetadata, "the loaded metadata has no entry for AAGUID \(aaguid)")
        }
        guard metadata.chainValidated else {
            throw refuse(Refusal.notAttested, "a \(registration.attestationType.rawValue) attestation does not prove the model")
        }
        // Rule 4: the certification level in force at the ceremony's time (MDS3 §3.1.4 statuses).
        if let minimum = minimumCertificationLevel {
            let level = metadata.entry.certificationLevel(at: time)
            guard let level, level >= minimum else {
                throw refuse(Refusal.certificationTooLow, "certification \(level?.description ?? "none") is below \(minimum)")
            }
        }
        // Rule 5: a way of verifying the user that involves a listed method (Metadata Statement userVerificationDetails).
        if !userVerificationMethods.isEmpty {
            let alternatives = metadata.entry.metadataStatement?.userVerificationDetails ?? []
            guard alternatives.contains(where: { $0.contains(where: userVerificationMethods.contains) }) else {
                throw refuse(Refusal.userVerificationMethod,
                             alternatives.isEmpty ? "the metadata statement lists no userVerificationDetails"
                                 : "no userVerificationDetails alternative involves \(userVerificationMethods.joined(separator: ", "))")
            }
        }
    }

    // MARK: Checking and JSON

    /// The policy with its lists normalized, or why it cannot be used.
    /// - Throws: `invalid_argument` for an AAGUID that is not a UUID, one both allowed and denied, an unknown user
    ///   verification method, or a list longer than ``maximumListCount``.
    public func validated() throws(SesameError) -> AttestationPolicy {
        func aaguids(_ list: [String], _ name: String) throws(SesameError) -> [String] {
            guard list.count <= Self.maximumListCount else {
                throw SesameError(.invalidArgument, "\(name) holds more than \(Self.maximumListCount) AAGUIDs")
            }
            var normalized: Set<String> = []
            for text in list {
                guard let aaguid = MetadataEntry.normalizedAAGUID(text) else {
                    throw SesameError(.invalidArgument, "\(name): \"\(text.prefix(64))\" is not an AAGUID (a UUID such as 00000000-0000-0000-0000-000000000000)")
                }
                normalized.insert(aaguid)
            }
            return normalized.sorted()
        }
        var policy = self
        policy.allowedAAGUIDs = try aaguids(allowedAAGUIDs, "allowedAAGUIDs")
        policy.deniedAAGUIDs = try aaguids(deniedAAGUIDs, "deniedAAGUIDs")
        if let both = policy.allowedAAGUIDs.first(where: policy.deniedAAGUIDs.contains) {
            throw SesameError(.invalidArgument, "AAGUID \(both) is both allowed and denied")
        }
        guard userVerificationMethods.count <= Self.maximumListCount else {
            throw SesameError(.invalidArgument, "userVerificationMethods holds more than \(Self.maximumListCount) methods")
        }
        for method in userVerificationMethods where !Self.knownUserVerificationMethods.contains(method) {
            throw SesameError(.invalidArgument, "userVerificationMethods: \"\(method.prefix(64))\" is not one of \(Self.knownUserVerificationMethods.joined(separator: ", "))")
        }
        policy.userVerificationMethods = Set(userVerificationMethods).sorted()
        return policy
    }

    /// The JSON members of a policy, each optional (absent is the default).
    private enum Member {
        static let acceptNone = "acceptNoneAttestation", acceptSelf = "acceptSelfAttestation", allowed = "allowedAAGUIDs",
                   denied = "deniedAAGUIDs", minimum = "minimumCertificationLevel", methods = "userVerificationMethods"
        static let all: Set<String> = [acceptNone, acceptSelf, allowed, denied, minimum, methods]
    }

    /// Reads a policy from its JSON form, strictly: one object whose members are all optional (absent means the
    /// default), of the right types, none unknown; then ``validated()``.
    ///
    /// `{"acceptNoneAttestation": false, "acceptSelfAttestation": false, "allowedAAGUIDs": ["…"], "deniedAAGUIDs": [],
    /// "minimumCertificationLevel": "FIDO_CERTIFIED_L1", "userVerificationMethods": ["fingerprint_internal"]}`
    /// - Parameter bytes: the JSON text.
    /// - Throws: `invalid_argument` saying which member is wrong.
    public init(jsonEncoded bytes: [UInt8]) throws(SesameError) {
        func invalid(_ detail: String) -> SesameError { SesameError(.invalidArgument, "attestation policy: \(detail)") }
        guard let members = JSONObjectMembers(bytes) else {
            throw invalid("not one JSON object (a member given twice, invalid UTF-8 and nesting deeper than 16 are refused)")
        }
        if let unknown = members.names.subtracting(Member.all).sorted().first {
            throw invalid("unknown member \"\(unknown.prefix(64))\" (known: \(Member.all.sorted().joined(separator: ", ")))")
        }
        func bool(_ name: String) throws(SesameError) -> Bool {
            if members.isAbsentOrNull(name) { return true }
            guard let value = members.bool(name) else { throw invalid("\(name) must be true or false") }
            return value
        }
        func strings(_ name: String) throws(SesameError) -> [String] {
            if members.isAbsentOrNull(name) { return [] }
            guard let value = members.strings(name) else { throw invalid("\(name) must be an array of strings") }
            return value
        }
        var level: CertificationLevel? = nil
        if !members.isAbsentOrNull(Member.minimum) {
            guard let name = members.string(Member.minimum), let parsed = CertificationLevel(name: name) else {
                throw invalid("\(Member.minimum) must be null or one of \(CertificationLevel.allCases.map(\.description).joined(separator: ", "))")
            }
            level = parsed
        }
        let policy = AttestationPolicy(
            acceptsNoneAttestation: try bool(Member.acceptNone), acceptsSelfAttestation: try bool(Member.acceptSelf),
            allowedAAGUIDs: try strings(Member.allowed), deniedAAGUIDs: try strings(Member.denied), minimumCertificationLevel: level,
            userVerificationMethods: try strings(Member.methods))
        do { self = try policy.validated() } catch { throw invalid(error.detail) }
    }

    /// The JSON form, every member written, in name order (what ``init(jsonEncoded:)`` reads back).
    public var jsonText: String {
        var writer = JSONWriter()
        writer.object { object in
            object.member(Member.acceptNone, acceptsNoneAttestation)
            object.member(Member.acceptSelf, acceptsSelfAttestation)
            object.member(Member.allowed, strings: allowedAAGUIDs)
            object.member(Member.denied, strings: deniedAAGUIDs)
            object.key(Member.minimum)
            if let minimumCertificationLevel { object.string(minimumCertificationLevel.description) } else { object.null() }
            object.member(Member.methods, strings: userVerificationMethods)
        }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
