import Foundation

/// The client data a browser or platform collects and the authenticator's signature covers by hash.
///
/// - SeeAlso: [WebAuthn §5.8.1](https://www.w3.org/TR/webauthn-3/#dictdef-collectedclientdata)
public struct CollectedClientData: Sendable, Hashable {
    /// `webauthn.create` or `webauthn.get`.
    public let type: String
    /// The challenge, base64url-encoded by the client.
    public let challenge: String
    /// The origin of the caller, for example `https://example.org` or `android:apk-key-hash:...`.
    public let origin: String
    /// True when the call came from an iframe that is not same-origin with its ancestors.
    public let crossOrigin: Bool?
    /// The top-level origin, present only for cross-origin calls.
    public let topOrigin: String?

    private struct Wire: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?
    }

    /// Parses `clientDataJSON` (UTF-8 JSON; unknown members are ignored, as the spec requires).
    /// - Throws: ``WebAuthnError`` `malformed_client_data`.
    public init(jsonBytes: [UInt8]) throws(WebAuthnError) {
        // §7.1 step 5 / §7.2 step 9: UTF-8 decode; §7.1 step 6 / §7.2 step 10: parse as JSON.
        guard String(validating: jsonBytes, as: UTF8.self) != nil else {
            throw WebAuthnError(.malformedClientData, "clientDataJSON is not UTF-8")
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(jsonBytes))
        } catch {
            throw WebAuthnError(.malformedClientData, "clientDataJSON is not the expected JSON object")
        }
        type = wire.type
        challenge = wire.challenge
        origin = wire.origin
        crossOrigin = wire.crossOrigin
        topOrigin = wire.topOrigin
    }
}
