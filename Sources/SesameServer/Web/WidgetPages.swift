import Foundation
import SesameCore
import SesameHTTP

/// The web widget's files and the hand-off's way back (spec §2.8, §2.9): `/sdk.js` (`<botshield-verify>`), the
/// inline-passkey frame at `/frame/inline-passkey`, and `/verify/return`, which sends a person from a finished hand-off
/// to the partner's `return_url`.
enum WidgetPages {
    static func add(to router: inout Router, sesame: Sesame) {
        // Partner pages of any origin load the widget (a classic script; CORS lets them use `crossorigin` too).
        router.add(.GET, "/sdk.js", corsAnyOrigin: true) { request in try WebRoutes.file(WidgetAssets.widget, request, crossOrigin: true) }
        router.add(.GET, "/frame/inline-passkey.js") { request in try WebRoutes.file(WidgetAssets.frameScript, request) }
        router.add(.GET, "/frame/inline-passkey.css") { request in try WebRoutes.file(WidgetAssets.frameStyle, request) }
        // The frame may be framed by the site key's origins only; the request ID stays in the fragment, so the server
        // (and its log) never sees it. An unknown or revoked key gets a frame nobody may embed.
        router.add(.GET, "/frame/inline-passkey") { request in
            let origins = try PageLookups.call { () throws(SesameError) in
                try sesame.widget.frameAncestors(siteKey: request.query["site_key"] ?? "")
            }
            return try framePage(origins: origins)
        }
        // After the hand-off page finished a request: 303 to the partner's return_url (as registered, nothing appended),
        // or back to the page while the request is pending or has none.
        router.add(.GET, "/verify/return") { request in
            let requestID = request.query["request_id"] ?? ""
            guard VerificationService.isRequestID(requestID) else {
                throw HTTPError.notFound(code: "not_found", message: "No such verification request.")
            }
            let target = try PageLookups.call { () throws(SesameError) in try sesame.handOff.returnURL(requestID: requestID) }
            var headers = WebRoutes.securityHeaders
            headers.set("Location", target ?? "/verify?request_id=\(requestID)")
            headers.set("Cache-Control", "no-store")
            headers.set("Content-Type", "text/plain; charset=utf-8")
            var response = HTTPResponse(status: 303, headers: headers, body: Array("See Other".utf8))
            response.correlation = sesame.inline.logCorrelation(requestID: requestID)
            return response
        }
    }

    /// The frame page with `frame-ancestors` set to `origins` (canonical origins, so safe in a header and an attribute).
    static func framePage(origins: [String]) throws(HTTPError) -> HTTPResponse {
        guard let asset = WidgetAssets.framePage else {
            throw HTTPError.notFound(code: "asset_missing", message: "This installation of Sesame lacks its web files (SesameServer resources).")
        }
        let list = origins.joined(separator: " ")
        var headers = WebRoutes.securityHeaders
        headers.set("Content-Type", asset.contentType)
        headers.set("Cache-Control", "no-store")
        headers.set("Content-Security-Policy", WebRoutes.pagePolicy.replacingOccurrences(
            of: "frame-ancestors 'none'", with: "frame-ancestors " + (origins.isEmpty ? "'none'" : list)))
        let body = String(decoding: asset.bytes, as: UTF8.self).replacingOccurrences(of: "{{origins}}", with: list)
        return HTTPResponse(status: 200, headers: headers, body: Array(body.utf8))
    }
}

/// Domain errors of the web pages' lookups: a store outage is 503, anything else 500 (these calls take no input that
/// can be refused).
enum PageLookups {
    static func call<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch { throw error.code == .unavailable ? HTTPError.serviceUnavailable() : HTTPError.internalError() }
    }
}

/// The widget's files, loaded once per process.
enum WidgetAssets {
    /// `<botshield-verify>`, a classic script.
    static let widget = WebAsset(resource: "widget/sdk.js", servedAt: "/sdk.js", contentType: WebAssets.javaScript)
    static let frameStyle = WebAsset(resource: "widget/frame.css", servedAt: "/frame/inline-passkey.css", contentType: "text/css; charset=utf-8")
    /// The frame's script, which imports the browser SDK by its versioned path.
    static let frameScript = WebAssets.sdk.flatMap {
        WebAsset(resource: "widget/frame.js", servedAt: "/frame/inline-passkey.js", contentType: WebAssets.javaScript, links: ["sdk": $0])
    }
    /// The frame page; `{{origins}}` is filled per request.
    static let framePage: WebAsset? = {
        guard let frameScript, let frameStyle else { return nil }
        return WebAsset(resource: "widget/frame.html", servedAt: "/frame/inline-passkey", contentType: "text/html; charset=utf-8",
                        links: ["frame.js": frameScript, "frame.css": frameStyle])
    }()
}
