/// The options of `navigator.credentials.get()` in their JSON form, as relying parties send them.
///
/// Binary members are base64url strings. Decoding ignores unknown members and accepts every optional member
/// missing or `null`.
///
/// - SeeAlso: [WebAuthn §5.5](https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialrequestoptionsjson)
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Hashable {
    /// The relying party's challenge, base64url.
    public var challenge: String
    /// How long the relying party will wait, in milliseconds.
    public var timeout: UInt32?
    /// The relying party ID; when absent, the client uses the origin's host.
    public var rpID: String?
    /// The credentials that may answer, most preferred first; empty or absent for discoverable credentials.
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    /// `discouraged`, `preferred` or `required`.
    public var userVerification: String?
    /// User-interface hints such as `security-key`, `client-device` or `hybrid`.
    public var hints: [String]?
    /// Extension inputs; their contents are not interpreted.
    public var extensions: AuthenticationExtensionsJSON?

    private enum CodingKeys: String, CodingKey {
        case challenge, timeout
        case rpID = "rpId"
        case allowCredentials, userVerification, hints, extensions
    }

    /// Creates request options.
    public init(
        challenge: String, timeout: UInt32? = nil, rpID: String? = nil,
        allowCredentials: [PublicKeyCredentialDescriptorJSON]? = nil, userVerification: String? = nil,
        hints: [String]? = nil, extensions: AuthenticationExtensionsJSON? = nil
    ) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpID = rpID
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.hints = hints
        self.extensions = extensions
    }
}
