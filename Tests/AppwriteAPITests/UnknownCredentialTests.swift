import Foundation
import SesameClient
import SesameHTTP
import SesameTestSupport
import Testing

/// `X-Sesame-Unknown-Credential`: what the browser SDK needs for WebAuthn's `signalUnknownCredential`.
@Suite struct UnknownCredentialTests {
    @Test("a sign-in with a deleted passkey is user_passkey_invalid marked unknown; other refusals are not marked", arguments: Backend.allCases)
    func deletedPasskey(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let kept = SoftwareAuthenticator(), deleted = SoftwareAuthenticator()
        try harness.registerPasskey(secret, kept, name: "Kept")
        let deletedID = try harness.registerPasskey(secret, deleted, name: "Deleted")
        let ok = try harness.signIn(deleted)
        #expect(ok.status == 201 && ok.response.headers["X-Sesame-Unknown-Credential"] == nil)
        #expect(harness.send(.DELETE, "/v1/account/passkeys/\(deletedID)", headers: [("X-Appwrite-Session", secret)]).status == 204)

        let refused = try harness.signIn(deleted, headers: [("Origin", shopOrigin)])
        refused.expectError(401, "user_passkey_invalid")
        #expect(refused.response.headers["X-Sesame-Unknown-Credential"] == "true")
        // Cross-origin pages can read it (the router adds X-Request-Id after it).
        #expect(refused.response.headers["Access-Control-Expose-Headers"]?.contains("X-Sesame-Unknown-Credential") == true,
                "\(refused.response.headers)")
        #expect(refused.response.ceremony?.reason == "unknown_credential")

        // A known passkey refused for another reason (an origin the project does not accept) is not marked.
        let wrongOrigin = try harness.signIn(kept, origin: "https://evil.example")
        wrongOrigin.expectError(401, "user_passkey_invalid")
        #expect(wrongOrigin.response.headers["X-Sesame-Unknown-Credential"] == nil)
        // Nor is a used challenge, nor a success.
        harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"nope","credential":{}}"#).expectError(401, "user_invalid_token")
        #expect(harness.send(.PUT, "/v1/account/tokens/passkey", json: #"{"challengeId":"nope","credential":{}}"#)
            .response.headers["X-Sesame-Unknown-Credential"] == nil)
        let signedIn = try harness.signIn(kept)
        #expect(signedIn.status == 201 && signedIn.response.headers["X-Sesame-Unknown-Credential"] == nil)
    }
}
