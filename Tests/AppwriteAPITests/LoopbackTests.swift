import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct LoopbackTests {
    /// Sends one request over the socket and returns the status and the body as a JSON object.
    func call(_ port: UInt16, _ method: String, _ path: String, body: String? = nil, headers: [String: String]) async throws
        -> (status: Int, object: [String: Any], response: HTTPURLResponse)
    {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:], http)
    }

    @Test("the whole loop over a real socket: sign up, register, sign in usernamelessly, exchange, delete")
    func overHTTP() async throws {
        let harness = try Harness()
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.threadCount = 4
        let server = harness.application.makeServer(configuration: configuration)
        try server.start()
        defer { server.shutdown() }
        let port = server.boundPort
        let json = ["X-Appwrite-Project": harness.projectID, "Content-Type": "application/json"]
        let keyed = json.merging(["X-Appwrite-Key": harness.key]) { $1 }

        #expect(try await call(port, "POST", "/v1/account", body: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#,
                               headers: json).status == 201)
        let session = try await call(port, "POST", "/v1/account/sessions/email", body: #"{"email":"alice@example.org","password":"password123"}"#,
                                     headers: keyed)
        let user = json.merging(["X-Appwrite-Session": try #require(session.object["secret"] as? String)]) { $1 }

        let authenticator = SoftwareAuthenticator()
        let start = try await call(port, "POST", "/v1/account/passkeys", body: "{}", headers: user)
        let creation = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                from: JSONSerialization.data(withJSONObject: try #require(start.object["publicKey"])))
        let registration = try authenticator.create(creation, origin: shopOrigin)
        let passkeyID = try #require(start.object["passkeyId"] as? String)
        let verified = try await call(port, "PUT", "/v1/account/passkeys/\(passkeyID)/verification",
                                      body: #"{"credential":\#(try jsonText(registration))}"#, headers: user)
        #expect(verified.status == 200 && verified.object["$id"] as? String == passkeyID)

        let challenge = try await call(port, "POST", "/v1/account/tokens/passkey", body: "{}", headers: json)
        #expect(challenge.response.value(forHTTPHeaderField: "X-RateLimit-Limit") == "10")
        let request = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(challenge.object["publicKey"])))
        let assertion = try authenticator.get(request, origin: shopOrigin)
        let token = try await call(port, "PUT", "/v1/account/tokens/passkey",
                                   body: #"{"challengeId":"\#(try #require(challenge.object["$id"] as? String))","credential":\#(try jsonText(assertion))}"#,
                                   headers: json)
        #expect(token.status == 201 && token.object["userId"] as? String == "alice")
        let exchanged = try await call(port, "POST", "/v1/account/sessions/token",
                                       body: #"{"userId":"alice","secret":"\#(try #require(token.object["secret"] as? String))"}"#, headers: json)
        #expect(exchanged.status == 201 && exchanged.object["provider"] as? String == "passkey")
        let cookie = try #require(exchanged.response.value(forHTTPHeaderField: "X-Fallback-Cookies"))
        let me = try await call(port, "GET", "/v1/account", headers: ["X-Appwrite-Project": harness.projectID, "X-Fallback-Cookies": cookie])
        #expect(me.status == 200 && me.object["$id"] as? String == "alice")

        let deleted = try await call(port, "DELETE", "/v1/account/passkeys/\(passkeyID)", body: "{}", headers: user)
        #expect(deleted.status == 204 && deleted.response.value(forHTTPHeaderField: "Content-Type") == "text/plain")
    }

    @Test("a credential already registered (to anyone) cannot be registered again: 409 user_passkey_already_exists")
    func credentialAlreadyRegistered() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let start = harness.startRegistration(secret)
        let authenticator = SoftwareAuthenticator()
        let response = try authenticator.create(try options(PublicKeyCredentialCreationOptionsJSON.self, start), origin: shopOrigin)
        // Someone else already holds this credential ID for the relying party.
        _ = harness.send(.POST, "/v1/users", json: #"{"userId":"bob"}"#, headers: [("X-Appwrite-Key", harness.key)])
        try harness.sesame.store.credentials.create(CredentialRecord(
            id: "bobs", projectID: harness.projectID, userID: "bob", rpID: "shop.example", credentialID: try #require(authenticator.credentials(rpID: "shop.example").first).id,
            publicKey: [0xA0], algorithm: -7, createdAt: Date()))
        let id = try #require(start.object["passkeyId"] as? String)
        harness.send(.PUT, "/v1/account/passkeys/\(id)/verification", json: #"{"credential":\#(try jsonText(response))}"#,
                     headers: [("X-Appwrite-Session", secret)]).expectError(409, "user_passkey_already_exists")
        #expect(harness.send(.GET, "/v1/account/passkeys", headers: [("X-Appwrite-Session", secret)]).object["total"] as? Int == 0)
    }
}
