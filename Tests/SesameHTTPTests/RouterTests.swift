import Foundation
import SesameHTTP
import Synchronization
import Testing

/// An error renderer in a different shape, to check that mounts choose the renderer.
private struct FlatRenderer: HTTPErrorRenderer {
    func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        .json(["type": error.code, "msg": error.message, "face": "flat"], status: error.status)
    }
}

private struct Secret: Error {
    var detail = "db password is hunter2"
}

private func makeRouter() -> Router {
    var router = Router()
    router.mount("/v1", errorRenderer: FlatRenderer())
    router.add(.GET, "/health") { _ in .json(["status": "pass"]) }
    router.add(.GET, "/v1/projects/:projectId") { request in
        .json(["id": request.pathParameters["projectId"] ?? "?"])
    }
    router.add(.GET, "/v1/projects/new") { _ in .text("literal") }
    router.add(.DELETE, "/v1/projects/:projectId") { _ in .noContent() }
    router.add(.POST, "/v1/projects/:projectId/keys/:keyId", cors: true) { request in
        .json(request.pathParameters)
    }
    router.add(.POST, "/v1/echo", cors: true) { request in
        HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: request.body)
    }
    router.add(.POST, "/v1/raw", requiresJSONBody: false) { _ in .text("ok") }
    router.add(.GET, "/v1/teapot") { _ in
        throw HTTPError(status: 418, code: "teapot", message: "I am a teapot.", headers: ["X-Extra": "1"])
    }
    router.add(.GET, "/v1/boom") { _ in throw Secret() }
    router.add(.GET, "/boom") { _ in throw Secret() }
    return router
}

private func json(_ response: HTTPResponse) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
}

@Suite("Router")
struct RouterTests {
    let router = makeRouter()

