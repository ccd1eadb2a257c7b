import Foundation
import WebAuthn

/// `PublicKeyCredentialDescriptorJSON`: a credential the authenticator may use (or must not register again).
public struct CredentialDescriptorJSON: JSONWritable, Sendable, Hashable {
    public let type = "public-key"
    /// The credential ID, base64url without padding.
    public let id: String
    /// The stored transports; left out of the JSON when there are none.
    public let transports: [String]

    init(_ descriptor: CredentialDescriptor) {
        id = Base64URL.encode(descriptor.id)
        transports = descriptor.transports
    }

    public func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("id", id)
            if !transports.isEmpty { object.member("transports", strings: transports) }
            object.member("type", type)
        }
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn L3 §5.1.3 JSON form) of a registration: a discoverable
/// credential, the attestation the project's policy asks for (`none` by default), user verification and timeout as
/// the ceremony engine sets them.
public struct CreationOptionsJSON: JSONWritable, Sendable, Hashable {
    /// `PublicKeyCredentialRpEntity`: the relying party ID and name.
    public struct RelyingParty: Sendable, Hashable { public let id, name: String }
    /// `PublicKeyCredentialUserEntityJSON`: the base64url user handle, name and display name.
    public struct UserEntity: Sendable, Hashable { public let id, name, displayName: String }
    /// `PublicKeyCredentialParameters`: one offered COSE algorithm.
    public struct Parameter: Sendable, Hashable {
        public let type = "public-key"
        public let alg: Int
    }
    /// `AuthenticatorSelectionCriteria`: a discoverable credential, with the engine's user verification.
    public struct Selection: Sendable, Hashable {
        public let residentKey = "required"
        public let requireResidentKey = true
        public let userVerification: String
    }
    /// The extensions asked for: `credProps`.
    public struct Extensions: Sendable, Hashable { public let credProps = true }

    public let rp: RelyingParty
    public let user: UserEntity
    /// The challenge, base64url without padding.
    public let challenge: String
    public let pubKeyCredParams: [Parameter]
    /// Milliseconds.
    public let timeout: Int
    public let excludeCredentials: [CredentialDescriptorJSON]
    public let authenticatorSelection: Selection
    /// The attestation conveyance preference: `none`, or `direct` when the project's attestation policy needs one.
    public var attestation = "none"
    public let hints: [String] = []
    public let extensions = Extensions()

    /// Members in name order, as Foundation's sorted encoder wrote them.
    public func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("attestation", attestation)
            object.key("authenticatorSelection")
            object.object { selection in
                selection.member("requireResidentKey", authenticatorSelection.requireResidentKey)
                selection.member("residentKey", authenticatorSelection.residentKey)
                selection.member("userVerification", authenticatorSelection.userVerification)
            }
            object.member("challenge", challenge)
            object.member("excludeCredentials", excludeCredentials)
            object.key("extensions")
            object.object { extensions in extensions.member("credProps", self.extensions.credProps) }
            object.member("hints", strings: hints)
            object.key("pubKeyCredParams")
            object.array { parameters in
                for parameter in pubKeyCredParams {
                    parameters.object { entry in
                        entry.member("alg", parameter.alg)
                        entry.member("type", parameter.type)
                    }
                }
            }
            object.key("rp")
            object.object { rp in
                rp.member("id", self.rp.id)
                rp.member("name", self.rp.name)
            }
            object.member("timeout", timeout)
            object.key("user")
            object.object { user in
                user.member("displayName", self.user.displayName)
                user.member("id", self.user.id)
                user.member("name", self.user.name)
            }
        }
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn L3 §5.1.4 JSON form) of an authentication; an empty
/// `allowCredentials` lets any discoverable credential of the relying party answer.
public struct RequestOptionsJSON: JSONWritable, Sendable, Hashable {
    /// The challenge, base64url without padding.
    public let challenge: String
    /// Milliseconds.
    public let timeout: Int
    public let rpId: String
    public let allowCredentials: [CredentialDescriptorJSON]
    public let userVerification: String

