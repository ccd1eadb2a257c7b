// The platform passkey on Apple devices, through AuthenticationServices. `performRequests(options:)` does not
// exist on tvOS and watchOS, so this file is empty there (and on Linux).
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
public import AuthenticationServices
internal import Foundation

/// An ``InlinePasskeyAuthenticator`` that runs the person's passkey with the system sheet (iOS 16, macOS 13).
///
/// It asks for user verification (`required`) and for immediately available credentials only, so a device
/// without the passkey fails fast instead of offering a passkey from another device. In that mode Apple reports
/// "no passkey on this device" and "the person cancelled" alike, as `ASAuthorizationError.canceled`; both arrive
/// as ``InlineAuthenticatorError/cancelled``, and the app shows the same two choices for
/// ``InlinePanel/cancelled`` and ``InlinePanel/noCredential``. A missing associated domain arrives as
/// `ASAuthorizationError.failed`, indistinguishable from other failures, hence ``InlineAuthenticatorError/failed``.
///
/// The app needs the `webcredentials:{rpId}` associated domain, and the relying party must name the app.
@available(iOS 16, macOS 13, *)
public struct PlatformInlineAuthenticator: InlinePasskeyAuthenticator {
    private let anchor: ASPresentationAnchor

    /// Creates an authenticator that presents its sheet over `anchor`.
    /// - Parameter anchor: the window to present the passkey sheet over.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Runs the system passkey sheet for the options' `rpId`, `challenge` and `allowCredentials`.
    /// - Parameter options: the `options` member of the `passkey-options` answer.
    /// - Returns: the assertion, with `authenticatorAttachment` `platform` and empty `clientExtensionResults`.
    /// - Throws: ``InlineAuthenticatorError/cancelled`` for `ASAuthorizationError.canceled` (also "no passkey on
    ///   this device"), ``InlineAuthenticatorError/failed`` for anything else, including unusable options.
    public func assert(_ options: PublicKeyCredentialRequestOptionsJSON) async throws(InlineAuthenticatorError)
        -> AuthenticationResponseJSON
    {
        try await Self.perform(options, anchor: anchor).get()
    }

    @MainActor
    private static func perform(_ options: PublicKeyCredentialRequestOptionsJSON, anchor: ASPresentationAnchor)
        async -> Result<AuthenticationResponseJSON, InlineAuthenticatorError>
    {
        guard let rpID = options.rpID, let challenge = Base64URL.decode(options.challenge) else {
            return .failure(.failed)
        }
        var allowed: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
        for descriptor in options.allowCredentials ?? [] where descriptor.type == "public-key" {
            // An unreadable ID must not widen the request to every passkey of the RP ID.
            guard let id = Base64URL.decode(descriptor.id) else { return .failure(.failed) }
            allowed.append(ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data(id)))
        }
        let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
            .createCredentialAssertionRequest(challenge: Data(challenge))
        request.userVerificationPreference = .required
        request.allowedCredentials = allowed

        let controller = ASAuthorizationController(authorizationRequests: [request])
        let delegate = AssertionDelegate(anchor: anchor)
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        let result = await withCheckedContinuation { continuation in
            delegate.continuation = continuation
            // Fail fast, without the other-device sheet, when this device holds none of the passkeys.
            controller.performRequests(options: .preferImmediatelyAvailableCredentials)
        }
        // The controller holds its delegate weakly: keep both until the answer is in.
        withExtendedLifetime((controller, delegate)) {}
        return result
    }
}

/// Bridges one assertion request's delegate callbacks to a continuation, resumed exactly once.
@available(iOS 16, macOS 13, *)
private final class AssertionDelegate: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    private let anchor: ASPresentationAnchor
    var continuation: CheckedContinuation<Result<AuthenticationResponseJSON, InlineAuthenticatorError>, Never>?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
        super.init()
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }

    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        guard let response = AuthenticationResponseJSON(platform: authorization.credential) else { return finish(.failure(.failed)) }
        finish(.success(response))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        // With .preferImmediatelyAvailableCredentials, .canceled also means "no passkey on this device".
        let cancelled = (error as? ASAuthorizationError)?.code == .canceled
        finish(.failure(cancelled ? .cancelled : .failed))
    }

    private func finish(_ result: Result<AuthenticationResponseJSON, InlineAuthenticatorError>) {
        continuation?.resume(returning: result)
        continuation = nil
    }
}
#endif
