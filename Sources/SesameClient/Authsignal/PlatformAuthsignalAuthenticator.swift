// The platform passkey of the Authsignal surface on Apple devices, through AuthenticationServices. As for
// PlatformInlineAuthenticator, `performRequests(options:)` does not exist on tvOS and watchOS, so this file is empty
// there (and on Linux). This repository's CI runs on Linux: nothing below is compiled or run by it.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
public import AuthenticationServices
internal import Foundation
// ASPresentationAnchor is NSWindow or UIWindow, part of this type's public initialiser.
#if os(macOS)
public import AppKit
#else
public import UIKit
#endif

/// An ``AuthsignalPasskeyAuthenticator`` that runs the person's passkey with the system sheet (iOS 16, macOS 13,
/// visionOS 1): the default of ``AuthsignalPasskey/init(tenantID:baseURL:deviceID:)`` on those platforms.
///
/// Sign-up creates a platform passkey from the options' `rp.id`, `user` and `challenge`, with their
/// `authenticatorSelection.userVerification` and, on iOS 17.4 and macOS 14.4 or later, their `excludeCredentials`
/// (visionOS has no way to pass them, so there the server's check is the only one). Sign-in asks for the options'
/// `allowCredentials` with their `userVerification`: in the keyboard's suggestions (`autofill`, iOS and visionOS; a
/// sheet on macOS and Mac Catalyst), else in a sheet that fails fast when this device holds none of the passkeys
/// (`preferImmediatelyAvailableCredentials`). ``cancel()`` ends the sheet or the suggestion in flight.
///
/// `ASAuthorizationError.canceled` (the person dismissed the sheet, or, in immediate mode, no passkey is on this
/// device) is ``AuthsignalAuthenticatorError/canceled`` for sign-up and sign-in alike (`user_canceled`);
/// `ASAuthorizationError.matchedExcludedCredential` (iOS 18, macOS 15, visionOS 2) is
/// ``AuthsignalAuthenticatorError/matchedExcludedCredential``; anything else, including unreadable options and a
/// missing `webcredentials` associated domain, is ``AuthsignalAuthenticatorError/failed``.
///
/// The app needs the `webcredentials:{rpId}` associated domain, and the relying party must name the app (Sesame's
/// `sesame platform add --apple`). Without an anchor, the sheet is presented over the key window of the foreground
/// active window scene (iOS, visionOS) or the application's key window (macOS); app extensions, which have no
/// `UIApplication.shared`, pass one with ``init(anchor:)``.
///
/// This type is written against Apple's documented AuthenticationServices API but is not compiled by this
/// repository's CI, which runs on Linux; the Linux build uses ``SoftwareAuthsignalAuthenticator``.
@available(iOS 16, macOS 13, visionOS 1, *)
public struct PlatformAuthsignalAuthenticator: AuthsignalPasskeyAuthenticator {
    private let anchor: ASPresentationAnchor?
    private let ceremony = CeremonySlot()

    /// Creates an authenticator that presents its sheet over the app's key window, as authsignal-ios does.
    public init() {
        anchor = nil
    }

    /// Creates an authenticator that presents its sheet over `anchor`.
    /// - Parameter anchor: the window to present the passkey sheet over.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// `true`: this type exists only where AuthenticationServices runs passkeys.
    public var isSupported: Bool { true }

    /// Creates a platform passkey for the options' `rp.id`, `user.name`, `user.id` and `challenge`.
    /// - Parameter options: the `options` member of the registration-options answer.
    /// - Returns: the credential, with `transports` `["hybrid", "internal"]` (an iCloud Keychain passkey is reached
    ///   on the device and, from others, over hybrid), `authenticatorAttachment` `platform`, and the authenticator
    ///   data, public key and algorithm read from the attestation object.
    /// - Throws: ``AuthsignalAuthenticatorError/canceled``, ``AuthsignalAuthenticatorError/matchedExcludedCredential``
    ///   or ``AuthsignalAuthenticatorError/failed`` (also for unreadable options or a missing attestation object).
    public func register(_ options: PublicKeyCredentialCreationOptionsJSON) async throws(AuthsignalAuthenticatorError) -> RegistrationResponseJSON {
        try await Self.register(options, anchor: anchor, ceremony: ceremony).get()
    }

