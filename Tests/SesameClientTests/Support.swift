import Foundation
import SesameClient
import Testing
import WebAuthn

/// A relying party on the server side of a test: it issues options like a server would, and checks responses
/// with the real verifier in module `WebAuthn`.
struct TestRelyingParty {
    var id = "example.org"
    var origin = "https://example.org"
    var requiresUserVerification = true
    var crossOrigin: CrossOriginPolicy = .forbidden

    var policy: RelyingPartyPolicy {
        RelyingPartyPolicy(
            id: id, origins: [origin], requiresUserVerification: requiresUserVerification, crossOrigin: crossOrigin)
    }

    /// Fresh random challenge bytes.
    static func challenge() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: .min ... .max) } }

    func creationOptions(
        challenge: [UInt8], userHandle: [UInt8] = Array("user-1".utf8), algorithms: [Int] = [-8, -7, -257],
        exclude: [[UInt8]] = []
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: PublicKeyCredentialRpEntity(id: id, name: "Example"),
            user: PublicKeyCredentialUserEntityJSON(
                id: Base64URL.encode(userHandle), name: "alice@example.org", displayName: "Alice"),
            challenge: Base64URL.encode(challenge),
            pubKeyCredParams: algorithms.map { PublicKeyCredentialParameters(alg: $0) }, timeout: 60_000,
            excludeCredentials: exclude.map { PublicKeyCredentialDescriptorJSON(id: Base64URL.encode($0)) },
            authenticatorSelection: AuthenticatorSelectionCriteria(
                residentKey: "required", userVerification: "required"),
            attestation: "direct")
    }

    func requestOptions(challenge: [UInt8], allow: [[UInt8]] = []) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URL.encode(challenge), timeout: 60_000, rpID: id,
            allowCredentials: allow.map { PublicKeyCredentialDescriptorJSON(id: Base64URL.encode($0)) },
            userVerification: "required")
    }

    /// Sends the response through JSON, as it would travel over HTTP, and verifies it.
    func verify(_ response: RegistrationResponseJSON, challenge: [UInt8]) throws -> VerifiedRegistration {
        let credential = try RegistrationCredential(json: Array(JSONEncoder().encode(response)))
        return try RegistrationVerifier.verify(
            credential, expectations: RegistrationExpectations(policy: policy, challenge: challenge), at: Date())
    }

    /// Sends the response through JSON and verifies it against a stored record.
    func verify(
        _ response: AuthenticationResponseJSON, challenge: [UInt8], record: CredentialRecord, allow: [[UInt8]] = [],
        identifiedUserHandle: [UInt8]? = nil
    ) throws -> VerifiedAuthentication {
        let credential = try AuthenticationCredential(json: Array(JSONEncoder().encode(response)))
        return try AuthenticationVerifier.verify(
            credential,
            expectations: AuthenticationExpectations(
                policy: policy, challenge: challenge, allowedCredentialIDs: allow,
                identification: identifiedUserHandle.map { .identified(expectedUserHandle: $0) } ?? .usernameless),
            record: record)
    }

    /// Registers a credential on `authenticator` and returns the record a server would store.
    func register(
        _ authenticator: SoftwareAuthenticator, userHandle: [UInt8] = Array("user-1".utf8)
    ) throws -> CredentialRecord {
        let challenge = Self.challenge()
        let response = try authenticator.create(
            creationOptions(challenge: challenge, userHandle: userHandle), origin: origin)
        let verified = try verify(response, challenge: challenge)
        return CredentialRecord(
            id: verified.credentialID, publicKey: verified.publicKey, signCount: verified.signCount,
            backupEligible: verified.backupEligible, userHandle: userHandle)
    }
}

/// Expects `body` to throw a `WebAuthnError` with `code`.
func expectRejection(
    _ code: WebAuthnError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, "\(error.map(String.init(reflecting:)) ?? "no error")", sourceLocation: sourceLocation)
}

/// The bytes of a base64url member, failing the test when it does not decode.
func bytes(_ base64url: String) throws -> [UInt8] { try Base64URL.decode(base64url) }
