import Synchronization

/// A passkey authenticator and its client in software, answering WebAuthn options as a browser would.
///
/// Tests and load generators use it to run real ceremonies against a relying party over HTTP. It holds
/// P-256 (ES256) discoverable credentials, one per relying party and user handle, in memory only. Everything
/// a relying party might judge is under the caller's control through ``settings``: the AAGUID, the
/// attestation, the UP, UV, BE and BS flags and the signature counter. Unlike a browser, it does not check
/// that the relying party ID suits the origin, and it does not refuse a ceremony whose `userVerification` it
/// cannot satisfy, so tests can present a relying party with exactly those cases.
///
/// Safe to share between tasks: its state sits behind a `Mutex`, and keys are generated and used outside it.
/// On Apple platforms it needs the OS releases that have `Mutex` (macOS 15, iOS 18 and their peers).
///
/// - SeeAlso: [WebAuthn §5.1.3 create](https://www.w3.org/TR/webauthn-3/#sctn-createCredential),
///   [§5.1.4 get](https://www.w3.org/TR/webauthn-3/#sctn-getAssertion),
///   [§6.1 authenticator data](https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data)
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class SoftwareAuthenticator: Sendable {
    /// The attestation statement a registration carries.
    public enum Attestation: Sendable, Hashable {
        /// Format `none`, with an empty statement.
        case none
        /// Format `packed`, self attestation: the credential key signs `authData ‖ SHA-256(clientDataJSON)`.
        case packedSelf
    }

    /// How the signature counter moves.
    public enum CounterPolicy: Sendable, Hashable {
        /// Always 0, as synced passkey providers report.
        case zero
        /// Each credential's counter grows by this much on every registration and assertion.
        case increment(by: UInt32)
        /// Always this value, whatever was reported before; use it to present a counter regression.
        case fixed(UInt32)
    }

    /// What the authenticator reports, under test control.
    ///
    /// The defaults behave like a synced passkey provider: zero AAGUID, `none` attestation, UP and UV set,
    /// backup eligible and backed up, counter always 0.
    public struct Settings: Sendable, Hashable {
        /// The authenticator model's AAGUID; exactly 16 bytes.
        public var aaguid: [UInt8] {
            didSet { precondition(aaguid.count == 16, "an AAGUID is 16 bytes, not \(aaguid.count)") }
        }
        /// The attestation of new registrations.
        public var attestation: Attestation
        /// Whether the UP (user present) flag is set.
        public var userPresent: Bool
        /// Whether the UV (user verified) flag is set.
        public var userVerified: Bool
        /// Whether the BE (backup eligible) flag is set.
        public var backupEligible: Bool
        /// Whether the BS (backed up) flag is set.
        public var backedUp: Bool
        /// How the signature counter moves.
        public var counter: CounterPolicy

        /// Creates settings; the defaults are those of a synced passkey provider.
        /// - Parameters:
        ///   - aaguid: the authenticator model's AAGUID, 16 bytes.
        ///   - attestation: the attestation of new registrations.
        ///   - userPresent: whether the UP flag is set.
        ///   - userVerified: whether the UV flag is set.
        ///   - backupEligible: whether the BE flag is set.
        ///   - backedUp: whether the BS flag is set.
        ///   - counter: how the signature counter moves.
        public init(
            aaguid: [UInt8] = Array(repeating: 0, count: 16), attestation: Attestation = .none,
            userPresent: Bool = true, userVerified: Bool = true, backupEligible: Bool = true, backedUp: Bool = true,
            counter: CounterPolicy = .zero
        ) {
            precondition(aaguid.count == 16, "an AAGUID is 16 bytes, not \(aaguid.count)")
            self.aaguid = aaguid
            self.attestation = attestation
            self.userPresent = userPresent
            self.userVerified = userVerified
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.counter = counter
        }
    }

    /// A credential the authenticator holds, without its private key.
    public struct Credential: Sendable, Hashable {
        /// The credential ID.
        public let id: [UInt8]
        /// The relying party ID the credential is scoped to.
        public let rpID: String
        /// The user handle (`user.id`) given at registration.
        public let userHandle: [UInt8]
        /// The account name given at registration.
        public let userName: String
        /// The display name given at registration.
        public let userDisplayName: String
        /// The signature counter last reported for this credential.
        public let signCount: UInt32
        /// The public key as a DER SubjectPublicKeyInfo.
        public let publicKey: [UInt8]
        /// The public key as the COSE_Key written in the authenticator data.
        public let cosePublicKey: [UInt8]
    }

    /// The WebAuthn algorithm identifier of ES256, the only algorithm this authenticator has.
    static let es256 = -7
    /// The transports reported for every credential.
    static let transports = ["internal"]

    /// A credential with its key.
    private struct Stored: Sendable {
        var credential: Credential
        let key: CredentialKey
    }

    private struct State: Sendable {
        var settings: Settings
        /// Oldest first; re-registering a user moves their credential to the end.
        var credentials: [Stored] = []
    }

    private let state: Mutex<State>

    /// Creates an authenticator that holds no credentials.
    /// - Parameter settings: what it reports; see ``Settings``.
    public init(settings: Settings = Settings()) {
        state = Mutex(State(settings: settings))
    }

    /// What the authenticator reports from now on.
    ///
    /// Reading and writing are each atomic; a read-modify-write such as `authenticator.settings.userVerified =
    /// false` is not, so do not race it with another change.
    public var settings: Settings {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    /// The credentials held for a relying party, oldest first.
    /// - Parameter rpID: the relying party ID, such as `example.org`.
    /// - Returns: the credentials, without private keys.
    public func credentials(rpID: String) -> [Credential] {
        state.withLock { state in state.credentials.lazy.filter { $0.credential.rpID == rpID }.map(\.credential) }
    }

    /// Forgets every credential; the settings stay.
    public func removeAll() {
        state.withLock { $0.credentials.removeAll() }
    }

    // MARK: Registration

    /// Registers a new discoverable credential, as `navigator.credentials.create()` does.
    ///
    /// A credential already held for the same relying party and user handle is replaced (as CTAP2 authenticatorMakeCredential does for a resident key).
    /// The attestation follows ``Settings/attestation`` whatever the options' `attestation` preference.
    ///
    /// - Parameters:
    ///   - options: the relying party's creation options.
    ///   - origin: the caller's origin, such as `https://example.org`; `rp.id` defaults to its host.
    ///   - crossOrigin: whether the call comes from a cross-origin iframe.
    ///   - topOrigin: the top-level origin of a cross-origin call.
    /// - Returns: the response, as `PublicKeyCredential.toJSON()` would produce it.
    /// - Throws: ``SoftwareAuthenticatorError`` `invalid_options` for a malformed member or a missing RP ID,
    ///   `not_supported` when ES256 is not among `pubKeyCredParams`, `invalid_state` when the authenticator holds
    ///   one of `excludeCredentials`.
    /// - SeeAlso: [WebAuthn §5.1.3](https://www.w3.org/TR/webauthn-3/#sctn-createCredential)
    public func create(
        _ options: PublicKeyCredentialCreationOptionsJSON, origin: String, crossOrigin: Bool = false,
        topOrigin: String? = nil
    ) throws(SoftwareAuthenticatorError) -> RegistrationResponseJSON {
        // §5.1.3: the RP ID defaults to the origin's effective domain.
        let rpID = try Self.rpID(options.rp.id, origin: origin)
        // §5.1.3: user.id is 1 to 64 bytes.
        let userHandle = try Self.decode(options.user.id, "user.id")
        guard (1...64).contains(userHandle.count) else {
            throw SoftwareAuthenticatorError(.invalidOptions, "user.id is \(userHandle.count) bytes, not 1 to 64")
        }
        let challenge = try Self.decode(options.challenge, "challenge")
        // §5.1.3: an empty pubKeyCredParams means ES256 and RS256; entries of unknown types are skipped.
        let offered = options.pubKeyCredParams.filter { $0.type == "public-key" }.map(\.alg)
        guard options.pubKeyCredParams.isEmpty || offered.contains(Self.es256) else {
            throw SoftwareAuthenticatorError(.notSupported, "ES256 (-7) is not among pubKeyCredParams \(offered)")
        }
        let excluded = try (options.excludeCredentials ?? []).map { descriptor throws(SoftwareAuthenticatorError) in
            try Self.decode(descriptor.id, "excludeCredentials[].id")
        }
        let clientDataJSON = ClientDataEncoding.serialize(
            type: "webauthn.create", challenge: Base64URL.encode(challenge), origin: origin,
            crossOrigin: crossOrigin, topOrigin: topOrigin)

        // CTAP2 authenticatorMakeCredential: a fresh key and credential ID, outside the lock.
        let key = CredentialKey.generate()
        let credentialID = ClientCrypto.randomBytes(count: 16)
        let point = key.publicPoint
        let coseKey = CBORItem.map([
            (.integer(1), .integer(2)),  // kty: EC2
            (.integer(3), .integer(Int64(Self.es256))),  // alg: ES256
            (.integer(-1), .integer(1)),  // crv: P-256
            (.integer(-2), .bytes(point.x)),
            (.integer(-3), .bytes(point.y)),
        ]).encoded
        let publicKey = key.subjectPublicKeyInfo

        let (settings, signCount) = try state.withLock { state throws(SoftwareAuthenticatorError) in
            // CTAP2 authenticatorMakeCredential: a credential in the exclude list that this authenticator holds.
            let held = state.credentials.lazy.map(\.credential).filter { $0.rpID == rpID }
            if held.contains(where: { excluded.contains($0.id) }) {
                throw SoftwareAuthenticatorError(.invalidState, "holds a credential in excludeCredentials")
            }
            let signCount = Self.nextSignCount(after: 0, state.settings.counter)
            state.credentials.removeAll { $0.credential.rpID == rpID && $0.credential.userHandle == userHandle }
            let credential = Credential(
                id: credentialID, rpID: rpID, userHandle: userHandle, userName: options.user.name,
                userDisplayName: options.user.displayName, signCount: signCount, publicKey: publicKey,
                cosePublicKey: coseKey)
            state.credentials.append(Stored(credential: credential, key: key))
            return (state.settings, signCount)
        }

        // WebAuthn §6.5.1: attested credential data is AAGUID ‖ L ‖ credentialId ‖ credentialPublicKey.
        let attested =
            settings.aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)]
            + credentialID + coseKey
        let authenticatorData = Self.authenticatorData(
            rpID: rpID, settings: settings, signCount: signCount, attestedCredentialData: attested)
        let statement: (format: String, statement: CBORItem)
        switch settings.attestation {
        case .none:
            statement = ("none", .map([]))
        case .packedSelf:
            // WebAuthn §8.2: self attestation signs authData ‖ clientDataHash with the credential key.
            let signature = key.signature(for: authenticatorData + ClientCrypto.sha256(clientDataJSON))
            statement = (
                "packed", .map([(.text("alg"), .integer(Int64(Self.es256))), (.text("sig"), .bytes(signature))])
            )
        }
        // WebAuthn §6.5.4: the attestation object.
        let attestationObject = CBORItem.map([
            (.text("fmt"), .text(statement.format)),
            (.text("attStmt"), statement.statement),
            (.text("authData"), .bytes(authenticatorData)),
        ]).encoded

        let id = Base64URL.encode(credentialID)
        return RegistrationResponseJSON(
            id: id, rawID: id,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                authenticatorData: Base64URL.encode(authenticatorData), transports: Self.transports,
                publicKey: Base64URL.encode(publicKey), publicKeyAlgorithm: Self.es256,
                attestationObject: Base64URL.encode(attestationObject)),
            authenticatorAttachment: "platform")
    }

    // MARK: Authentication

    /// Signs in with a credential, as `navigator.credentials.get()` does.
    ///
    /// With `allowCredentials`, it uses the first listed credential it holds; without, the most recently
    /// registered credential for the relying party. `credentialID` picks one instead, as a user choosing an
    /// account would. The response always carries the credential's user handle.
    ///
    /// - Parameters:
    ///   - options: the relying party's request options.
    ///   - origin: the caller's origin, such as `https://example.org`; `rpId` defaults to its host.
    ///   - crossOrigin: whether the call comes from a cross-origin iframe.
    ///   - topOrigin: the top-level origin of a cross-origin call.
    ///   - credentialID: the credential to use; it must be one the options allow.
    /// - Returns: the response, as `PublicKeyCredential.toJSON()` would produce it.
    /// - Throws: ``SoftwareAuthenticatorError`` `invalid_options` for a malformed member or a missing RP ID,
    ///   `not_allowed` when the authenticator holds no usable credential.
    /// - SeeAlso: [WebAuthn §5.1.4](https://www.w3.org/TR/webauthn-3/#sctn-getAssertion)
    public func get(
        _ options: PublicKeyCredentialRequestOptionsJSON, origin: String, crossOrigin: Bool = false,
        topOrigin: String? = nil, credentialID: [UInt8]? = nil
    ) throws(SoftwareAuthenticatorError) -> AuthenticationResponseJSON {
        let rpID = try Self.rpID(options.rpID, origin: origin)
        let challenge = try Self.decode(options.challenge, "challenge")
        let allowed = try (options.allowCredentials ?? []).filter { $0.type == "public-key" }
            .map { descriptor throws(SoftwareAuthenticatorError) in
                try Self.decode(descriptor.id, "allowCredentials[].id")
            }
        if let credentialID, !allowed.isEmpty, !allowed.contains(credentialID) {
            throw SoftwareAuthenticatorError(.notAllowed, "the chosen credential is not in allowCredentials")
        }

        let (stored, settings) = try state.withLock { state throws(SoftwareAuthenticatorError) in
            // CTAP2 authenticatorGetAssertion: the credentials for this RP, narrowed to the allow list if there is one.
            let held = state.credentials.indices.filter { state.credentials[$0].credential.rpID == rpID }
                .map { (index: $0, id: state.credentials[$0].credential.id) }
            let index: Int?
            if let credentialID {
                index = held.first { $0.id == credentialID }?.index
            } else if !allowed.isEmpty {
                index = allowed.lazy.compactMap { id in held.first { $0.id == id }?.index }.first
            } else {
                index = held.last?.index
            }
            guard let index else {
                throw SoftwareAuthenticatorError(.notAllowed, "no usable credential for \(rpID)")
            }
            let old = state.credentials[index].credential
            let signCount = Self.nextSignCount(after: old.signCount, state.settings.counter)
            state.credentials[index].credential = Credential(
                id: old.id, rpID: old.rpID, userHandle: old.userHandle, userName: old.userName,
                userDisplayName: old.userDisplayName, signCount: signCount, publicKey: old.publicKey,
                cosePublicKey: old.cosePublicKey)
            return (state.credentials[index], state.settings)
        }

        let credential = stored.credential
        let clientDataJSON = ClientDataEncoding.serialize(
            type: "webauthn.get", challenge: Base64URL.encode(challenge), origin: origin,
            crossOrigin: crossOrigin, topOrigin: topOrigin)
        let authenticatorData = Self.authenticatorData(
            rpID: rpID, settings: settings, signCount: credential.signCount, attestedCredentialData: nil)
        // WebAuthn §6.3.3: sign authenticatorData ‖ clientDataHash.
        let signature = stored.key.signature(for: authenticatorData + ClientCrypto.sha256(clientDataJSON))
        let id = Base64URL.encode(credential.id)
        return AuthenticationResponseJSON(
            id: id, rawID: id,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                authenticatorData: Base64URL.encode(authenticatorData), signature: Base64URL.encode(signature),
                userHandle: Base64URL.encode(credential.userHandle)),
            authenticatorAttachment: "platform")
    }

    // MARK: Encoding helpers

    /// WebAuthn §6.1: rpIdHash ‖ flags ‖ signCount ‖ attestedCredentialData.
    private static func authenticatorData(
        rpID: String, settings: Settings, signCount: UInt32, attestedCredentialData: [UInt8]?
    ) -> [UInt8] {
        var flags: UInt8 = 0
        if settings.userPresent { flags |= 1 << 0 }  // UP
        if settings.userVerified { flags |= 1 << 2 }  // UV
        if settings.backupEligible { flags |= 1 << 3 }  // BE
        if settings.backedUp { flags |= 1 << 4 }  // BS
        if attestedCredentialData != nil { flags |= 1 << 6 }  // AT
        var out = ClientCrypto.sha256(Array(rpID.utf8))
        out.append(flags)
        out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: signCount >> $0) }
        out += attestedCredentialData ?? []
        return out
    }

    /// The counter to report after `previous` under `policy`.
    private static func nextSignCount(after previous: UInt32, _ policy: CounterPolicy) -> UInt32 {
        switch policy {
        case .zero: 0
        case .increment(let step): previous &+ step
        case .fixed(let value): value
        }
    }

    /// Decodes a base64url member of the options.
    private static func decode(_ string: String, _ member: String) throws(SoftwareAuthenticatorError) -> [UInt8] {
        guard let bytes = Base64URL.decode(string) else {
            throw SoftwareAuthenticatorError(.invalidOptions, "\(member) is not base64url")
        }
        return bytes
    }

    /// The RP ID the options give, else the host of a web origin (`https://host[:port]`).
    static func rpID(_ given: String?, origin: String) throws(SoftwareAuthenticatorError) -> String {
        if let given { return given }
        guard let separator = origin.firstRange(of: "://") else {
            throw SoftwareAuthenticatorError(.invalidOptions, "origin \(origin) has no host; give the RP ID")
        }
        var host = origin[separator.upperBound...]
        if let end = host.firstIndex(where: { "/?#".contains($0) }) { host = host[..<end] }
        if let colon = host.firstIndex(of: ":") { host = host[..<colon] }
        guard !host.isEmpty, !host.contains("@"), !host.hasPrefix("[") else {
            throw SoftwareAuthenticatorError(.invalidOptions, "origin \(origin) has no usable host; give the RP ID")
        }
        return host.lowercased()
    }
}
