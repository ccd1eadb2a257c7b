import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

@Suite struct MFATests {
    @Test("with MFA on and a verified email, a password session owes a factor; a passkey session counts as two", arguments: Backend.allCases)
    func passkeySessionsAreMultiFactor(backend: Backend) throws {
        let harness = try Harness(backend)
        let key = [("X-Appwrite-Key", harness.key)]
        _ = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
        let server = try #require(harness.send(.POST, "/v1/users/alice/sessions", headers: key).object["secret"] as? String)
        let authenticator = SoftwareAuthenticator()
        try harness.registerPasskey(server, authenticator)

        let mfa = harness.send(.PATCH, "/v1/users/alice/mfa", json: #"{"mfa":true}"#, headers: key)
        #expect(mfa.object["mfa"] as? Bool == true && mfa.object["emailVerification"] as? Bool == false)
        let password = try #require(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                                 headers: key).object["secret"] as? String)
        // No second factor available yet: the gate stays open.
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", password)]).status == 200)
        #expect(harness.send(.PATCH, "/v1/users/alice/verification", json: #"{"emailVerification":true}"#, headers: key)
            .object["emailVerification"] as? Bool == true)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", password)]).expectError(401, "user_more_factors_required")
        harness.startRegistration(password).expectError(401, "user_more_factors_required")

        let token = try #require(try harness.signIn(authenticator).object["secret"] as? String)
        let passkey = try #require(harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(token)"}"#,
                                                headers: key).object["secret"] as? String)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", passkey)]).object["mfa"] as? Bool == true)
        #expect(harness.startRegistration(passkey).status == 201)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-Session", server)]).status == 200)
        // The password session may still end itself.
        #expect(harness.send(.DELETE, "/v1/account/sessions/current", headers: [("X-Appwrite-Session", password)]).status == 204)
        harness.send(.PATCH, "/v1/users/alice/mfa", json: #"{}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.PATCH, "/v1/users/nobody/mfa", json: #"{"mfa":true}"#, headers: key).expectError(404, "user_not_found")
    }
}
