import Foundation
import SesameCore
import SesameHTTP
import SesameStore

/// Routes every deployment serves: health, metrics, the OpenAPI document and the well-known files.
enum PlatformRoutes {
    static func add(to router: inout Router, sesame: Sesame, metrics: Metrics) {
        router.add(.GET, "/health", cors: true) { _ in
            do {
                try sesame.store.healthCheck()
                return .json(["status": "pass", "database": "pass"])
            } catch {
                return .json(["status": "fail", "database": "fail"], status: 503)
            }
        }
        router.add(.GET, "/metrics") { _ in
            .text(metrics.exposition(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.add(.GET, "/openapi.json", cors: true) { _ in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: OpenAPIDocument.bytes)
        }
        let wellKnown: [(String, @Sendable (ProjectConfiguration) -> [UInt8])] = [
            ("/.well-known/apple-app-site-association", WellKnownFiles.appleAppSiteAssociation),
            ("/.well-known/assetlinks.json", WellKnownFiles.assetLinks),
            ("/.well-known/webauthn", WellKnownFiles.relatedOrigins),
        ]
        for (path, file) in wellKnown {
            router.add(.GET, path, cors: true) { request in
                let host = request.headers["Host"] ?? ""
                let project = try ManagementAPI.call { () throws(SesameError) in try sesame.projects.project(servingHost: host) }
                guard let project else { throw HTTPError.notFound(code: "not_found", message: "No project serves this host.") }
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=300"],
                                    body: file(project.configuration))
            }
        }
    }
}

/// The OpenAPI 3.1 document of every route, kept in the repository at `Sources/SesameServer/openapi.json`.
enum OpenAPIDocument {
    static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let data = try? Data(contentsOf: url) else { return Array(#"{"openapi":"3.1.0"}"#.utf8) }
        return Array(data)
    }()
}
