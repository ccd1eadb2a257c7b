import Foundation
import SesameCrypto
import WebAuthn

/// Builds genuine registration and authentication ceremonies, every part open to mutation, so a test can
/// start from a valid case and break exactly one thing.
///
/// Defaults: relying party `example.org`, origin `https://example.org`, a P-256 credential, flags UP+UV.
public struct CeremonyFixture: Sendable {
    public var rpID = "example.org"
    public var origin = "https://example.org"
    public var challenge: [UInt8] = Array(repeating: 0x5A, count: 32)
    /// The credential key (P-256 or Ed25519).
    public var credentialKey: PrivateKey
    public var credentialID: [UInt8] = Array(0..<16)
    public var aaguid: [UInt8] = Array(repeating: 0, count: 16)
    public var signCount: UInt32 = 0
    public var flags: AuthenticatorData.Flags = [.userPresent, .userVerified]
    /// `clientDataJSON` members; set one to nil to leave it out, or change it to break a check.
    public var clientData: [String: ClientDataMember]
    /// How the registration is attested.
    public var attestation: Attestation = .none
    /// Bytes appended to the authenticator data (to test trailing data).
    public var authenticatorDataSuffix: [UInt8] = []
    public var userHandle: [UInt8]? = Array("user-1".utf8)
    /// A COSE_Key to attest instead of `credentialKey`'s (for example an RSA key); authentication still signs
    /// with `credentialKey`.
    public var credentialCOSEKey: [UInt8]? = nil

    /// A `clientDataJSON` member value.
    public enum ClientDataMember: Sendable {
        case string(String)
        case bool(Bool)
    }

    /// The attestation a registration carries.
    public enum Attestation: Sendable {
        case none
        case packedSelf
        /// Packed with `x5c`: signed by `key`, certificates leaf first.
        case packedFull(key: PrivateKey, certificates: [Certificate])
        case fidoU2F(key: PrivateKey, certificate: Certificate)
        /// Any format name and statement, signed by no one.
        case custom(format: String, statement: CBORValue)
        /// Any format name, with a statement built from the authenticator data and the client data hash.
        case built(format: String, statement: @Sendable (_ authenticatorData: [UInt8], _ clientDataHash: [UInt8]) -> CBORValue)
    }

    /// A fixture with a fresh key of the given kind.
    public init(keyKind: PrivateKey.Kind = .p256) {
        credentialKey = PrivateKey.generate(keyKind)
        clientData = [:]
    }

    /// The relying party policy that accepts this fixture as built.
    public var policy: RelyingPartyPolicy { RelyingPartyPolicy(id: rpID, origins: [origin]) }

    // MARK: Credential key

    /// The credential public key as a COSE_Key.
    public var coseKey: [UInt8] {
        if let credentialCOSEKey { return credentialCOSEKey }
        switch credentialKey.kind {
        case .p256:
            let point = credentialKey.publicKey.ellipticCurvePoint!
            return CBOREncoder.encode(.map([
                CBORMapEntry(.integer(1), .integer(2)), CBORMapEntry(.integer(3), .integer(-7)),
                CBORMapEntry(.integer(-1), .integer(1)), CBORMapEntry(.integer(-2), .byteString(point.x)),
                CBORMapEntry(.integer(-3), .byteString(point.y)),
            ]))
        case .ed25519:
            // The raw key is the last 32 bytes of the SubjectPublicKeyInfo.
            let raw = Array(credentialKey.publicKey.derEncodedSubjectPublicKeyInfo.suffix(32))
            return CBOREncoder.encode(.map([
                CBORMapEntry(.integer(1), .integer(1)), CBORMapEntry(.integer(3), .integer(-8)),
                CBORMapEntry(.integer(-1), .integer(6)), CBORMapEntry(.integer(-2), .byteString(raw)),
            ]))
        }
    }

    /// The COSE algorithm of the credential key.
    public var algorithm: COSEAlgorithmIdentifier { credentialKey.kind == .p256 ? .es256 : .edDSA }

    /// The stored record of this credential, as a relying party would keep it after registration.
    public func record(signCount: UInt32 = 0, backupEligible: Bool? = false) throws -> CredentialRecord {
        CredentialRecord(id: credentialID, publicKey: try COSEKey(cborEncoded: coseKey), signCount: signCount,
                         backupEligible: backupEligible, userHandle: userHandle)
    }

    // MARK: Parts

    /// `clientDataJSON` for a ceremony of the given type, members in the browser's order.
    public func clientDataJSON(type: String) -> [UInt8] {
        var members: [(String, ClientDataMember)] = [
            ("type", .string(type)), ("challenge", .string(Base64URL.encode(challenge))),
            ("origin", .string(origin)), ("crossOrigin", .bool(false)),
        ]
        for (name, value) in clientData.sorted(by: { $0.key < $1.key }) {
            if let index = members.firstIndex(where: { $0.0 == name }) { members[index].1 = value } else { members.append((name, value)) }
        }
        let body = members.map { name, value in
            switch value {
            case .string(let s): "\(jsonString(name)):\(jsonString(s))"
            case .bool(let b): "\(jsonString(name)):\(b)"
            }
        }
        return Array("{\(body.joined(separator: ","))}".utf8)
    }

    /// Authenticator data; with `attested`, the AT flag and attested credential data are included.
    public func authenticatorData(attested: Bool) -> [UInt8] {
        var flags = self.flags
        if attested { flags.insert(.attestedCredentialData) }
        var data = Digest.sha256(Array(rpID.utf8)) + [flags.rawValue]
        data += withUnsafeBytes(of: signCount.bigEndian) { Array($0) }
        if attested {
            data += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID + coseKey
        }
        return data + authenticatorDataSuffix
    }

