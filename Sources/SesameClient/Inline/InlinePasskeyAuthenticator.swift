/// Runs the passkey on the device for ``InlineVerification``: it answers request options with an assertion.
///
/// Implementations pass the options through as they came (`rpId`, `challenge`, `allowCredentials`) and ask for
/// user verification. They must not log or keep the challenge, the assertion or any credential ID.
///
/// - SeeAlso: [WebAuthn §5.1.4](https://www.w3.org/TR/webauthn-3/#sctn-getAssertion)
public protocol InlinePasskeyAuthenticator: Sendable {
    /// Gets an assertion for the options, as `navigator.credentials.get()` does.
    /// - Parameter options: the `options` member of the `passkey-options` answer, unchanged.
    /// - Returns: the assertion as `PublicKeyCredential.toJSON()` produces it.
    /// - Throws: ``InlineAuthenticatorError`` when the device cannot or did not produce an assertion.
    func assert(_ options: PublicKeyCredentialRequestOptionsJSON) async throws(InlineAuthenticatorError)
        -> AuthenticationResponseJSON
}

/// Why the device produced no assertion; it never reaches the server and carries nothing identifying.
public enum InlineAuthenticatorError: Error, Sendable, Hashable {
    /// None of `allowCredentials` is on this device (Capacitor `NO_CREDENTIAL`, Android `NoCredentialException`).
    case noCredential
    /// The person dismissed the sheet (Capacitor `CANCELED`; on Apple platforms also "no passkey here").
    case cancelled
    /// The app is not associated with the relying party ID (Capacitor `DOMAIN_NOT_ASSOCIATED`).
    case notAssociated
    /// The device or OS cannot run passkeys (Capacitor `NOT_SUPPORTED`).
    case notSupported
    /// Any other failure, such as malformed options or an authenticator error.
    case failed
}
