/// Decodes the JSON shapes of `PublicKeyCredential.toJSON()` (WebAuthn §5.1.8/§5.1.9) into bytes.
enum ResponseJSON {
    /// The credential object and its `response` object, with `id`, `rawId` and `type` strings.
    /// - Throws: `malformed_response` when either is not a JSON object or a required member is missing or mistyped.
    static func members(_ json: [UInt8], _ shape: String) throws(WebAuthnError) -> (credential: JSONObjectMembers, response: JSONObjectMembers) {
        guard let credential = JSONObjectMembers(json), credential.string("id") != nil, credential.string("rawId") != nil,
              credential.string("type") != nil, let response = credential.object("response").flatMap(JSONObjectMembers.init)
        else { throw WebAuthnError(.malformedResponse, "not a \(shape) JSON object") }
        return (credential, response)
    }

    /// A required string member of `response`.
    static func string(_ response: JSONObjectMembers, _ name: String, _ shape: String) throws(WebAuthnError) -> String {
        guard let value = response.string(name) else { throw WebAuthnError(.malformedResponse, "not a \(shape) JSON object") }
        return value
    }

    /// Decodes a base64url member, naming it in the error.
    static func bytes(_ string: String, _ member: String) throws(WebAuthnError) -> [UInt8] {
        do {
            return try Base64URL.decode(string)
        } catch {
            throw WebAuthnError(.invalidBase64URL, "\(member) is not base64url")
        }
    }

    /// Checks `type` is `public-key` and `id` names the same bytes as `rawId`.
    static func checkIdentity(id: String, rawID: [UInt8], type: String) throws(WebAuthnError) {
        guard type == "public-key" else { throw WebAuthnError(.invalidCredentialType, "credential type is not public-key") }
        guard try bytes(id, "id") == rawID else { throw WebAuthnError(.credentialIDMismatch, "id and rawId differ") }
    }
}

/// A registration response: what `navigator.credentials.create()` returns, as `RegistrationResponseJSON`.
///
/// - SeeAlso: [WebAuthn §5.1.8](https://www.w3.org/TR/webauthn-3/#dictdef-registrationresponsejson)
public struct RegistrationCredential: Sendable {
    /// The credential ID (`rawId`).
    public let rawID: [UInt8]
    public let clientDataJSON: [UInt8]
    public let attestationObject: [UInt8]
    /// Transport hints the client reported, such as `internal` or `hybrid`.
    public let transports: [String]

    /// Creates a response from its parts.
    public init(rawID: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8], transports: [String] = []) {
        self.rawID = rawID
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
    }

    /// Parses `RegistrationResponseJSON`.
    /// - Throws: ``WebAuthnError`` `malformed_response`, `invalid_base64url`, `invalid_credential_type`
    ///   or `credential_id_mismatch`.
    public init(json: [UInt8]) throws(WebAuthnError) {
        let shape = "RegistrationResponseJSON"
        let (credential, response) = try ResponseJSON.members(json, shape)
        rawID = try ResponseJSON.bytes(credential.string("rawId") ?? "", "rawId")
        try ResponseJSON.checkIdentity(id: credential.string("id") ?? "", rawID: rawID, type: credential.string("type") ?? "")
        clientDataJSON = try ResponseJSON.bytes(try ResponseJSON.string(response, "clientDataJSON", shape), "response.clientDataJSON")
        attestationObject = try ResponseJSON.bytes(try ResponseJSON.string(response, "attestationObject", shape), "response.attestationObject")
        if response.isAbsentOrNull("transports") {
            transports = []
        } else if let listed = response.strings("transports") {
            transports = listed
        } else {
            throw WebAuthnError(.malformedResponse, "not a \(shape) JSON object")
        }
    }
}

/// An authentication response: what `navigator.credentials.get()` returns, as `AuthenticationResponseJSON`.
///
/// - SeeAlso: [WebAuthn §5.1.9](https://www.w3.org/TR/webauthn-3/#dictdef-authenticationresponsejson)
public struct AuthenticationCredential: Sendable {
    /// The credential ID (`rawId`).
    public let rawID: [UInt8]
    public let clientDataJSON: [UInt8]
    public let authenticatorData: [UInt8]
    public let signature: [UInt8]
    /// The user handle of a discoverable credential, if the authenticator returned one.
    public let userHandle: [UInt8]?

    /// Creates a response from its parts.
    public init(rawID: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
                userHandle: [UInt8]? = nil) {
        self.rawID = rawID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }

    /// Parses `AuthenticationResponseJSON`.
    /// - Throws: ``WebAuthnError`` `malformed_response`, `invalid_base64url`, `invalid_credential_type`
    ///   or `credential_id_mismatch`.
    public init(json: [UInt8]) throws(WebAuthnError) {
        let shape = "AuthenticationResponseJSON"
        let (credential, response) = try ResponseJSON.members(json, shape)
        rawID = try ResponseJSON.bytes(credential.string("rawId") ?? "", "rawId")
        try ResponseJSON.checkIdentity(id: credential.string("id") ?? "", rawID: rawID, type: credential.string("type") ?? "")
        clientDataJSON = try ResponseJSON.bytes(try ResponseJSON.string(response, "clientDataJSON", shape), "response.clientDataJSON")
        authenticatorData = try ResponseJSON.bytes(try ResponseJSON.string(response, "authenticatorData", shape), "response.authenticatorData")
        signature = try ResponseJSON.bytes(try ResponseJSON.string(response, "signature", shape), "response.signature")
        // No userHandle, null, or an empty string (some clients send "") mean none.
        if response.isAbsentOrNull("userHandle") {
            userHandle = nil
        } else {
            let handle = try ResponseJSON.string(response, "userHandle", shape)
            userHandle = handle.isEmpty ? nil : try ResponseJSON.bytes(handle, "response.userHandle")
        }
    }
}
