/// The options of `navigator.credentials.create()` in their JSON form, as relying parties send them.
///
/// Binary members are base64url strings. Decoding ignores unknown members and accepts every optional member
/// missing or `null`, so options from any WebAuthn server library decode.
///
/// - SeeAlso: [WebAuthn §5.4](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialcreationoptionsjson)
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Hashable {
    /// The relying party.
    public var rp: PublicKeyCredentialRpEntity
    /// The account the credential is for.
    public var user: PublicKeyCredentialUserEntityJSON
    /// The relying party's challenge, base64url.
    public var challenge: String
    /// The credential types and algorithms the relying party accepts, most preferred first.
    public var pubKeyCredParams: [PublicKeyCredentialParameters]
    /// How long the relying party will wait, in milliseconds.
    public var timeout: UInt32?
    /// Credentials the account already has; an authenticator holding one of them must not register again.
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]?
    /// Which authenticators the relying party wants.
    public var authenticatorSelection: AuthenticatorSelectionCriteria?
    /// User-interface hints such as `security-key`, `client-device` or `hybrid`.
    public var hints: [String]?
    /// The attestation conveyance preference: `none`, `indirect`, `direct` or `enterprise`.
    public var attestation: String?
    /// Extension inputs; their contents are not interpreted.
    public var extensions: AuthenticationExtensionsJSON?

    /// Creates creation options.
    public init(
        rp: PublicKeyCredentialRpEntity, user: PublicKeyCredentialUserEntityJSON, challenge: String,
        pubKeyCredParams: [PublicKeyCredentialParameters], timeout: UInt32? = nil,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        authenticatorSelection: AuthenticatorSelectionCriteria? = nil, hints: [String]? = nil,
        attestation: String? = nil, extensions: AuthenticationExtensionsJSON? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.hints = hints
        self.attestation = attestation
        self.extensions = extensions
    }
}

/// The relying party named in creation options.
///
/// - SeeAlso: [WebAuthn §5.4.2](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialrpentity)
public struct PublicKeyCredentialRpEntity: Codable, Sendable, Hashable {
    /// The relying party ID, such as `example.org`; when absent, the client uses the origin's host.
    public var id: String?
    /// A human-readable name of the relying party.
    public var name: String

    /// Creates a relying party entity.
    public init(id: String? = nil, name: String) {
        self.id = id
        self.name = name
    }
}

/// The user account named in creation options.
///
/// - SeeAlso: [WebAuthn §5.4.3](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialuserentityjson)
public struct PublicKeyCredentialUserEntityJSON: Codable, Sendable, Hashable {
    /// The user handle, base64url: 1 to 64 opaque bytes chosen by the relying party.
    public var id: String
    /// The account name, such as an email address.
    public var name: String
    /// The name to show for the account.
    public var displayName: String

    /// Creates a user entity.
    public init(id: String, name: String, displayName: String) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}

/// One credential type and algorithm a relying party accepts.
///
/// - SeeAlso: [WebAuthn §5.3](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialparameters)
public struct PublicKeyCredentialParameters: Codable, Sendable, Hashable {
    /// The credential type; `public-key` is the only one defined.
    public var type: String
    /// The COSE algorithm identifier, such as -7 (ES256) or -257 (RS256).
    public var alg: Int

    /// Creates a parameter entry.
    public init(type: String = "public-key", alg: Int) {
        self.type = type
        self.alg = alg
    }
}

/// A credential named in `excludeCredentials` or `allowCredentials`.
///
/// - SeeAlso: [WebAuthn §5.8.3](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialdescriptorjson)
public struct PublicKeyCredentialDescriptorJSON: Codable, Sendable, Hashable {
    /// The credential type; `public-key` is the only one defined.
    public var type: String
    /// The credential ID, base64url.
    public var id: String
    /// Transport hints such as `internal`, `hybrid` or `usb`.
    public var transports: [String]?

    /// Creates a credential descriptor.
    public init(type: String = "public-key", id: String, transports: [String]? = nil) {
        self.type = type
        self.id = id
        self.transports = transports
    }
}

/// The relying party's requirements on the authenticator in creation options.
///
/// Values are strings, not enums, because clients must ignore values they do not know.
///
/// - SeeAlso: [WebAuthn §5.4.4](https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorselectioncriteria)
public struct AuthenticatorSelectionCriteria: Codable, Sendable, Hashable {
    /// `platform` or `cross-platform`.
    public var authenticatorAttachment: String?
    /// `discouraged`, `preferred` or `required`.
    public var residentKey: String?
    /// The Level 1 form of `residentKey: required`.
    public var requireResidentKey: Bool?
    /// `discouraged`, `preferred` or `required`.
    public var userVerification: String?

    /// Creates selection criteria.
    public init(
        authenticatorAttachment: String? = nil, residentKey: String? = nil, requireResidentKey: Bool? = nil,
        userVerification: String? = nil
    ) {
        self.authenticatorAttachment = authenticatorAttachment
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}

/// An extensions dictionary (client inputs or outputs) whose members this SDK does not interpret.
///
/// Decoding accepts any JSON object and keeps none of its members; encoding always writes `{}`, which is what
/// `clientExtensionResults` holds when no extension ran.
///
/// - SeeAlso: [WebAuthn §9](https://www.w3.org/TR/webauthn-3/#sctn-extensions)
public struct AuthenticationExtensionsJSON: Codable, Sendable, Hashable {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Creates an empty extensions dictionary.
    public init() {}

    /// Decodes any JSON object, ignoring its members.
    /// - Throws: `DecodingError` when the value is not an object.
    public init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }

    /// Encodes `{}`.
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: AnyKey.self)
    }
}
