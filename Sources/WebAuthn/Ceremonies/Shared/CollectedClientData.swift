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

    /// Parses `clientDataJSON`: one UTF-8 JSON object; unknown members are ignored, as the spec requires, and
    /// a member name given twice is rejected, so the challenge and origin checked are the ones signed.
    /// - Throws: ``WebAuthnError`` `malformed_client_data`.
    public init(jsonBytes: [UInt8]) throws(WebAuthnError) {
        // §7.1 step 5 / §7.2 step 9: UTF-8 decode; §7.1 step 6 / §7.2 step 10: parse as JSON.
        let members: [String: JSONObjectParser.Value]
        do { members = try JSONObjectParser.parse(jsonBytes) } catch {
            throw WebAuthnError(.malformedClientData, "clientDataJSON is not one UTF-8 JSON object")
        }
        func string(_ name: String) throws(WebAuthnError) -> String {
            guard case .string(let value)? = members[name] else {
                throw WebAuthnError(.malformedClientData, "clientDataJSON.\(name) is missing or not a string")
            }
            return value
        }
        type = try string("type")
        challenge = try string("challenge")
        origin = try string("origin")
        switch members["crossOrigin"] {
        case nil: crossOrigin = nil
        case .bool(let flag)?: crossOrigin = flag
        default: throw WebAuthnError(.malformedClientData, "clientDataJSON.crossOrigin is not a boolean")
        }
        topOrigin = members["topOrigin"] == nil ? nil : try string("topOrigin")
    }
}
