// The platform passkey's assertion as WebAuthn JSON, for the AuthenticationServices authenticators (the inline
// helper's and the Authsignal surface's). Empty on tvOS, watchOS and Linux; not compiled by this repository's CI.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
internal import AuthenticationServices
internal import Foundation

extension AuthenticationResponseJSON {
    /// The `AuthenticationResponseJSON` of a platform assertion from the system sheet, with `authenticatorAttachment`
    /// `platform`; `nil` when the assertion lacks its authenticator data or signature.
    @available(iOS 16, macOS 13, *)
    init?(platform credential: any ASAuthorizationCredential) {
        guard let assertion = credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion,
            let authenticatorData = assertion.rawAuthenticatorData, let signature = assertion.signature
        else { return nil }
        let userID: Data? = assertion.userID
        let id = Base64URL.encode(assertion.credentialID)
        self.init(
            id: id, rawID: id,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(assertion.rawClientDataJSON),
                authenticatorData: Base64URL.encode(authenticatorData),
                signature: Base64URL.encode(signature),
                userHandle: userID.map { Base64URL.encode($0) }),
            authenticatorAttachment: "platform")
    }
}
#endif
