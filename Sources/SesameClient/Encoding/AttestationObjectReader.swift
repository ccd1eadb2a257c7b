/// What `PublicKeyCredential.toJSON()` derives from an attestation object: the authenticator data, the credential
/// public key as a DER SubjectPublicKeyInfo and its COSE algorithm.
///
/// A platform authenticator (AuthenticationServices) hands over only the credential ID, the client data and the
/// attestation object; ``RegistrationResponseJSON`` also carries these three members, so they are read back here.
/// The reader takes definite-length CBOR only, as CTAP2 canonical encoding requires, and reads no more than it needs.
///
/// - SeeAlso: [WebAuthn §5.2.1](https://www.w3.org/TR/webauthn-3/#sctn-public-key-easy),
///   [§6.5.4](https://www.w3.org/TR/webauthn-3/#sctn-generating-an-attestation-object)
struct AttestationObjectFields: Sendable, Hashable {
    /// The `authData` member.
    let authenticatorData: [UInt8]
    /// The credential public key as a DER SubjectPublicKeyInfo; `nil` for keys other than P-256, as browsers answer
    /// `getPublicKey()` for algorithms they do not know.
    let publicKey: [UInt8]?
    /// The credential public key's `alg` (COSE key parameter 3), such as -7 for ES256.
    let publicKeyAlgorithm: Int

    /// Reads the fields, or `nil` when the object is not a map with an `authData` byte string holding attested
    /// credential data whose COSE key names its algorithm.
    init?(attestationObject: [UInt8]) {
        var reader = CBORReader(attestationObject)
        guard case .map(let entries)? = reader.value(), reader.isAtEnd,
              case .bytes(let authData)? = entries.first(where: { $0.key == .text("authData") })?.value
        else { return nil }
        // WebAuthn §6.1: rpIdHash (32) ‖ flags (1) ‖ signCount (4) ‖ attestedCredentialData when AT (bit 6) is set.
        guard authData.count >= 37, authData[32] & 0x40 != 0 else { return nil }
        // §6.5.1: aaguid (16) ‖ credentialIdLength (2, big-endian) ‖ credentialId ‖ credentialPublicKey.
        let lengthAt = 37 + 16
        guard authData.count >= lengthAt + 2 else { return nil }
        let idLength = Int(authData[lengthAt]) << 8 | Int(authData[lengthAt + 1])
        let keyAt = lengthAt + 2 + idLength
        guard authData.count > keyAt else { return nil }
        var keyReader = CBORReader(authData, from: keyAt)
        guard case .map(let key)? = keyReader.value() else { return nil }
        func parameter(_ label: Int64) -> CBORValue? { key.first(where: { $0.key == .integer(label) })?.value }
        guard case .integer(let algorithm)? = parameter(3), let alg = Int(exactly: algorithm) else { return nil }
        authenticatorData = authData
        publicKeyAlgorithm = alg
        // RFC 9053 §7.1.1: kty 2 (EC2), crv 1 (P-256), x and y of 32 bytes each.
        if parameter(1) == .integer(2), parameter(-1) == .integer(1), case .bytes(let x)? = parameter(-2),
           case .bytes(let y)? = parameter(-3), x.count == 32, y.count == 32
        {
            publicKey = Self.p256SubjectPublicKeyInfoPrefix + x + y
        } else {
            publicKey = nil
        }
    }

    /// SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING { 0x04 (uncompressed) … } } up to the point.
    ///
    /// - SeeAlso: [RFC 5480 §2](https://www.rfc-editor.org/rfc/rfc5480#section-2)
    private static let p256SubjectPublicKeyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
        0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
    ]
}

