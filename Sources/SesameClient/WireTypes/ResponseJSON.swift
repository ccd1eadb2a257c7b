/// A credential as `PublicKeyCredential.toJSON()` produces it: the same members for both ceremonies, with the
/// ceremony's own authenticator response.
///
/// - SeeAlso: [WebAuthn §5.1.8](https://www.w3.org/TR/webauthn-3/#dictdef-registrationresponsejson),
///   [§5.1.9](https://www.w3.org/TR/webauthn-3/#dictdef-authenticationresponsejson)
public struct PublicKeyCredentialJSON<Response: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The credential ID, base64url.
    public var id: String
    /// The credential ID, base64url (the same string as ``id``).
    public var rawID: String
    /// The authenticator's response.
    public var response: Response
    /// `platform` or `cross-platform`, when the client knows.
    public var authenticatorAttachment: String?
    /// Extension outputs; `{}` when no extension ran.
    public var clientExtensionResults: AuthenticationExtensionsJSON
    /// Always `public-key`.
    public var type: String

    private enum CodingKeys: String, CodingKey {
        case id
        case rawID = "rawId"
        case response, authenticatorAttachment, clientExtensionResults, type
    }

    /// Creates a credential response.
    public init(
        id: String, rawID: String, response: Response, authenticatorAttachment: String? = nil,
        clientExtensionResults: AuthenticationExtensionsJSON = AuthenticationExtensionsJSON(),
        type: String = "public-key"
    ) {
        self.id = id
        self.rawID = rawID
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
        self.type = type
    }
}

/// What `navigator.credentials.create()` returns (`RegistrationResponseJSON`).
public typealias RegistrationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAttestationResponseJSON>

/// What `navigator.credentials.get()` returns (`AuthenticationResponseJSON`).
public typealias AuthenticationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAssertionResponseJSON>

/// The attestation response inside a ``RegistrationResponseJSON``.
///
/// - SeeAlso: [WebAuthn §5.2.1](https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorattestationresponsejson)
public struct AuthenticatorAttestationResponseJSON: Codable, Sendable, Hashable {
    /// The exact client data bytes the attestation covers by hash, base64url.
    public var clientDataJSON: String
    /// The authenticator data, base64url (also inside ``attestationObject``).
    public var authenticatorData: String
    /// Transports the authenticator can be reached over, such as `internal`.
    public var transports: [String]
    /// The credential public key as a DER SubjectPublicKeyInfo, base64url, as `getPublicKey()` returns it.
    public var publicKey: String?
    /// The credential's COSE algorithm identifier, such as -7 (ES256).
    public var publicKeyAlgorithm: Int
    /// The CBOR attestation object `{fmt, attStmt, authData}`, base64url.
    public var attestationObject: String

    /// Creates an attestation response.
    public init(
        clientDataJSON: String, authenticatorData: String, transports: [String], publicKey: String?,
        publicKeyAlgorithm: Int, attestationObject: String
    ) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.transports = transports
        self.publicKey = publicKey
        self.publicKeyAlgorithm = publicKeyAlgorithm
        self.attestationObject = attestationObject
    }
}

/// The assertion inside an ``AuthenticationResponseJSON``.
///
/// - SeeAlso: [WebAuthn §5.2.2](https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorassertionresponsejson)
public struct AuthenticatorAssertionResponseJSON: Codable, Sendable, Hashable {
    /// The exact client data bytes the signature covers by hash, base64url.
    public var clientDataJSON: String
    /// The authenticator data, base64url.
    public var authenticatorData: String
    /// The signature over `authenticatorData ‖ SHA-256(clientDataJSON)`, base64url (DER for ES256).
    public var signature: String
    /// The user handle of a discoverable credential, base64url.
    public var userHandle: String?

    /// Creates an assertion response.
    public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}