    /// Gets an assertion for the options' `rpId`, `challenge` and `allowCredentials`.
    /// - Parameters:
    ///   - options: the `options` member of the authentication-options answer.
    ///   - autofill: offer the passkey in the keyboard's suggestions (iOS 16, visionOS) instead of a sheet; macOS has
    ///     no such request, so there it is a sheet.
    ///   - preferImmediatelyAvailableCredentials: fail fast, as `user_canceled`, when no passkey is on this device.
    /// - Returns: the assertion, with `authenticatorAttachment` `platform` and empty `clientExtensionResults`.
    /// - Throws: ``AuthsignalAuthenticatorError/canceled`` or ``AuthsignalAuthenticatorError/failed``.
    public func authenticate(_ options: PublicKeyCredentialRequestOptionsJSON, autofill: Bool, preferImmediatelyAvailableCredentials: Bool)
        async throws(AuthsignalAuthenticatorError) -> AuthenticationResponseJSON
    {
        try await Self.authenticate(options, autofill: autofill, immediate: preferImmediatelyAvailableCredentials, anchor: anchor,
                                    ceremony: ceremony).get()
    }

    /// Cancels the ceremony in flight, if any, on the main actor; it then ends with
    /// ``AuthsignalAuthenticatorError/canceled``.
    public func cancel() {
        guard let number = ceremony.inFlight else { return }
        let ceremony = ceremony
        Task { @MainActor in ceremony.controller(number)?.cancel() }
    }

    // MARK: Ceremonies

    @MainActor
    private static func register(_ options: PublicKeyCredentialCreationOptionsJSON, anchor: ASPresentationAnchor?, ceremony: CeremonySlot)
        async -> Result<RegistrationResponseJSON, AuthsignalAuthenticatorError>
    {
        guard let rpID = options.rp.id, let challenge = Base64URL.decode(options.challenge), let userID = Base64URL.decode(options.user.id),
              let excluded = descriptors(options.excludeCredentials)
        else {
            return .failure(.failed)
        }
        let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
            .createCredentialRegistrationRequest(challenge: Data(challenge), name: options.user.name, userID: Data(userID))
        request.displayName = options.user.displayName
        request.userVerificationPreference = userVerification(options.authenticatorSelection?.userVerification)
        #if os(visionOS)
        // The platform request takes excludedCredentials from a protocol visionOS does not have.
        _ = excluded
        #else
        if #available(iOS 17.4, macOS 14.4, *) {
            request.excludedCredentials = excluded
        }
        #endif

        let controller = ASAuthorizationController(authorizationRequests: [request])
        let delegate = RegistrationDelegate(anchor: anchor ?? defaultAnchor())
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        let number = ceremony.begin(controller)
        let result = await withCheckedContinuation { continuation in
            delegate.continuation = continuation
            controller.performRequests()
        }
        ceremony.end(number)
        // The controller holds its delegate weakly: keep both until the answer is in.
        withExtendedLifetime((controller, delegate)) {}
        return result
    }

    @MainActor
    private static func authenticate(_ options: PublicKeyCredentialRequestOptionsJSON, autofill: Bool, immediate: Bool,
                                     anchor: ASPresentationAnchor?, ceremony: CeremonySlot)
        async -> Result<AuthenticationResponseJSON, AuthsignalAuthenticatorError>
    {
        guard let rpID = options.rpID, let challenge = Base64URL.decode(options.challenge),
              let allowed = descriptors(options.allowCredentials)
        else {
            return .failure(.failed)
        }
        let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
            .createCredentialAssertionRequest(challenge: Data(challenge))
        request.userVerificationPreference = userVerification(options.userVerification)
        request.allowedCredentials = allowed

        let controller = ASAuthorizationController(authorizationRequests: [request])
        let delegate = AssertionDelegate(anchor: anchor ?? defaultAnchor())
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        let number = ceremony.begin(controller)
        let result = await withCheckedContinuation { continuation in
            delegate.continuation = continuation
            #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(visionOS)
            // AutoFill-assisted requests exist on iOS 16 and visionOS only.
            if autofill {
                controller.performAutoFillAssistedRequests()
                return
            }
            #endif
            controller.performRequests(options: immediate ? .preferImmediatelyAvailableCredentials : [])
        }
        ceremony.end(number)
        withExtendedLifetime((controller, delegate)) {}
        return result
    }

    // MARK: Helpers

    /// The platform descriptors for `public-key` entries; `nil` when an ID is unreadable, so a bad list can neither
    /// widen a sign-in to every passkey of the RP ID nor let a sign-up skip an exclusion.
    @MainActor
    private static func descriptors(_ list: [PublicKeyCredentialDescriptorJSON]?) -> [ASAuthorizationPlatformPublicKeyCredentialDescriptor]? {
        var descriptors: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
        for descriptor in list ?? [] where descriptor.type == "public-key" {
            guard let id = Base64URL.decode(descriptor.id) else { return nil }
            descriptors.append(ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data(id)))
        }
        return descriptors
    }

    /// The WebAuthn `userVerification` string as AuthenticationServices' preference; `preferred` (WebAuthn's default)
    /// when absent or unknown.
    @MainActor
    private static func userVerification(_ value: String?) -> ASAuthorizationPublicKeyCredentialUserVerificationPreference {
        switch value {
        case "required": .required
        case "discouraged": .discouraged
        default: .preferred
        }
    }

    /// What the sheet is presented over when the app gave no anchor.
    @MainActor
    private static func defaultAnchor() -> ASPresentationAnchor {
        #if os(macOS)
        return NSApplication.shared.keyWindow ?? ASPresentationAnchor()
        #else
        let scene = UIApplication.shared.connectedScenes
            .compactMap { $0 as? UIWindowScene }
            .first { $0.activationState == .foregroundActive }
        return scene?.keyWindow ?? ASPresentationAnchor()
        #endif
    }

    /// The outcome of a failed ceremony.
    static func authenticatorError(for error: any Error) -> AuthsignalAuthenticatorError {
        guard let code = (error as? ASAuthorizationError)?.code else { return .failed }
        // With .preferImmediatelyAvailableCredentials, .canceled also means "no passkey on this device".
        if code == .canceled { return .canceled }
        if #available(iOS 18, macOS 15, visionOS 2, *), code == .matchedExcludedCredential { return .matchedExcludedCredential }
        return .failed
    }
}

