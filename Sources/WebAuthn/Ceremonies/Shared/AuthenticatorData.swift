/// The authenticator data structure that an authenticator signs in both ceremonies.
///
/// Layout: `rpIdHash` (32) ‖ flags (1) ‖ signCount (4, big-endian) ‖ attested credential data (if AT) ‖
/// extensions (CBOR map, if ED). Parsing rejects short input, a set flag whose data is missing, and any bytes
/// left over after the last part.
///
/// - SeeAlso: [WebAuthn §6.1](https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data)
public struct AuthenticatorData: Sendable, Hashable {
    /// The flags byte.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// UP: the user was present.
        public static let userPresent = Flags(rawValue: 1 << 0)
        /// UV: the user was verified.
        public static let userVerified = Flags(rawValue: 1 << 2)
        /// BE: the credential may be backed up (multi-device).
        public static let backupEligible = Flags(rawValue: 1 << 3)
        /// BS: the credential is backed up now.
        public static let backedUp = Flags(rawValue: 1 << 4)
        /// AT: attested credential data follows.
        public static let attestedCredentialData = Flags(rawValue: 1 << 6)
        /// ED: extension data follows.
        public static let extensionData = Flags(rawValue: 1 << 7)
    }

    /// SHA-256 of the relying party ID the credential is scoped to.
    public let rpIDHash: [UInt8]
    public let flags: Flags
    /// The signature counter; zero when the authenticator does not keep one.
    public let signCount: UInt32
    /// Present when the AT flag is set.
    public let attestedCredentialData: AttestedCredentialData?
    /// The extension outputs map, present when the ED flag is set.
    public let extensions: CBORValue?
    /// The exact bytes parsed, which signatures cover.
    public let rawBytes: [UInt8]

    /// The shortest authenticator data: rpIdHash, flags and signCount.
    static let minimumLength = 37

    /// Parses authenticator data.
    /// - Throws: ``WebAuthnError`` `malformed_authenticator_data`, or `cbor_*` for bad embedded CBOR.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= Self.minimumLength else {
            throw WebAuthnError(.malformedAuthenticatorData, "\(bytes.count) bytes, shorter than \(Self.minimumLength)")
        }
        rawBytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }

        var rest = bytes[37...]
        if flags.contains(.attestedCredentialData) {
            let (data, used) = try AttestedCredentialData.parsePrefix(rest)
            attestedCredentialData = data
            rest = rest.dropFirst(used)
        } else {
            attestedCredentialData = nil
        }
        if flags.contains(.extensionData) {
            guard !rest.isEmpty else { throw WebAuthnError(.malformedAuthenticatorData, "ED set but no extensions") }
            let (value, used) = try CBORDecoder().decodePrefix(rest)
            guard value.mapEntries != nil else {
                throw WebAuthnError(.malformedAuthenticatorData, "extensions are not a CBOR map")
            }
            extensions = value
            rest = rest.dropFirst(used)
        } else {
            extensions = nil
        }
        guard rest.isEmpty else {
            throw WebAuthnError(.malformedAuthenticatorData, "\(rest.count) bytes left after the declared parts")
        }
    }

    public var isUserPresent: Bool { flags.contains(.userPresent) }
    public var isUserVerified: Bool { flags.contains(.userVerified) }
    public var isBackupEligible: Bool { flags.contains(.backupEligible) }
    public var isBackedUp: Bool { flags.contains(.backedUp) }
}

/// The credential an authenticator attests to during registration.
///
/// - SeeAlso: [WebAuthn §6.5.2](https://www.w3.org/TR/webauthn-3/#sctn-attested-credential-data)
public struct AttestedCredentialData: Sendable, Hashable {
    /// The authenticator model's 16-byte AAGUID.
    public let aaguid: [UInt8]
    public let credentialID: [UInt8]
    /// The credential public key, as the COSE_Key bytes the authenticator wrote.
    public let credentialPublicKey: [UInt8]

    /// The AAGUID in lowercase UUID form, for example `00000000-0000-0000-0000-000000000000`.
    public var aaguidString: String {
        let hex = aaguid.map { String($0, radix: 16).leftPadded(to: 2) }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }

    /// Parses attested credential data at the start of `bytes`; returns it and the bytes it used.
    static func parsePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (AttestedCredentialData, Int) {
        guard bytes.count >= 18 else {
            throw WebAuthnError(.malformedAuthenticatorData, "AT set but attested credential data is truncated")
        }
        let start = bytes.startIndex
        let aaguid = Array(bytes[start..<start + 16])
        let idLength = Int(bytes[start + 16]) << 8 | Int(bytes[start + 17])
        let idStart = start + 18
        guard bytes.endIndex - idStart > idLength else {
            throw WebAuthnError(.malformedAuthenticatorData, "credential ID or public key is truncated")
        }
        let credentialID = Array(bytes[idStart..<idStart + idLength])
        let (_, keyLength) = try CBORDecoder().decodePrefix(bytes[(idStart + idLength)...])
        let keyStart = idStart + idLength
        let data = AttestedCredentialData(
            aaguid: aaguid, credentialID: credentialID, credentialPublicKey: Array(bytes[keyStart..<keyStart + keyLength]))
        return (data, keyStart + keyLength - start)
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
