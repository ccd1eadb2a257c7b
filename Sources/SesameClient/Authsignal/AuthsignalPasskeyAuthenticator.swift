/// Runs passkey ceremonies on the device for ``AuthsignalPasskey``: the system sheet on iOS, macOS and visionOS
/// (`PlatformAuthsignalAuthenticator`, which exists only there), a ``SoftwareAuthenticator`` on Linux and in tests.
///
/// Implementations pass the options through as they came and must not log or keep the challenge, the response or
/// any credential ID.
public protocol AuthsignalPasskeyAuthenticator: Sendable {
    /// Whether the device can run passkeys.
    var isSupported: Bool { get }
    /// Creates a credential for the options, as `navigator.credentials.create()` does.
    /// - Throws: ``AuthsignalAuthenticatorError``.
    func register(_ options: PublicKeyCredentialCreationOptionsJSON) async throws(AuthsignalAuthenticatorError) -> RegistrationResponseJSON
    /// Gets an assertion for the options, as `navigator.credentials.get()` does.
    /// - Parameters:
    ///   - autofill: offer the passkey in the keyboard's suggestions (iOS 16) instead of a sheet.
    ///   - preferImmediatelyAvailableCredentials: fail fast when no passkey is on this device.
    /// - Throws: ``AuthsignalAuthenticatorError``.
    func authenticate(_ options: PublicKeyCredentialRequestOptionsJSON, autofill: Bool, preferImmediatelyAvailableCredentials: Bool)
        async throws(AuthsignalAuthenticatorError) -> AuthenticationResponseJSON
    /// Cancels the ceremony in flight, if any.
    func cancel()
}

/// Why the device produced no credential; it never reaches the server.
public enum AuthsignalAuthenticatorError: Error, Sendable, Hashable {
    /// The person dismissed the sheet, or no passkey is on the device (`user_canceled`).
    case canceled
    /// The device holds one of `excludeCredentials` (`matched_excluded_credential`).
    case matchedExcludedCredential
    /// The device cannot run passkeys.
    case notSupported
    /// Anything else.
    case failed
}

/// An ``AuthsignalPasskeyAuthenticator`` over a ``SoftwareAuthenticator``: the Linux default, and the one tests use.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public struct SoftwareAuthsignalAuthenticator: AuthsignalPasskeyAuthenticator {
    /// The authenticator that holds the credentials.
    public let authenticator: SoftwareAuthenticator
    /// The origin written into `clientDataJSON`; `https://<rpId>` (an iOS app's origin) when `nil`.
    public let origin: String?

    /// Creates an authenticator.
    /// - Parameters:
    ///   - authenticator: the software authenticator that holds the credentials.
    ///   - origin: the origin the relying party sees; `nil` for `https://<rpId>`, as an iOS app's assertions report.
    public init(_ authenticator: SoftwareAuthenticator = SoftwareAuthenticator(), origin: String? = nil) {
        self.authenticator = authenticator
        self.origin = origin
    }

    public var isSupported: Bool { true }

    public func register(_ options: PublicKeyCredentialCreationOptionsJSON) async throws(AuthsignalAuthenticatorError) -> RegistrationResponseJSON {
        do {
            return try authenticator.create(options, origin: origin ?? "https://\(options.rp.id ?? "")")
        } catch where error.code == .invalidState {
            throw .matchedExcludedCredential
        } catch {
            throw .failed
        }
    }

    public func authenticate(_ options: PublicKeyCredentialRequestOptionsJSON, autofill: Bool, preferImmediatelyAvailableCredentials: Bool)
        async throws(AuthsignalAuthenticatorError) -> AuthenticationResponseJSON
    {
        do {
            return try authenticator.get(options, origin: origin ?? "https://\(options.rpID ?? "")")
        } catch where error.code == .notAllowed {
            throw .canceled
        } catch {
            throw .failed
        }
    }

    public func cancel() {}
}

/// An ``AuthsignalPasskeyAuthenticator`` for a device that cannot run passkeys: every ceremony is `not_supported`.
public struct UnsupportedAuthsignalAuthenticator: AuthsignalPasskeyAuthenticator {
    /// An authenticator that runs nothing.
    public init() {}

    public var isSupported: Bool { false }

    public func register(_ options: PublicKeyCredentialCreationOptionsJSON) async throws(AuthsignalAuthenticatorError) -> RegistrationResponseJSON {
        throw .notSupported
    }

    public func authenticate(_ options: PublicKeyCredentialRequestOptionsJSON, autofill: Bool, preferImmediatelyAvailableCredentials: Bool)
        async throws(AuthsignalAuthenticatorError) -> AuthenticationResponseJSON
    {
        throw .notSupported
    }

    public func cancel() {}
}
