import Foundation

/// Decodes the JSON shapes of `PublicKeyCredential.toJSON()` (WebAuthn §5.1.8/§5.1.9) into bytes.
enum ResponseJSON {
    /// Decodes `json` as `T`, mapping every failure to `malformed_response`.
    static func decode<T: Decodable>(_ type: T.Type, from json: [UInt8]) throws(WebAuthnError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(json))
        } catch {
            throw WebAuthnError(.malformedResponse, "not a \(T.self) JSON object")
        }
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

    private struct Wire: Decodable {
        struct Response: Decodable {
            let clientDataJSON: String
            let attestationObject: String
            let transports: [String]?
        }
        let id: String
        let rawId: String
        let type: String
        let response: Response
    }

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
        let wire = try ResponseJSON.decode(Wire.self, from: json)
        rawID = try ResponseJSON.bytes(wire.rawId, "rawId")
        try ResponseJSON.checkIdentity(id: wire.id, rawID: rawID, type: wire.type)
        clientDataJSON = try ResponseJSON.bytes(wire.response.clientDataJSON, "response.clientDataJSON")
        attestationObject = try ResponseJSON.bytes(wire.response.attestationObject, "response.attestationObject")
        transports = wire.response.transports ?? []
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

    private struct Wire: Decodable {
        struct Response: Decodable {
            let clientDataJSON: String
            let authenticatorData: String
            let signature: String
            let userHandle: String?
        }
        let id: String
        let rawId: String
        let type: String
        let response: Response
    }

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
        let wire = try ResponseJSON.decode(Wire.self, from: json)
        rawID = try ResponseJSON.bytes(wire.rawId, "rawId")
        try ResponseJSON.checkIdentity(id: wire.id, rawID: rawID, type: wire.type)
        clientDataJSON = try ResponseJSON.bytes(wire.response.clientDataJSON, "response.clientDataJSON")
        authenticatorData = try ResponseJSON.bytes(wire.response.authenticatorData, "response.authenticatorData")
        signature = try ResponseJSON.bytes(wire.response.signature, "response.signature")
        // An empty userHandle string means none (some clients send "").
        userHandle = try wire.response.userHandle.flatMap { s throws(WebAuthnError) in
            s.isEmpty ? nil : try ResponseJSON.bytes(s, "response.userHandle")
        }
    }
}
