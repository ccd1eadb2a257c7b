import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

@Suite struct JWTTests {
    @Test("JWTs stand for their session: issue, use, refuse forged, expired, ended and mixed", arguments: Backend.allCases)
    func jwts(backend: Backend) throws {
        let harness = try Harness(backend)
        let secret = try harness.signUpAndIn()
        let issued = harness.send(.POST, "/v1/account/jwts", headers: [("X-Appwrite-Session", secret)])
        #expect(issued.status == 201)
        let jwt = try #require(issued.object["jwt"] as? String)
        #expect(jwt.split(separator: ".").count == 3)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Appwrite-JWT", jwt)]).object["$id"] as? String == "alice")
        // The passkey rules see the JWT's session: registering works while it is recent.
        #expect(harness.send(.POST, "/v1/account/passkeys", headers: [("X-Appwrite-JWT", jwt)]).status == 201)

        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-JWT", jwt), ("X-Appwrite-Session", secret)])
            .expectError(403, "user_jwt_and_cookie_set")
        var forged = Array(jwt)
        forged[forged.count - 2] = forged[forged.count - 2] == "A" ? "B" : "A"
        for bad in [String(forged), "not.a.jwt", "x", jwt + "x"] {
            harness.send(.GET, "/v1/account", headers: [("X-Appwrite-JWT", bad)]).expectError(401, "user_jwt_invalid")
        }
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        harness.send(.GET, "/v1/account", project: other.id, headers: [("X-Appwrite-JWT", jwt)]).expectError(401, "user_jwt_invalid")
        harness.send(.POST, "/v1/account/jwts", json: #"{"duration":3601}"#, headers: [("X-Appwrite-Session", secret)])
            .expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/account/jwts").expectError(401, "general_unauthorized_scope")

        // Expiry: 15 minutes by default.
        harness.clock.advance(by: 901)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-JWT", jwt)]).expectError(401, "user_jwt_invalid")

        // Users route: the most recent session by default, or a named one; a JWT dies with its session.
        let key = [("X-Appwrite-Key", harness.key)]
        let minted = harness.send(.POST, "/v1/users/alice/sessions", headers: key)
        let mintedID = try #require(minted.object["$id"] as? String)
        let recent = try #require(harness.send(.POST, "/v1/users/alice/jwts", headers: key).object["jwt"] as? String)
        let named = try #require(harness.send(.POST, "/v1/users/alice/jwts", json: #"{"sessionId":"\#(mintedID)","duration":60}"#,
                                              headers: key).object["jwt"] as? String)
        for token in [recent, named] {
            #expect(harness.send(.GET, "/v1/account/sessions/current", headers: [("X-Appwrite-JWT", token)]).object["$id"] as? String == mintedID)
        }
        harness.send(.POST, "/v1/users/alice/jwts", json: #"{"sessionId":"nope"}"#, headers: key).expectError(404, "user_session_not_found")
        #expect(harness.send(.DELETE, "/v1/users/alice/sessions/\(mintedID)", headers: key).status == 204)
        harness.send(.GET, "/v1/account", headers: [("X-Appwrite-JWT", recent)]).expectError(401, "user_jwt_invalid")
        _ = harness.send(.POST, "/v1/users", json: #"{"userId":"lonely"}"#, headers: key)
        harness.send(.POST, "/v1/users/lonely/jwts", headers: key).expectError(404, "user_session_not_found")
    }
}
