import Foundation
import SesameHTTP
import Testing

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test("looks names up without regard to case and keeps order")
    func lookup() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-Multi": "1"]
        headers.add("x-multi", "2")
        #expect(headers["content-type"] == "a")
        #expect(headers["X-MULTI"] == "1")
        #expect(headers.values("X-Multi") == ["1", "2"])
        #expect(headers.map(\.name) == ["Content-Type", "X-Multi", "x-multi"])
        headers.set("X-Multi", "3")
        #expect(headers.values("x-multi") == ["3"])
        #expect(headers.map(\.name) == ["Content-Type", "X-Multi"])
        headers.remove("CONTENT-TYPE")
        #expect(headers["Content-Type"] == nil)
        #expect(headers.count == 1)
    }
}

@Suite("HTTPResponse")
struct HTTPResponseTests {
    @Test("json sorts keys and does not escape slashes")
    func json() {
        let response = HTTPResponse.json(["b": "x/y", "a": "1"], status: 201)
        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"a":"1","b":"x/y"}"#)
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
    }

    @Test("noContent is a 204 not labelled JSON")
    func noContent() {
        let response = HTTPResponse.noContent()
        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        #expect(response.headers["Content-Type"] == "text/plain")
    }

    @Test("the default error shape escapes its strings")
    func defaultShape() throws {
        let error = HTTPError.badRequest(code: "x", message: "quote \" and \n newline")
        let response = DefaultErrorRenderer().render(error, for: HTTPRequest(method: .GET, path: "/"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: [String: String]])
        #expect(object["error"] == ["code": "x", "message": "quote \" and \n newline"])
        #expect(response.status == 400)
    }
}

@Suite("decodeJSONBody")
struct DecodeJSONBodyTests {
    struct Payload: Decodable, Equatable {
        var name: String
        var count: Int
    }

    private func request(_ body: String) -> HTTPRequest {
        HTTPRequest(method: .POST, path: "/", body: Array(body.utf8))
    }

    @Test("decodes a valid body")
    func valid() throws {
        #expect(try decodeJSONBody(Payload.self, from: request(#"{"name":"a","count":2}"#)) == Payload(name: "a", count: 2))
    }

    @Test("maps failures to 400 invalid_json without echoing the body", arguments: [
        "", "not json SECRET", #"{"name":"SECRET"}"#, #"{"name":"SECRET","count":"SECRET"}"#, "[1]",
    ])
    func invalid(body: String) throws {
        let error = try #require(throws: HTTPError.self) { try decodeJSONBody(Payload.self, from: request(body)) }
        #expect(error.status == 400)
        #expect(error.code == "invalid_json")
        #expect(!error.message.contains("SECRET"))
    }

    @Test("names the missing field")
    func missingField() throws {
        let error = try #require(throws: HTTPError.self) {
            try decodeJSONBody(Payload.self, from: request(#"{"name":"a"}"#))
        }
        #expect(error.message == "Missing field 'count'.")
    }
}

@Suite("HTTPRequest.authorizationCredentials")
struct AuthorizationCredentialsTests {
    static func request(_ authorization: String?) -> HTTPRequest {
        HTTPRequest(method: .GET, path: "/", headers: HTTPHeaders(authorization.map { [("Authorization", $0)] } ?? []))
    }

    @Test("the scheme in any case, then the credentials without the spaces and tabs around them")
    func reads() {
        #expect(Self.request("Bearer abc").authorizationCredentials(scheme: "bearer") == "abc")
        #expect(Self.request("bEaReR \t abc \t").authorizationCredentials(scheme: "bearer") == "abc")
        #expect(Self.request("Basic a b").authorizationCredentials(scheme: "basic") == "a b")
    }

    @Test("no header, another scheme, no space after the scheme, empty credentials or too long a header: nil")
    func refuses() {
        #expect(Self.request(nil).authorizationCredentials(scheme: "bearer") == nil)
        #expect(Self.request("Basic abc").authorizationCredentials(scheme: "bearer") == nil)
        #expect(Self.request("Bearerabc").authorizationCredentials(scheme: "bearer") == nil)
        #expect(Self.request("Bearer").authorizationCredentials(scheme: "bearer") == nil)
        #expect(Self.request("Bearer  \t ").authorizationCredentials(scheme: "bearer") == nil)
        #expect(Self.request("Bearer abc").authorizationCredentials(scheme: "bearer", maximumLength: 10) == "abc")
        #expect(Self.request("Bearer abcd").authorizationCredentials(scheme: "bearer", maximumLength: 10) == nil)
    }
}
