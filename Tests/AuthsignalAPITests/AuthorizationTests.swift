import Foundation
import SesameHTTP
import Testing
@testable import AuthsignalAPI

/// The tenant-Basic encodings of the three client SDKs, and what is refused (spec §1.5).
@Suite struct AuthorizationTests {
    static func request(_ authorization: String) -> HTTPRequest {
        HTTPRequest(method: .POST, path: "/authsignal/v1/client/challenge", headers: HTTPHeaders([("Authorization", authorization)]))
    }

    @Test("Basic decodes standard base64 and base64url, with or without padding, and the web's colon-less form")
    func decodes() {
        let text = "tenant-1:"
        let standard = Data(text.utf8).base64EncodedString()  // dGVuYW50LTE6
        #expect(Authorization.basic(Self.request("Basic " + standard)) == text)
        #expect(Authorization.basic(Self.request("Basic " + standard.replacingOccurrences(of: "=", with: ""))) == text)
        // Bytes whose base64 has '+' and '/': the URL alphabet must read the same.
        let binary = "tenant>?>?:"
        let plus = Data(binary.utf8).base64EncodedString()
        #expect(plus.contains("+") || plus.contains("/"))
        let url = plus.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(Authorization.basic(Self.request("Basic " + url)) == binary)
        #expect(Authorization.basic(Self.request("basic " + plus)) == binary)
    }

    @Test("Basic refuses mixed alphabets, wrong padding, non-base64, an empty value and oversized headers",
          arguments: ["Basic ab-+cd", "Basic YQ=", "Basic Y===", "Basic !!!!", "Basic ", "Basic", "Bearer dGVuYW50", "Basic " + String(repeating: "QUFB", count: 1100)])
    func refuses(_ header: String) {
        #expect(Authorization.basic(Self.request(header)) == nil)
    }

    @Test("Bearer reads the token after the scheme, case-insensitively, and nothing else")
    func bearer() {
        #expect(Authorization.bearer(Self.request("Bearer a.b.c")) == "a.b.c")
        #expect(Authorization.bearer(Self.request("bearer   a.b.c ")) == "a.b.c")
        #expect(Authorization.bearer(Self.request("Bearer ")) == nil)
        #expect(Authorization.bearer(Self.request("Basic a.b.c")) == nil)
        #expect(Authorization.bearer(Self.request("BEARER a.b.c")) == "a.b.c")
        #expect(Authorization.bearer(Self.request("Bearer \ta.b.c\t")) == "a.b.c")
        // Only letters fold: a byte that is a space when its 0x20 bit is set is not a space.
        #expect(Authorization.bearer(Self.request("Bearer\u{0}a.b.c")) == nil)
        #expect(Authorization.bearer(Self.request("Bearer@a.b.c")) == nil)
        #expect(Authorization.bearer(Self.request("Bear")) == nil)
        #expect(Authorization.basic(Self.request("BASIC \t" + Data("tenant-1:".utf8).base64EncodedString())) == "tenant-1:")
    }
}
