import SesameCore
import SesameHTTP

/// The web face: the demo page at `/`, the hosted hand-off page at `/verify`, and the files they and other pages load
/// (the browser SDK at `/sdk/sesame.js`).
///
/// Pages get a strict Content Security Policy (scripts and styles from this origin only, never inline), no caching
/// (they show who is signed in), no referrer and no framing. Scripts and styles are cached for good under their
/// versioned path (`?v=<hash>`, which pages use) and revalidated by entity tag under any other.
enum WebRoutes {
    /// The Content Security Policy of every page.
    static let pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func add(to router: inout Router, inline: InlineConfiguration) {
        router.add(.GET, "/") { _ in try page(WebAssets.demoPage) }
        // The hosted setup page (`setup_url` of inline verification): sign in with a passkey or create an ID, add a
        // passkey; it calls /app/api/* (BotShieldAPI's SetupRoutes).
        router.add(.GET, "/app/account/passkey") { _ in try page(WebAssets.setupPage) }
        router.add(.GET, "/app/account/setup.js") { request in try file(WebAssets.setupScript, request) }
        // Pages of any origin may import the SDK (module scripts are fetched with CORS).
        router.add(.GET, "/sdk/sesame.js", corsAnyOrigin: true) { request in try file(WebAssets.sdk, request, crossOrigin: true) }
        router.add(.GET, "/demo/demo.js") { request in try file(WebAssets.demoScript, request) }
        router.add(.GET, "/demo/demo.css") { request in try file(WebAssets.demoStyle, request) }
        // The hosted hand-off page (`url` and `web_url` of inline verification): the request ID is in its URL, so the
        // page is never cached and sends no referrer; its script reads the ID from the address, the server logs only
        // the route.
        router.add(.GET, "/verify") { _ in try page(WebAssets.verifyPage) }
        router.add(.GET, "/verify/verify.js") { request in try file(WebAssets.verifyScript, request) }
        // The QR code of a request's hand-off page (`qr_code_url`): the page's URL, encoded without a lookup, so it
        // tells nothing about the request; a name that is not `<request ID>.svg` is 404.
        router.add(.GET, "/operations/qr/:file", corsAnyOrigin: true) { request in
            let file = request.pathParameters["file"] ?? ""
            let requestID = String(file.dropLast(4))
            guard file.hasSuffix(".svg"), VerificationService.isRequestID(requestID),
                  let code = QRCode(bytes: Array(inline.handOffURL(requestID: requestID).utf8)) else {
                throw HTTPError.notFound(code: "not_found", message: "No such QR code.")
            }
            var headers = securityHeaders
            headers.set("Content-Type", "image/svg+xml")
            headers.set("Cache-Control", "no-store")
            headers.set("Content-Security-Policy", "default-src 'none'")
            headers.set("Cross-Origin-Resource-Policy", "cross-origin")
            return HTTPResponse(status: 200, headers: headers, body: Array(code.svg.utf8))
        }
    }

    /// A page: never cached, never framed, no referrer, scripts only from this origin.
    static func page(_ asset: WebAsset?) throws(HTTPError) -> HTTPResponse {
        let asset = try installed(asset)
        var headers = securityHeaders
        headers.set("Content-Type", asset.contentType)
        headers.set("Cache-Control", "no-store")
        headers.set("Content-Security-Policy", pagePolicy)
        headers.set("X-Frame-Options", "DENY")
        headers.set("Cross-Origin-Opener-Policy", "same-origin")
        return HTTPResponse(status: 200, headers: headers, body: asset.bytes)
    }

    /// A script or style: immutable under its versioned path, revalidated (304 on a matching `If-None-Match`) otherwise.
    static func file(_ asset: WebAsset?, _ request: HTTPRequest, crossOrigin: Bool = false) throws(HTTPError) -> HTTPResponse {
        let asset = try installed(asset)
        var headers = securityHeaders
        headers.set("Content-Type", asset.contentType)
        headers.set("ETag", asset.entityTag)
        headers.set("Cache-Control", request.query["v"] == asset.version ? "public, max-age=31536000, immutable" : "no-cache")
        headers.set("Cross-Origin-Resource-Policy", crossOrigin ? "cross-origin" : "same-origin")
        if asset.matches(ifNoneMatch: request.headers["If-None-Match"]) { return HTTPResponse(status: 304, headers: headers) }
        return HTTPResponse(status: 200, headers: headers, body: asset.bytes)
    }

    static var securityHeaders: HTTPHeaders {
        ["Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"]
    }

    /// The asset, or 404 `asset_missing` when this installation lacks the SesameServer resources.
    private static func installed(_ asset: WebAsset?) throws(HTTPError) -> WebAsset {
        guard let asset else {
            throw HTTPError.notFound(code: "asset_missing", message: "This installation of Sesame lacks its web files (SesameServer resources).")
        }
        return asset
    }
}
