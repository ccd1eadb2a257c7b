import Foundation
import SesameCrypto

/// One file of the web face (the browser SDK, the demo page and its script and style), read from the SesameServer
/// target's resources (`Sources/SesameServer/Assets`) once, with the hash that versions it in URLs.
struct WebAsset: Sendable {
    /// The path it is served at, such as `/sdk/sesame.js`.
    let path: String
    /// Its `Content-Type`.
    let contentType: String
    /// Its bytes, as served.
    let bytes: [UInt8]
    /// The first 16 hex digits of the SHA-256 of ``bytes``: changes whenever the file does.
    let version: String

    /// The URL path that names this version: `path?v=version`, which may be cached for good.
    var versionedPath: String { "\(path)?v=\(version)" }
    /// The strong entity tag of this version.
    var entityTag: String { "\"\(version)\"" }

    /// Reads `resource` (a path under `Assets/`) and replaces each `{{key}}` of `links` by the versioned path of its
    /// asset, so a page names exactly the versions this server serves; nil when the resource is not installed.
    init?(resource: String, servedAt path: String, contentType: String, links: [String: WebAsset] = [:]) {
        let file = URL(fileURLWithPath: resource)
        guard let url = Bundle.module.url(forResource: file.deletingPathExtension().lastPathComponent, withExtension: file.pathExtension,
                                          subdirectory: "Assets/" + file.deletingLastPathComponent().relativePath),
              var text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
        for (key, asset) in links { text = text.replacingOccurrences(of: "{{\(key)}}", with: asset.versionedPath) }
        self.path = path
        self.contentType = contentType
        self.bytes = Array(text.utf8)
        self.version = Digest.sha256(bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether an `If-None-Match` header names this version (a list, weak tags and `*` included).
    func matches(ifNoneMatch header: String?) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == entityTag || tag == "W/" + entityTag
        }
    }
}

/// The web face's files, loaded once per process.
enum WebAssets {
    static let javaScript = "text/javascript; charset=utf-8"

    /// The browser SDK, an ES module.
    static let sdk = WebAsset(resource: "sdk/sesame.js", servedAt: "/sdk/sesame.js", contentType: javaScript)
    /// The demo page's style.
    static let demoStyle = WebAsset(resource: "demo/demo.css", servedAt: "/demo/demo.css", contentType: "text/css; charset=utf-8")
    /// The demo page's script, which imports the SDK by its versioned path.
    static let demoScript = sdk.flatMap {
        WebAsset(resource: "demo/demo.js", servedAt: "/demo/demo.js", contentType: javaScript, links: ["sdk": $0])
    }
    /// The hosted setup page's script.
    static let setupScript = sdk.flatMap {
        WebAsset(resource: "setup/setup.js", servedAt: "/app/account/setup.js", contentType: javaScript, links: ["sdk": $0])
    }
    /// The hosted setup page at `/app/account/passkey` (shares the demo's style).
    static let setupPage: WebAsset? = {
        guard let setupScript, let demoStyle else { return nil }
        return WebAsset(resource: "setup/index.html", servedAt: "/app/account/passkey", contentType: "text/html; charset=utf-8",
                        links: ["setup.js": setupScript, "demo.css": demoStyle])
    }()
    /// The hosted hand-off page's script.
    static let verifyScript = sdk.flatMap {
        WebAsset(resource: "verify/verify.js", servedAt: "/verify/verify.js", contentType: javaScript, links: ["sdk": $0])
    }
    /// The hosted hand-off page at `/verify` (shares the demo's style).
    static let verifyPage: WebAsset? = {
        guard let verifyScript, let demoStyle else { return nil }
        return WebAsset(resource: "verify/index.html", servedAt: "/verify", contentType: "text/html; charset=utf-8",
                        links: ["verify.js": verifyScript, "demo.css": demoStyle])
    }()
    /// The demo page at `/`, which links its script and style by their versioned paths.
    static let demoPage: WebAsset? = {
        guard let demoScript, let demoStyle else { return nil }
        return WebAsset(resource: "demo/index.html", servedAt: "/", contentType: "text/html; charset=utf-8",
                        links: ["demo.js": demoScript, "demo.css": demoStyle])
    }()
}
