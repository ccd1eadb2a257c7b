import Foundation
import SesameHTTP
import SesameServer
import Testing
@testable import AppwriteAPI

@Suite struct ErrorShapeTests {
    @Test("every error type has the status of the seed's table and spec §5")
    func statuses() {
        let expected: [String: Int] = [
            "user_auth_method_unsupported": 501, "user_reauthentication_required": 401, "user_invalid_token": 401,
            "user_passkey_invalid": 401, "user_passkey_limit_exceeded": 400, "user_passkey_already_exists": 409,
            "user_passkey_not_found": 404, "user_blocked": 403, "general_argument_invalid": 400, "general_rate_limit_exceeded": 429,
            "general_unauthorized_scope": 401, "user_invalid_credentials": 401, "user_already_exists": 409, "user_not_found": 404,
            "user_session_not_found": 404, "project_not_found": 404, "general_route_not_found": 404, "general_server_error": 500,
            "general_unknown": 500, "platform_not_found": 404, "platform_already_exists": 409,
            "general_query_invalid": 400, "general_cursor_not_found": 400, "general_unknown_origin": 403,
            "user_jwt_invalid": 401, "user_jwt_and_cookie_set": 403, "platform_method_unsupported": 400,
            "user_more_factors_required": 401,
        ]
        #expect(Dictionary(uniqueKeysWithValues: AppwriteErrorType.allCases.map { ($0.rawValue, $0.status) }) == expected)
        for type in AppwriteErrorType.allCases {
            let response = AppwriteErrorRenderer().render(.appwrite(type), for: HTTPRequest(method: .GET, path: "/v1/x"))
            Reply(response).expectError(type.status, type.rawValue)
            #expect(Reply(response).object["version"] as? String == AppwriteAPI.version)
        }
    }

    @Test("unknown routes, wrong methods, big and non-JSON bodies and bad JSON answer in Appwrite's shape under /v1")
    func transportErrors() throws {
        let harness = try Harness()
        harness.send(.GET, "/v1/nothing-here").expectError(404, "general_route_not_found")
        let wrongMethod = harness.send(.PUT, "/v1/account")
        wrongMethod.expectError(405, "general_route_not_found")
        #expect(wrongMethod.response.headers["Allow"]?.contains("POST") == true)
        harness.send(.POST, "/v1/account", headers: [("content-type", "text/plain")]).expectError(415, "general_argument_invalid")
        let tooLarge = harness.application.router.respond(to: .payloadTooLarge(), for: HTTPRequest(method: .POST, path: "/v1/account"))
        Reply(tooLarge).expectError(413, "general_argument_invalid")
        harness.send(.POST, "/v1/account", json: "{not json").expectError(400, "general_argument_invalid")
        harness.send(.POST, "/v1/account", json: #"{"userId":5}"#).expectError(400, "general_argument_invalid")
        // Other prefixes keep Sesame's own shape.
        #expect(harness.send(.GET, "/api/v1/nothing").object["error"] != nil)
    }

    @Test("a missing, empty or unknown X-Appwrite-Project is 404 project_not_found")
    func projectSelection() throws {
        let harness = try Harness()
        for project in ["", "nope", String(repeating: "p", count: 65)] {
            harness.send(.GET, "/v1/account", project: project).expectError(404, "project_not_found")
        }
        let request = HTTPRequest(method: .POST, path: "/v1/account", headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        Reply(harness.application.router.respond(to: request)).expectError(404, "project_not_found")
    }
}