/// The controller of the ceremony in flight, shared by the ceremonies (main actor) and ``PlatformAuthsignalAuthenticator/cancel()``
/// (any thread); copies of the authenticator share one slot.
///
/// `@unchecked Sendable`: `controller` and `started` are only read or written while `lock` is held, and the controller
/// itself is only used on the main actor (the ceremonies run there, and `cancel()` hops there).
@available(iOS 16, macOS 13, visionOS 1, *)
private final class CeremonySlot: @unchecked Sendable {
    private let lock = NSLock()
    private var controller: ASAuthorizationController?
    private var started = 0

    /// Records `controller` as the one in flight and returns its number.
    func begin(_ controller: ASAuthorizationController) -> Int {
        lock.lock()
        defer { lock.unlock() }
        started += 1
        self.controller = controller
        return started
    }

    /// Forgets the controller numbered `number`, unless another one has begun since.
    func end(_ number: Int) {
        lock.lock()
        defer { lock.unlock() }
        if started == number { controller = nil }
    }

    /// The number of the ceremony in flight, if any.
    var inFlight: Int? {
        lock.lock()
        defer { lock.unlock() }
        return controller == nil ? nil : started
    }

    /// The controller numbered `number`, if it is still in flight (a later ceremony is not cancelled in its place).
    func controller(_ number: Int) -> ASAuthorizationController? {
        lock.lock()
        defer { lock.unlock() }
        return started == number ? controller : nil
    }
}

/// Bridges one registration request's delegate callbacks to a continuation, resumed exactly once.
@available(iOS 16, macOS 13, visionOS 1, *)
@MainActor
private final class RegistrationDelegate: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    private let anchor: ASPresentationAnchor
    var continuation: CheckedContinuation<Result<RegistrationResponseJSON, AuthsignalAuthenticatorError>, Never>?

    init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
        super.init()
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }

    func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        guard let registration = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestationObject = registration.rawAttestationObject,
              let response = RegistrationResponseJSON(
                  credentialID: Array(registration.credentialID), clientDataJSON: Array(registration.rawClientDataJSON),
                  attestationObject: Array(attestationObject), transports: ["hybrid", "internal"],
                  authenticatorAttachment: "platform")
        else {
            return finish(.failure(.failed))
        }
        finish(.success(response))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        finish(.failure(PlatformAuthsignalAuthenticator.authenticatorError(for: error)))
    }

    private func finish(_ result: Result<RegistrationResponseJSON, AuthsignalAuthenticatorError>) {
        continuation?.resume(returning: result)
        continuation = nil
    }
}

/// Bridges one assertion request's delegate callbacks to a continuation, resumed exactly once.
@available(iOS 16, macOS 13, visionOS 1, *)
@MainActor
private final class AssertionDelegate: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    private let anchor: ASPresentationAnchor
    var continuation: CheckedContinuation<Result<AuthenticationResponseJSON, AuthsignalAuthenticatorError>, Never>?

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
        finish(.failure(PlatformAuthsignalAuthenticator.authenticatorError(for: error)))
    }

    private func finish(_ result: Result<AuthenticationResponseJSON, AuthsignalAuthenticatorError>) {
        continuation?.resume(returning: result)
        continuation = nil
    }
}
#endif
