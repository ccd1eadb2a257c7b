import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

@Suite struct ProjectRoutesTests {
    @Test("auth methods, the passkey policy and platforms through API keys", arguments: Backend.allCases)
    func projectRoutes(backend: Backend) throws {
        let harness = try Harness(backend)
        let key = [("X-Appwrite-Key", harness.key)]
        let project = harness.send(.GET, "/v1/project", headers: key)
        let methods = try #require(project.object["authMethods"] as? [[String: Any]])
        #expect(methods.count == 8 && methods.first { $0["$id"] as? String == "passkey" }?["enabled"] as? Bool == true)
        #expect(methods.first { $0["$id"] as? String == "magic-url" }?["enabled"] as? Bool == false)

        let off = harness.send(.PATCH, "/v1/project/auth-methods/passkey", json: #"{"enabled":false}"#, headers: key)
        #expect((off.object["authMethods"] as? [[String: Any]])?.first { $0["$id"] as? String == "passkey" }?["enabled"] as? Bool == false)
        harness.send(.POST, "/v1/account/tokens/passkey").expectError(501, "user_auth_method_unsupported")
        #expect(harness.send(.PATCH, "/v1/project/auth-methods/passkey", json: #"{"enabled":true}"#, headers: key).status == 200)
        harness.send(.PATCH, "/v1/project/auth-methods/sms", json: #"{"enabled":true}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.PATCH, "/v1/project/auth-methods/passkey", json: #"{}"#, headers: key).expectError(400, "general_argument_invalid")

        // Platforms: web, Android, Apple; origins follow; IDs are the caller's.
        let web = harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"login","name":"Login","hostname":"login.shop.example"}"#, headers: key)
        #expect(web.status == 201 && web.object["type"] as? String == "web" && web.object["hostname"] as? String == "login.shop.example")
        let fingerprint = Array(repeating: "AB", count: 32).joined(separator: ":")
        let android = harness.send(.POST, "/v1/project/platforms/android",
                                   json: #"{"platformId":"droid","name":"App","applicationId":"com.shop.app","fingerprints":["\#(fingerprint)"]}"#, headers: key)
        #expect(android.status == 201 && android.object["fingerprints"] as? [String] == [fingerprint], "\(android.text)")
        let apple = harness.send(.POST, "/v1/project/platforms/apple", json: #"{"platformId":"ios","name":"iOS","bundleIdentifier":"com.shop.App"}"#, headers: key)
        #expect(apple.status == 201 && apple.object["bundleIdentifier"] as? String == "com.shop.App", "\(apple.text)")
        harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"login","name":"Again","hostname":"a.shop.example"}"#, headers: key)
            .expectError(409, "platform_already_exists")
        harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"bad","name":"Bad","hostname":"a b"}"#, headers: key)
            .expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/project/platforms/android", json: #"{"platformId":"d2","name":"App","applicationId":"com.shop.app","fingerprints":["zz"]}"#, headers: key)
            .expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"nohost","name":"x"}"#, headers: key).expectError(400, "general_argument_invalid")
        #expect(harness.send(.GET, "/v1/project/platforms", headers: key).object["total"] as? Int == 4)
        #expect(harness.send(.GET, "/v1/project/platforms/ios", headers: key).object["type"] as? String == "apple")
        harness.send(.GET, "/v1/project/platforms/nope", headers: key).expectError(404, "platform_not_found")

        let policy = harness.send(.GET, "/v1/project/policies/passkey", headers: key)
        #expect(policy.object["$id"] as? String == "passkey" && policy.object["rpId"] as? String == "shop.example")
        let origins = try #require(policy.object["origins"] as? [String])
        #expect(origins.contains("https://login.shop.example") && origins.contains("https://shop.example")
            && origins.contains { $0.hasPrefix("android:apk-key-hash:") }, "\(origins)")
        #expect(harness.send(.GET, "/v1/project/policies", headers: key).object["total"] as? Int == 1)
        #expect(harness.send(.DELETE, "/v1/project/platforms/login", headers: key).status == 204)
        harness.send(.DELETE, "/v1/project/platforms/login", headers: key).expectError(404, "platform_not_found")