extension PublicKeyCredentialJSON where Response == AuthenticatorAttestationResponseJSON {
    /// A registration response from what a platform authenticator returns, with the members `toJSON()` derives
    /// from the attestation object filled in; `nil` when the attestation object cannot be read.
    /// - Parameters:
    ///   - credentialID: the new credential's ID.
    ///   - clientDataJSON: the exact client data bytes.
    ///   - attestationObject: the CBOR attestation object.
    ///   - transports: the transports to report, in lexicographic order as `getTransports()` returns them.
    ///   - authenticatorAttachment: `platform` or `cross-platform`.
    init?(credentialID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], transports: [String],
          authenticatorAttachment: String) {
        guard let fields = AttestationObjectFields(attestationObject: attestationObject) else { return nil }
        let id = Base64URL.encode(credentialID)
        self.init(
            id: id, rawID: id,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                authenticatorData: Base64URL.encode(fields.authenticatorData), transports: transports,
                publicKey: fields.publicKey.map { Base64URL.encode($0) }, publicKeyAlgorithm: fields.publicKeyAlgorithm,
                attestationObject: Base64URL.encode(attestationObject)),
            authenticatorAttachment: authenticatorAttachment)
    }
}

/// A decoded CBOR data item, as far as ``CBORReader`` reads it.
enum CBORValue: Sendable, Hashable {
    /// Major types 0 and 1, when the value fits an `Int64`.
    case integer(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([MapEntry])
    /// Major type 7 (false, true, null, undefined, floats), kept only as its head's argument.
    case simple(UInt64)

    /// One key and value of a map, in the order written.
    struct MapEntry: Sendable, Hashable {
        let key: CBORValue
        let value: CBORValue
    }
}

/// A reader of definite-length CBOR items from a byte array.
///
/// - SeeAlso: [RFC 8949 §3](https://www.rfc-editor.org/rfc/rfc8949#section-3)
struct CBORReader {
    private let bytes: [UInt8]
    private var offset: Int
    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    private static let maximumDepth = 16

    /// A reader starting at `offset`.
    init(_ bytes: [UInt8], from offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.count }

    /// The next item, or `nil` for truncated, indefinite-length, reserved or too deeply nested input.
    mutating func value() -> CBORValue? { value(depth: 0) }

    private mutating func value(depth: Int) -> CBORValue? {
        guard depth < Self.maximumDepth, let (major, argument) = head() else { return nil }
        switch major {
        case 0:
            return Int64(exactly: argument).map { .integer($0) }
        case 1:
            // Major type 1 carries -1 - n.
            return Int64(exactly: argument).map { .integer(-1 - $0) }
        case 2:
            return take(argument).map { .bytes($0) }
        case 3:
            guard let utf8 = take(argument) else { return nil }
            return String(validating: utf8, as: UTF8.self).map { .text($0) }
        case 4:
            // Every item takes at least one byte, so a count beyond the bytes left is truncated input.
            guard argument <= UInt64(bytes.count - offset) else { return nil }
            var items: [CBORValue] = []
            for _ in 0..<argument {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
            }
            return .array(items)
        case 5:
            guard argument <= UInt64(bytes.count - offset) / 2 else { return nil }
            var entries: [CBORValue.MapEntry] = []
            for _ in 0..<argument {
                guard let key = value(depth: depth + 1), let item = value(depth: depth + 1) else { return nil }
                entries.append(CBORValue.MapEntry(key: key, value: item))
            }
            return .map(entries)
        case 6:
            // A tag: its content stands for it.
            return value(depth: depth + 1)
        default:
            return .simple(argument)
        }
    }

    /// The major type and argument of the next head.
    private mutating func head() -> (major: UInt8, argument: UInt64)? {
        guard offset < bytes.count else { return nil }
        let initial = bytes[offset]
        offset += 1
        let major = initial >> 5
        let count: Int
        switch initial & 0x1F {
        case let info where info < 24: return (major, UInt64(info))
        case 24: count = 1
        case 25: count = 2
        case 26: count = 4
        case 27: count = 8
        default: return nil  // 28–30 are reserved, 31 is an indefinite length
        }
        guard bytes.count - offset >= count else { return nil }
        var argument: UInt64 = 0
        for _ in 0..<count {
            argument = argument << 8 | UInt64(bytes[offset])
            offset += 1
        }
        return (major, argument)
    }

    /// The next `count` bytes.
    private mutating func take(_ count: UInt64) -> [UInt8]? {
        guard count <= UInt64(bytes.count - offset) else { return nil }
        let end = offset + Int(count)
        defer { offset = end }
        return Array(bytes[offset..<end])
    }
}
