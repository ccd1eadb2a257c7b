import Foundation
import SesameCore
import SesameHTTP
import Testing

@Suite struct BrowserTests {
    @Test("CORS: preflights answer, the project's web origins get credentialed responses with X-Fallback-Cookies exposed")
    func cors() throws {
        let harness = try Harness()
        _ = harness.send(.POST, "/v1/account", json: #"{"userId":"alice","email":"alice@example.org","password":"password123"}"#)
        let preflight = harness.send(.OPTIONS, "/v1/account/sessions/email", headers: [
            ("Origin", "https://shop.example"), ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type, x-appwrite-project, x-sdk-version, x-fallback-cookies"),
        ])
        #expect(preflight.status == 204 && preflight.response.headers["Access-Control-Allow-Origin"] == "https://shop.example")
        #expect(preflight.response.headers["Access-Control-Allow-Headers"]?.contains("x-fallback-cookies") == true)
        #expect(preflight.response.headers["Access-Control-Allow-Methods"]?.contains("POST") == true)

        let session = harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                                   headers: [("Origin", "https://shop.example")])
        #expect(session.status == 201)
        let headers = session.response.headers
        #expect(headers["Access-Control-Allow-Origin"] == "https://shop.example" && headers["Access-Control-Allow-Credentials"] == "true")
        #expect(headers["Access-Control-Expose-Headers"] == "X-Fallback-Cookies, X-Request-Id")
        #expect(headers["Vary"]?.contains("Origin") == true)

        // Other origins are refused before anything happens; subdomains need a wildcard platform; keys are servers.
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#,
                     headers: [("Origin", "https://evil.example")]).expectError(403, "general_unknown_origin")
        harness.send(.GET, "/v1/account", headers: [("Origin", "https://app.shop.example")]).expectError(403, "general_unknown_origin")
        harness.send(.GET, "/v1/account", headers: [("Origin", "null")]).expectError(403, "general_unknown_origin")
        _ = try harness.sesame.projects.addPlatform(projectID: harness.projectID, .web(hostname: "*.shop.example"))
        harness.send(.GET, "/v1/account", headers: [("Origin", "https://app.shop.example")]).expectError(401, "general_unauthorized_scope")
        #expect(harness.send(.GET, "/v1/users", headers: [("Origin", "https://evil.example"), ("X-Appwrite-Key", harness.key)]).status == 200)
        // Without Origin (server SDKs) nothing changes.
        #expect(harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#).status == 201)
    }
}
