import Foundation
import SesameHTTP
import Testing

/// Session cookies a browser keeps: `SameSite=None` needs `Secure`, which plain http cannot carry.
@Suite struct CookieTests {
    /// One `Set-Cookie` line split into its name, value and attributes (lowercased names, as browsers compare them).
    struct SetCookie {
        let name: String
        let value: String
        let attributes: [String: String]

        init(_ line: String) {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            let pair = parts[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            name = String(pair[0])
            value = pair.count > 1 ? String(pair[1]) : ""
            var attributes: [String: String] = [:]
            for part in parts.dropFirst() {
                let attribute = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                attributes[attribute[0].lowercased()] = attribute.count > 1 ? String(attribute[1]) : ""
            }
            self.attributes = attributes
        }

        var isSecure: Bool { attributes["secure"] != nil }
        var sameSite: String? { attributes["samesite"] }
    }

    static func cookies(_ reply: Reply) -> [SetCookie] { reply.response.headers.values("Set-Cookie").map(SetCookie.init) }

    static func signIn(_ harness: Harness, headers: [(String, String)] = []) -> Reply {
        harness.send(.POST, "/v1/account/sessions/email", json: #"{"email":"alice@example.org","password":"password123"}"#, headers: headers)
    }

    @Test("plain http: the main cookie is SameSite=Lax without Secure, the legacy one names no SameSite; both sign the browser in")
    func plainHTTP() throws {
        let harness = try Harness()
        _ = try harness.signUpAndIn()
        let reply = Self.signIn(harness, headers: [("Origin", "https://shop.example")])
        #expect(reply.status == 201, "\(reply.text)")
        let cookies = Self.cookies(reply)
        let name = "a_session_\(harness.projectID)"
        #expect(cookies.map(\.name) == [name, name + "_legacy"])
        for cookie in cookies {
            #expect(!cookie.isSecure && cookie.attributes["httponly"] != nil && cookie.attributes["path"] == "/", "\(cookie)")
            #expect(cookie.sameSite?.lowercased() != "none", "a SameSite=None cookie without Secure is dropped by browsers")
        }
        #expect(cookies[0].sameSite == "Lax" && cookies[1].sameSite == nil)
        #expect(cookies[0].value.hasPrefix("sesame_ss_") && cookies[0].value == cookies[1].value)
        // What the browser then sends back is a session.
        for cookie in cookies {
            let me = harness.send(.GET, "/v1/account", headers: [("Cookie", "\(cookie.name)=\(cookie.value)"), ("Origin", "https://shop.example")])
            #expect(me.status == 200 && me.object["email"] as? String == "alice@example.org", "\(cookie.name): \(me.text)")
        }
        // X-Fallback-Cookies keeps carrying the same secret, and works as a request header.
        let fallback = try #require(reply.response.headers["X-Fallback-Cookies"])
        #expect(fallback == #"{"\#(name)":"\#(cookies[0].value)"}"#)
        #expect(harness.send(.GET, "/v1/account", headers: [("X-Fallback-Cookies", fallback)]).status == 200)
    }

    @Test("behind HTTPS (X-Forwarded-Proto: https, any case, first of a chain) both cookies are Secure and the main one SameSite=None",
          arguments: ["https", "HTTPS", "https, http", " https "])
    func forwardedHTTPS(proto: String) throws {
        let harness = try Harness()
        _ = try harness.signUpAndIn()
        let cookies = Self.cookies(Self.signIn(harness, headers: [("X-Forwarded-Proto", proto)]))
        #expect(cookies.count == 2)
        #expect(cookies.allSatisfy { $0.isSecure }, "\(cookies.map(\.attributes))")
        #expect(cookies.first?.sameSite == "None" && cookies.last?.sameSite == nil)
    }

    @Test("anything but https forwarded is plain http", arguments: ["http", "http, https", "", "wss", "httpsx"])
    func forwardedOther(proto: String) throws {
        let harness = try Harness()
        _ = try harness.signUpAndIn()
        let cookies = Self.cookies(Self.signIn(harness, headers: [("X-Forwarded-Proto", proto)]))
        #expect(cookies.count == 2 && !cookies.contains { $0.isSecure })
        #expect(cookies.first?.sameSite == "Lax")
    }

    @Test("a passkey token's session gets the same cookies; signing out clears them with matching attributes")
    func exchangeAndSignOut() throws {
        let harness = try Harness()
        _ = try harness.signUpAndIn()
        for (proto, secure) in [("http", false), ("https", true)] {
            let minted = try #require(harness.send(.POST, "/v1/users/alice/tokens", json: "{}", headers: [("X-Appwrite-Key", harness.key)])
                .object["secret"] as? String)
            let exchanged = harness.send(.POST, "/v1/account/sessions/token", json: #"{"userId":"alice","secret":"\#(minted)"}"#,
                                         headers: [("X-Forwarded-Proto", proto)])
            #expect(exchanged.status == 201, "\(exchanged.text)")
            let set = Self.cookies(exchanged)
            #expect(set.count == 2 && set.allSatisfy { $0.isSecure == secure } && set[0].sameSite == (secure ? "None" : "Lax"))
            let ended = harness.send(.DELETE, "/v1/account/sessions/current", headers: [("X-Appwrite-Session", set[0].value),
                                                                                       ("X-Forwarded-Proto", proto)])
            #expect(ended.status == 204)
            let cleared = Self.cookies(ended)
            #expect(cleared.count == 2 && cleared.allSatisfy { $0.value.isEmpty && $0.attributes["max-age"] == "0" && $0.isSecure == secure })
            #expect(cleared[0].sameSite == (secure ? "None" : "Lax") && cleared[1].sameSite == nil)
        }
    }
}