        // The relying party ID: change, same value, IP refused, then permanent once a passkey exists.
        let changed = harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"shop.example"}"#, headers: key)
        #expect(changed.status == 200 && changed.object["$id"] as? String == harness.projectID)
        harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"10.0.0.1"}"#, headers: key).expectError(400, "general_argument_invalid")
        harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{}"#, headers: key).expectError(400, "general_argument_invalid")
        #expect(harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"other.example"}"#, headers: key).status == 200)
        #expect(harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":""}"#, headers: key).status == 200)
        // No relying party ID: the project cannot run passkeys until one is set (403 naming what to add, not 501).
        harness.send(.POST, "/v1/account/tokens/passkey").expectError(403, "general_unknown_origin")
        #expect(harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"shop.example"}"#, headers: key).status == 200)
        let secret = try harness.signUpAndIn()
        _ = harness.startRegistration(secret)  // a pending registration is enough
        harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"other.example"}"#, headers: key)
            .expectError(400, "general_argument_invalid")
        #expect(harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"shop.example"}"#, headers: key).status == 200)
    }

    @Test("project routes need a key with project.read or project.write")
    func scopes() throws {
        let harness = try Harness()
        let reader = try harness.sesame.apiKeys.create(projectID: harness.projectID, name: "r", scopes: [.projectRead]).secret
        harness.send(.GET, "/v1/project/policies/passkey").expectError(401, "general_unauthorized_scope")
        #expect(harness.send(.GET, "/v1/project/policies/passkey", headers: [("X-Appwrite-Key", reader)]).status == 200)
        harness.send(.PATCH, "/v1/project/policies/passkey", json: #"{"rpId":"x.example"}"#, headers: [("X-Appwrite-Key", reader)])
            .expectError(401, "general_unauthorized_scope")
        harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"w","name":"W","hostname":"w.example"}"#,
                     headers: [("X-Appwrite-Key", reader)]).expectError(401, "general_unauthorized_scope")
    }
}

@Suite struct UpdateTests {
    @Test("platform updates keep the type; Android fingerprints are kept when omitted")
    func platformUpdates() throws {
        let harness = try Harness()
        let key = [("X-Appwrite-Key", harness.key)]
        let fingerprint = Array(repeating: "CD", count: 32).joined(separator: ":")
        _ = harness.send(.POST, "/v1/project/platforms/web", json: #"{"platformId":"w","name":"Web","hostname":"a.shop.example"}"#, headers: key)
        _ = harness.send(.POST, "/v1/project/platforms/android",
                         json: #"{"platformId":"d","name":"App","applicationId":"com.shop.app","fingerprints":["\#(fingerprint)"]}"#, headers: key)
        let web = harness.send(.PUT, "/v1/project/platforms/web/w", json: #"{"name":"Site","hostname":"b.shop.example"}"#, headers: key)
        #expect(web.status == 200 && web.object["hostname"] as? String == "b.shop.example" && web.object["name"] as? String == "Site")
        let android = harness.send(.PUT, "/v1/project/platforms/android/d", json: #"{"name":"App 2","applicationId":"com.shop.app2"}"#, headers: key)
        #expect(android.object["applicationId"] as? String == "com.shop.app2" && android.object["fingerprints"] as? [String] == [fingerprint])
        harness.send(.PUT, "/v1/project/platforms/android/d", json: #"{"name":"App","applicationId":"com.shop.app","fingerprints":[]}"#, headers: key)
            .expectError(400, "general_argument_invalid")
        harness.send(.PUT, "/v1/project/platforms/apple/w", json: #"{"name":"iOS","bundleIdentifier":"com.shop.App"}"#, headers: key)
            .expectError(400, "platform_method_unsupported")
        harness.send(.PUT, "/v1/project/platforms/web/nope", json: #"{"name":"x","hostname":"c.shop.example"}"#, headers: key)
            .expectError(404, "platform_not_found")
        harness.send(.PUT, "/v1/project/platforms/web/w", json: #"{"name":"x","hostname":"a b"}"#, headers: key)
            .expectError(400, "general_argument_invalid")
        let origins = try #require(harness.send(.GET, "/v1/project/policies/passkey", headers: key).object["origins"] as? [String])
        #expect(origins.contains("https://b.shop.example") && !origins.contains("https://a.shop.example"))
    }

    @Test("refreshing a session extends its expiry but not its recency")
    func sessionRefresh() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        let auth = [("X-Appwrite-Session", secret)]
        let before = harness.send(.GET, "/v1/account/sessions/current", headers: auth)
        harness.clock.advance(by: 700)
        let refreshed = harness.send(.PATCH, "/v1/account/sessions/current", headers: auth)
        #expect(refreshed.status == 200 && refreshed.object["current"] as? Bool == true)
        #expect((refreshed.object["expire"] as? String ?? "") > (before.object["expire"] as? String ?? "~"))
        #expect(refreshed.object["$createdAt"] as? String == before.object["$createdAt"] as? String)
        harness.startRegistration(secret).expectError(401, "user_reauthentication_required")
        harness.send(.PATCH, "/v1/account/sessions/nope", headers: auth).expectError(404, "user_session_not_found")
    }
}
