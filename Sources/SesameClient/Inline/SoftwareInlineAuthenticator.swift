/// An ``InlinePasskeyAuthenticator`` over a ``SoftwareAuthenticator``, for tests and load generators.
///
/// It answers as ``SoftwareAuthenticator/get(_:origin:crossOrigin:topOrigin:credentialID:)`` does for `origin`,
/// with the first credential of `allowCredentials` it holds.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public struct SoftwareInlineAuthenticator: InlinePasskeyAuthenticator {
    /// The authenticator that holds the credentials.
    public let authenticator: SoftwareAuthenticator
    /// The origin written into `clientDataJSON`, such as `https://example.org` or `android:apk-key-hash:…`.
    public let origin: String

    /// Creates an inline authenticator.
    /// - Parameters:
    ///   - authenticator: the software authenticator that holds the credentials.
    ///   - origin: the caller's origin as the relying party will see it in `clientDataJSON`.
    public init(_ authenticator: SoftwareAuthenticator, origin: String) {
        self.authenticator = authenticator
        self.origin = origin
    }

    /// Signs the options' challenge with the first allowed credential the authenticator holds.
    /// - Parameter options: the relying party's request options; `rpId` is required unless `origin` has a host.
    /// - Returns: the assertion, with `authenticatorAttachment` `platform` and empty `clientExtensionResults`.
    /// - Throws: ``InlineAuthenticatorError/noCredential`` when it holds none of `allowCredentials` (none at all
    ///   for the RP ID when the list is empty), ``InlineAuthenticatorError/notSupported`` or
    ///   ``InlineAuthenticatorError/failed`` for options it cannot use.
    public func assert(_ options: PublicKeyCredentialRequestOptionsJSON) async throws(InlineAuthenticatorError)
        -> AuthenticationResponseJSON
    {
        do {
            return try authenticator.get(options, origin: origin)
        } catch {
            // The error's detail may name the RP ID; it is dropped here, only the kind goes on.
            if error.code == .notAllowed { throw .noCredential }
            if error.code == .notSupported { throw .notSupported }
            throw .failed
        }
    }
}