    /// The attestation object for the given authenticator data and client data hash.
    public func attestationObject(authenticatorData: [UInt8], clientDataHash: [UInt8]) -> [UInt8] {
        let signed = authenticatorData + clientDataHash
        let (format, statement): (String, CBORValue)
        switch attestation {
        case .none:
            (format, statement) = ("none", .map([]))
        case .packedSelf:
            (format, statement) = ("packed", .map([
                CBORMapEntry(.textString("alg"), .integer(Int64(algorithm.rawValue))),
                CBORMapEntry(.textString("sig"), .byteString(credentialKey.signature(for: signed))),
            ]))
        case .packedFull(let key, let certificates):
            (format, statement) = ("packed", .map([
                CBORMapEntry(.textString("alg"), .integer(-7)),
                CBORMapEntry(.textString("sig"), .byteString(key.signature(for: signed))),
                CBORMapEntry(.textString("x5c"), .array(certificates.map { .byteString($0.derRepresentation) })),
            ]))
        case .fidoU2F(let key, let certificate):
            let point = credentialKey.publicKey.ellipticCurvePoint!
            let data = [0x00] + Digest.sha256(Array(rpID.utf8)) + clientDataHash + credentialID + [0x04] + point.x + point.y
            (format, statement) = ("fido-u2f", .map([
                CBORMapEntry(.textString("sig"), .byteString(key.signature(for: data))),
                CBORMapEntry(.textString("x5c"), .array([.byteString(certificate.derRepresentation)])),
            ]))
        case .custom(let name, let custom):
            (format, statement) = (name, custom)
        case .built(let name, let build):
            (format, statement) = (name, build(authenticatorData, clientDataHash))
        }
        return CBOREncoder.encode(.map([
            CBORMapEntry(.textString("fmt"), .textString(format)),
            CBORMapEntry(.textString("attStmt"), statement),
            CBORMapEntry(.textString("authData"), .byteString(authenticatorData)),
        ]))
    }

    // MARK: Ceremonies

    /// A registration response built from the fixture.
    public func registration() -> RegistrationCredential {
        let clientDataJSON = clientDataJSON(type: "webauthn.create")
        let attestationObject = attestationObject(
            authenticatorData: authenticatorData(attested: true), clientDataHash: Digest.sha256(clientDataJSON))
        return RegistrationCredential(rawID: credentialID, clientDataJSON: clientDataJSON,
                                      attestationObject: attestationObject, transports: ["internal"])
    }

    /// An authentication response built from the fixture, signed by the credential key.
    public func authentication() -> AuthenticationCredential {
        let clientDataJSON = clientDataJSON(type: "webauthn.get")
        let authData = authenticatorData(attested: false)
        let signature = credentialKey.signature(for: authData + Digest.sha256(clientDataJSON))
        return AuthenticationCredential(rawID: credentialID, clientDataJSON: clientDataJSON, authenticatorData: authData,
                                        signature: signature, userHandle: userHandle)
    }

    /// `RegistrationResponseJSON` for `credential`, as a browser serialises it.
    public static func json(_ credential: RegistrationCredential) -> [UInt8] {
        let id = Base64URL.encode(credential.rawID)
        return Array("""
            {"id":"\(id)","rawId":"\(id)","type":"public-key","authenticatorAttachment":"platform",\
            "response":{"clientDataJSON":"\(Base64URL.encode(credential.clientDataJSON))",\
            "attestationObject":"\(Base64URL.encode(credential.attestationObject))","transports":["internal"]},\
            "clientExtensionResults":{}}
            """.utf8)
    }

    /// `AuthenticationResponseJSON` for `credential`, as a browser serialises it.
    public static func json(_ credential: AuthenticationCredential) -> [UInt8] {
        let id = Base64URL.encode(credential.rawID)
        let userHandle = credential.userHandle.map { ",\"userHandle\":\"\(Base64URL.encode($0))\"" } ?? ""
        return Array("""
            {"id":"\(id)","rawId":"\(id)","type":"public-key","authenticatorAttachment":"platform",\
            "response":{"clientDataJSON":"\(Base64URL.encode(credential.clientDataJSON))",\
            "authenticatorData":"\(Base64URL.encode(credential.authenticatorData))",\
            "signature":"\(Base64URL.encode(credential.signature))"\(userHandle)},"clientExtensionResults":{}}
            """.utf8)
    }

    private func jsonString(_ s: String) -> String {
        String(decoding: try! JSONEncoder().encode(s), as: UTF8.self)
    }
}

/// The attestation keys and certificates in `Data/` (made by `Data/make-certificates.sh`).
public enum AttestationFixtures {
    /// The folder holding the committed certificates and keys.
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Data")

    /// The AAGUID carried in the packed certificate's id-fido-gen-ce-aaguid extension.
    public static let packedAAGUID: [UInt8] = [0x5E, 0x5A, 0x4E, 0x30, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x01]

    public static func certificate(_ name: String) throws -> Certificate {
        try Certificate(pemEncoded: String(contentsOf: directory.appendingPathComponent("\(name).pem"), encoding: .utf8))
    }

    public static func key(_ name: String) throws -> PrivateKey {
        try PrivateKey(pemEncoded: String(contentsOf: directory.appendingPathComponent("\(name).key.pem"), encoding: .utf8))
    }
}
