import Foundation
import SesameCore
import SesameCrypto
import SesameHTTP
import SesameStore
import Testing
@testable import SesameServer

/// The web face in process: the demo page's headers and links, and the versioned caching of scripts and styles.
@Suite struct WebRoutesTests {
    let application: SesameApplication

    init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-web-\(UUID().uuidString)")
        application = SesameApplication(sesame: Sesame(store: try Store.open("sqlite:\(folder.path)/db"), masterKeys: MasterKeyring(current: .generate())),
                                        log: nil)
    }

    func get(_ path: String, query: [String: String] = [:], headers: [(String, String)] = [], method: HTTPMethod = .GET) -> HTTPResponse {
        application.respond(to: HTTPRequest(method: method, path: path, query: query, headers: HTTPHeaders(headers), remoteAddress: "127.0.0.1"))
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// The `src` and `href` values of the page, in order.
    static func links(_ page: String) -> [String] {
        page.matches(of: /(?:src|href)="([^"]+)"/).map { String($0.output.1) }
    }

    @Test("GET / is the demo page: no-store, no referrer, a strict CSP without inline scripts or styles, no framing")
    func page() throws {
        let response = get("/")
        #expect(response.status == 200)
        let headers = response.headers
        #expect(headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(headers["Cache-Control"] == "no-store" && headers["Referrer-Policy"] == "no-referrer")
        #expect(headers["X-Content-Type-Options"] == "nosniff" && headers["X-Frame-Options"] == "DENY")
        let policy = try #require(headers["Content-Security-Policy"])
        let directives = Dictionary(uniqueKeysWithValues: policy.split(separator: ";").map { part -> (String, String) in
            let words = part.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            return (String(words[0]), words.count > 1 ? String(words[1]) : "")
        })
        #expect(directives["default-src"] == "'none'" && directives["script-src"] == "'self'" && directives["style-src"] == "'self'")
        #expect(directives["frame-ancestors"] == "'none'" && directives["base-uri"] == "'none'" && directives["connect-src"] == "'self'")
        #expect(!policy.contains("unsafe") && !policy.contains("*"))

        let page = Self.text(response)
        for id in ["email", "password", "signup", "signin", "signout", "status", "passkeys"] {
            #expect(page.components(separatedBy: #"id="\#(id)""#).count == 2, "exactly one #\(id)")
        }
        // Nothing inline: every script has a src and no body, no style attributes or elements, no event handlers.
        let scripts = page.components(separatedBy: "<script").dropFirst()
        #expect(scripts.count == 1 && scripts.allSatisfy { $0.contains(" src=\"") && $0.contains("></script>") })
        #expect(!page.contains("style=") && !page.contains("<style") && !page.contains(" onclick"))
        #expect(!page.contains("{{"), "every placeholder is replaced")
    }

    @Test("the page links its script and style by versioned paths that serve them, cacheable for good; the script imports the SDK so too")
    func versionedLinks() throws {
        let links = Self.links(Self.text(get("/")))
        #expect(links.count == 2, "\(links)")
        var served: [String: String] = [:]
        for link in links {
            let url = try #require(URLComponents(string: link))
            let version = try #require(url.queryItems?.first { $0.name == "v" }?.value)
            let response = get(url.path, query: ["v": version])
            #expect(response.status == 200, "\(link)")
            #expect(response.headers["Cache-Control"] == "public, max-age=31536000, immutable", "\(link)")
            #expect(response.headers["ETag"] == "\"\(version)\"")
            // The version is the file's hash: a changed file gets a new URL.
            #expect(version == Digest.sha256(response.body).prefix(8).map { String(format: "%02x", $0) }.joined())
            served[url.path] = Self.text(response)
        }
        #expect(Set(served.keys) == ["/demo/demo.js", "/demo/demo.css"])
        let script = try #require(served["/demo/demo.js"])
        let sdk = get("/sdk/sesame.js")
        let sdkVersion = try #require(sdk.headers["ETag"]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(script.contains(#"from "/sdk/sesame.js?v=\#(sdkVersion)";"#))
        #expect(!script.contains("{{"))
    }

    @Test("/sdk/sesame.js: text/javascript, revalidated by ETag (304) unless the current version is named, CORS for any origin")
    func sdk() throws {
        let plain = get("/sdk/sesame.js")
        #expect(plain.status == 200 && plain.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(plain.headers["Cache-Control"] == "no-cache" && plain.headers["X-Content-Type-Options"] == "nosniff")
        #expect(plain.headers["Cross-Origin-Resource-Policy"] == "cross-origin")
        #expect(Self.text(plain).contains("export class Sesame"))
        let tag = try #require(plain.headers["ETag"])
        let version = tag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(version.count == 16 && version.allSatisfy(\.isHexDigit))

        #expect(get("/sdk/sesame.js", query: ["v": version]).headers["Cache-Control"] == "public, max-age=31536000, immutable")
        for stale in ["0000000000000000", "", version.uppercased(), version + "0"] {
            let response = get("/sdk/sesame.js", query: ["v": stale])
            #expect(response.status == 200 && response.headers["Cache-Control"] == "no-cache", "v=\(stale)")
        }
        for matching in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
            let response = get("/sdk/sesame.js", headers: [("If-None-Match", matching)])
            #expect(response.status == 304 && response.body.isEmpty && response.headers["ETag"] == tag, "If-None-Match: \(matching)")
            #expect(response.headers["Content-Type"] != nil)
        }
        for other in ["\"other\"", version, "W/\"\(version)0\"", ""] {
            #expect(get("/sdk/sesame.js", headers: [("If-None-Match", other)]).status == 200, "If-None-Match: \(other)")
        }
        // Any page may import the module (module scripts are fetched with CORS), without credentials.
        let crossOrigin = get("/sdk/sesame.js", headers: [("Origin", "https://partner.example")])
        #expect(crossOrigin.headers["Access-Control-Allow-Origin"] == "*" && crossOrigin.headers["Access-Control-Allow-Credentials"] == nil)
        // The demo's own files are not for other sites.
        #expect(get("/demo/demo.js").headers["Cross-Origin-Resource-Policy"] == "same-origin")
    }

    @Test("GET /verify is the hand-off page: no-store, no referrer, frame-ancestors 'none', the request ID nowhere in the answer")
    func handOffPage() throws {
        let requestID = "req_0123456789abcdef0123456789abcdef"
        let response = get("/verify", query: ["request_id": requestID])
        #expect(response.status == 200 && response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["Cache-Control"] == "no-store" && response.headers["Referrer-Policy"] == "no-referrer")
        #expect(response.headers["Content-Security-Policy"] == WebRoutes.pagePolicy && WebRoutes.pagePolicy.contains("frame-ancestors 'none'"))
        let page = Self.text(response)
        #expect(!page.contains(requestID) && !page.contains("{{"))
        for id in ["state", "confirm", "decline", "partner", "scope"] { #expect(page.contains(#"id="\#(id)""#), "#\(id)") }
        let links = Self.links(page)
        #expect(links.count == 2 && links.contains { $0.hasPrefix("/verify/verify.js?v=") } && links.contains { $0.hasPrefix("/demo/demo.css?v=") })
        for link in links {
            let url = try #require(URLComponents(string: link))
            let file = get(url.path, query: ["v": url.queryItems?.first?.value ?? ""])
            #expect(file.status == 200 && file.headers["Cache-Control"] == "public, max-age=31536000, immutable", "\(link)")
        }
        #expect(Self.text(get("/verify/verify.js")).contains(#"from "/sdk/sesame.js?v="#))
    }

    @Test("qr_code_url: an SVG for any well-formed request ID (no lookup), no-store, no referrer; other names are 404 in the partner shape")
    func qrCode() throws {
        let id = "req_0123456789abcdef0123456789abcdef"
        let response = get("/operations/qr/\(id).svg")
        #expect(response.status == 200 && response.headers["Content-Type"] == "image/svg+xml")
        #expect(response.headers["Cache-Control"] == "no-store" && response.headers["Referrer-Policy"] == "no-referrer")
        #expect(response.headers["Content-Security-Policy"] == "default-src 'none'")
        #expect(Self.text(response).hasPrefix("<svg ") && !Self.text(response).contains(id), "the ID is encoded, not written out")
        for name in ["req_x.svg", "req_0123456789abcdef0123456789abcdef.png", "req_0123456789ABCDEF0123456789ABCDEF.svg",
                     "0123456789abcdef0123456789abcdef.svg", "req_0123456789abcdef0123456789abcdefsvg", ".svg"] {
            let refused = get("/operations/qr/\(name)")
            let error = (try? JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])?["error"] as? [String: Any]
            #expect(refused.status == 404 && error?["statusCode"] as? Int == 404 && error?["code"] as? String == "not_found", "\(name)")
        }
    }

    @Test("setup_url's page (/app/account/passkey) has the pages' headers, links its own script by version, and no inline script")
    func setupPage() throws {
        let setup = get("/app/account/passkey"), demo = get("/")
        #expect(setup.status == 200 && setup.body != demo.body)
        for name in ["Content-Type", "Cache-Control", "Content-Security-Policy", "Referrer-Policy", "X-Frame-Options"] {
            #expect(setup.headers[name] != nil && setup.headers[name] == demo.headers[name], "\(name)")
        }
        let page = Self.text(setup)
        #expect(!page.contains("<script>") && !page.contains(" style=") && !page.contains("onclick"))
        let script = try #require(Self.links(page).first { $0.hasPrefix("/app/account/setup.js?v=") })
        let path = String(script.prefix { $0 != "?" }), version = String(script.split(separator: "=").last ?? "")
        let served = get(path, query: ["v": version])
        #expect(served.status == 200 && served.headers["Cache-Control"] == "public, max-age=31536000, immutable")
        #expect(Self.text(served).contains("/sdk/sesame.js?v="), "the script imports the SDK by its version")
    }

    @Test("HEAD has no body; other methods are 405; unknown files are 404 in the platform error shape")
    func methods() throws {
        let head = get("/", method: .HEAD)
        #expect(head.status == 200 && head.body.isEmpty)
        let post = get("/sdk/sesame.js", method: .POST)
        #expect(post.status == 405 && post.headers["Allow"]?.contains("GET") == true)
        let missing = get("/sdk/other.js")
        #expect(missing.status == 404 && Self.text(missing).contains(#""error""#))
        #expect(get("/demo/").status == 404)
    }
}