    /// Options for `challenge` on `rpID`, timed and verified as the ceremony engine says for `kind`.
    init(rpID: String, challenge: [UInt8], allowCredentials: [CredentialDescriptor], kind: ChallengeBinding.Kind) {
        self.challenge = Base64URL.encode(challenge)
        timeout = kind.timeoutMilliseconds
        rpId = rpID
        self.allowCredentials = allowCredentials.map(CredentialDescriptorJSON.init)
        userVerification = kind.userVerification.requested
    }

    /// Members in name order, as Foundation's sorted encoder wrote them.
    public func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("allowCredentials", allowCredentials)
            object.member("challenge", challenge)
            object.member("rpId", rpId)
            object.member("timeout", timeout)
            object.member("userVerification", userVerification)
        }
    }
}

extension ChallengeBinding {
    /// What a binding is, without the IDs it carries: what options and policies depend on.
    public enum Kind: Sendable, Hashable {
        case accountSession, signIn, verificationRequest, handOff, actionRegistration, action, idCreation

        /// WebAuthn's `timeout`, in milliseconds: the challenge's 5 minutes for account ceremonies; 60 seconds for
        /// the inline passkey, the hand-off page (BotShield §1.4) and the setup page's registrations (§2.8), whose
        /// challenges outlive the prompt.
        public var timeoutMilliseconds: Int {
            switch self {
            case .accountSession, .signIn, .actionRegistration, .action: 300_000
            case .verificationRequest, .handOff, .idCreation: 60_000
            }
        }

        /// The user-verification policy of these ceremonies: required by the core for account ceremonies, checked
        /// after identity for inline and hand-off ones (BotShield §1.5 step 8).
        public var userVerification: UserVerificationPolicy {
            switch self {
            case .accountSession, .signIn, .actionRegistration, .action, .idCreation: .required
            case .verificationRequest, .handOff: .afterIdentity
            }
        }
    }

    /// The binding's kind.
    public var kind: Kind {
        switch self {
        case .accountSession: .accountSession
        case .signIn: .signIn
        case .verificationRequest: .verificationRequest
        case .handOff: .handOff
        case .actionRegistration: .actionRegistration
        case .action: .action
        case .idCreation: .idCreation
        }
    }
}

extension UserVerificationPolicy {
    /// WebAuthn's `userVerification` option: `required` either way (checking it after identity still asks for it).
    public var requested: String { "required" }
}

extension RegistrationStart {
    /// The creation options the client passes to its authenticator.
    public var options: CreationOptionsJSON {
        let kind = ChallengeBinding.Kind.accountSession
        var options = CreationOptionsJSON(
            rp: .init(id: rpID, name: rpName),
            user: .init(id: Base64URL.encode(userHandle), name: userName, displayName: userDisplayName),
            challenge: Base64URL.encode(challenge), pubKeyCredParams: algorithms.map { .init(alg: $0) }, timeout: kind.timeoutMilliseconds,
            excludeCredentials: excludeCredentials.map(CredentialDescriptorJSON.init),
            authenticatorSelection: .init(userVerification: kind.userVerification.requested)
        )
        options.attestation = attestation
        return options
    }
}

extension SignInStart {
    /// The request options of the usernameless sign-in: empty `allowCredentials`.
    public var options: RequestOptionsJSON { RequestOptionsJSON(rpID: rpID, challenge: challenge, allowCredentials: [], kind: .signIn) }
}

extension InlinePasskeyOptions {
    /// The request options for the linked person's passkeys; nothing in them names the person.
    public var options: RequestOptionsJSON {
        RequestOptionsJSON(rpID: rpID, challenge: challenge, allowCredentials: allowCredentials, kind: .verificationRequest)
    }
}

extension HandOffOptions {
    /// The request options of the hand-off page.
    public var options: RequestOptionsJSON {
        RequestOptionsJSON(rpID: rpID, challenge: challenge, allowCredentials: allowCredentials, kind: .handOff)
    }
}