    @Test("captures path parameters and reports the route pattern")
    func pathParameters() throws {
        let response = router.respond(to: HTTPRequest(method: .GET, path: "/v1/projects/p-42"))
        #expect(response.status == 200)
        #expect(try json(response)["id"] as? String == "p-42")
        #expect(response.route == "/v1/projects/:projectId")

        let two = router.respond(
            to: HTTPRequest(method: .POST, path: "/v1/projects/a/keys/b", headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        )
        #expect(try json(two) as? [String: String] == ["projectId": "a", "keyId": "b"])
    }

    @Test("a literal segment beats a parameter")
    func literalWins() {
        let response = router.respond(to: HTTPRequest(method: .GET, path: "/v1/projects/new"))
        #expect(String(decoding: response.body, as: UTF8.self) == "literal")
        #expect(response.route == "/v1/projects/new")
    }

    @Test("unknown paths give 404 route_not_found in the mount's shape, with no route")
    func notFound() throws {
        let inV1 = router.respond(to: HTTPRequest(method: .GET, path: "/v1/nothing"))
        #expect(inV1.status == 404)
        #expect(inV1.route == nil)
        #expect(try json(inV1)["type"] as? String == "route_not_found")

        let atRoot = router.respond(to: HTTPRequest(method: .GET, path: "/nothing"))
        #expect(atRoot.status == 404)
        let error = try #require(try json(atRoot)["error"] as? [String: String])
        #expect(error["code"] == "route_not_found")
        #expect(atRoot.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test("mount prefixes compare whole segments", arguments: ["/v10/x", "/v1x"])
    func mountSegments(path: String) throws {
        let response = router.respond(to: HTTPRequest(method: .GET, path: path))
        #expect(try json(response)["error"] != nil)
    }

    @Test("a trailing slash, an empty segment or an empty parameter does not match", arguments: [
        "/health/", "/v1/projects/", "/v1//projects/x", "/v1/projects//keys/b", "health", "",
    ])
    func strictPaths(path: String) {
        #expect(router.respond(to: HTTPRequest(method: .GET, path: path)).status == 404)
    }

    @Test("a known path with another method gives 405 with Allow")
    func methodNotAllowed() throws {
        let response = router.respond(to: HTTPRequest(method: .PUT, path: "/v1/projects/p1"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, DELETE, HEAD")
        #expect(try json(response)["type"] as? String == "method_not_allowed")
        #expect(response.route == "/v1/projects/:projectId")
    }

    @Test("HEAD is served by GET without a body but with its length")
    func head() {
        let get = router.respond(to: HTTPRequest(method: .GET, path: "/health"))
        let head = router.respond(to: HTTPRequest(method: .HEAD, path: "/health"))
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["Content-Length"] == String(get.body.count))
        #expect(head.headers["Content-Type"] == get.headers["Content-Type"])
        #expect(head.route == "/health")
    }

    @Test("a CORS route answers the preflight and echoes the Origin")
    func corsPreflight() {
        let preflight = router.respond(
            to: HTTPRequest(
                method: .OPTIONS, path: "/v1/echo",
                headers: [
                    "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type, x-sdk",
                ]
            )
        )
        #expect(preflight.status == 204)
        #expect(preflight.headers["Access-Control-Allow-Origin"] == "https://app.example")
        #expect(preflight.headers["Access-Control-Allow-Credentials"] == "true")
        #expect(preflight.headers["Access-Control-Allow-Methods"] == "POST, OPTIONS")
        #expect(preflight.headers["Access-Control-Allow-Headers"] == "content-type, x-sdk")
        #expect(preflight.headers["Vary"]?.contains("Origin") == true)
        #expect(preflight.headers["Content-Type"] == "text/plain")

        let post = router.respond(
            to: HTTPRequest(
                method: .POST, path: "/v1/echo",
                headers: ["Origin": "https://app.example", "Content-Type": "application/json"], body: Array("{}".utf8)
            )
        )
        #expect(post.status == 200)
        #expect(post.headers["Access-Control-Allow-Origin"] == "https://app.example")
        #expect(post.headers["Access-Control-Allow-Credentials"] == "true")
        #expect(post.headers["Vary"] == "Origin")
    }

    @Test("routes without CORS get no CORS headers and no preflight")
    func noCors() {
        let get = router.respond(to: HTTPRequest(method: .GET, path: "/health", headers: ["Origin": "https://evil.example"]))
        #expect(get.headers["Access-Control-Allow-Origin"] == nil)
        let options = router.respond(to: HTTPRequest(method: .OPTIONS, path: "/health", headers: ["Origin": "https://x"]))
        #expect(options.status == 405)
    }

    @Test("a body that is not application/json gives 415", arguments: [
        ("text/plain", "{}", 415), ("application/json; charset=utf-8", "{}", 200), ("Application/JSON", "{}", 200),
        (nil, "{}", 415), (nil, "", 200), ("application/jsonx", "{}", 415), (" \tapplication/json \t; x=1", "{}", 200),
        ("application\u{0F}json", "{}", 415), ("APPLİCATİON/JSON", "{}", 415), ("application/json\u{0}", "{}", 415),
        ("", "{}", 415), (";application/json", "{}", 415), ("application/ json", "{}", 415),
    ] as [(String?, String, Int)])
    func unsupportedMediaType(contentType: String?, body: String, status: Int) throws {
        var headers = HTTPHeaders()
        if let contentType { headers.add("Content-Type", contentType) }
        let response = router.respond(
            to: HTTPRequest(method: .POST, path: "/v1/echo", headers: headers, body: Array(body.utf8))
        )
        #expect(response.status == status)
        if status == 415 { #expect(try json(response)["type"] as? String == "unsupported_media_type") }
    }

    @Test("requiresJSONBody: false accepts any content type")
    func rawBody() {
        let response = router.respond(
            to: HTTPRequest(method: .POST, path: "/v1/raw", headers: ["Content-Type": "text/plain"], body: [1, 2])
        )
        #expect(response.status == 200)
    }

    @Test("a thrown HTTPError renders through the mount's renderer with its headers")
    func httpError() throws {
        let response = router.respond(to: HTTPRequest(method: .GET, path: "/v1/teapot"))
        #expect(response.status == 418)
        #expect(response.headers["X-Extra"] == "1")
        let body = try json(response)
        #expect(body["type"] as? String == "teapot")
        #expect(body["face"] as? String == "flat")
    }

    @Test("any other error gives a generic 500 that leaks nothing", arguments: ["/v1/boom", "/boom"])
    func internalError(path: String) throws {
        let response = router.respond(to: HTTPRequest(method: .GET, path: path))
        #expect(response.status == 500)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("internal_error"))
        #expect(!text.contains("hunter2"))
        #expect(!text.contains("Secret"))
    }

    @Test("every response carries the request's X-Request-Id, and ids are unique")
    func requestIDs() {
        var seen = Set<String>()
        for path in ["/health", "/nothing", "/v1/boom", "/v1/teapot"] {
            let request = HTTPRequest(method: .GET, path: path)
            #expect(request.id.count == 32)
            #expect(request.id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            let response = router.respond(to: request)
            #expect(response.headers["X-Request-Id"] == request.id)
            seen.insert(request.id)
        }
        for _ in 0..<1000 { seen.insert(HTTPRequest.makeID()) }
        #expect(seen.count == 1004)
    }

    @Test("ids made on many threads at once are unique, and consecutive ones look unrelated (the count does not show)")
    func requestIDsConcurrently() {
        let made = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let ids = (0..<5000).map { _ in HTTPRequest.makeID() }
            made.withLock { $0 += ids }
        }
        let all = made.withLock { $0 }
        #expect(all.count == 40_000 && Set(all).count == 40_000)
        let consecutive = (0..<1000).map { _ in HTTPRequest.makeID() }
        // Eight hex digits of a counter (or a timestamp) would repeat across consecutive ids; keyed hash outputs do not.
        #expect(Set(consecutive.map { $0.prefix(8) }).count > 990 && Set(consecutive.map { $0.suffix(8) }).count > 990)
        #expect(Set(consecutive.joined()) == Set("0123456789abcdef"), "every hex digit occurs")
    }

    @Test("transport rejections render in the mount's shape")
    func transportError() throws {
        let request = HTTPRequest(method: .POST, path: "/v1/echo", headers: ["Origin": "https://a.example"])
        let response = router.respond(to: .payloadTooLarge(), for: request)
        #expect(response.status == 413)
        #expect(try json(response)["type"] as? String == "payload_too_large")
        #expect(response.headers["X-Request-Id"] == request.id)
        #expect(response.headers["Access-Control-Allow-Origin"] == "https://a.example")
    }
}
