import Foundation
import SesameCore
import SesameHTTP
import SesameStore
import Synchronization

/// Routes every deployment serves: health, metrics, the OpenAPI document and the well-known files.
enum PlatformRoutes {
    static func add(to router: inout Router, sesame: Sesame, metrics: Metrics) {
        let json: HTTPHeaders = ["Content-Type": "application/json"]
        let health = HealthCheck(store: sesame.store)
        router.add(.GET, "/health", cors: true) { _ in
            health.isHealthy()
                ? HTTPResponse(status: 200, headers: json, body: HealthCheck.pass)
                : HTTPResponse(status: 503, headers: json, body: HealthCheck.fail)
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
        ]
        for (path, file) in wellKnown {
            router.add(.GET, path, cors: true) { request in
                let host = request.headers["Host"] ?? ""
                let project = try ManagementAPI.call { () throws(SesameError) in try sesame.projects.project(servingHost: host) }
                guard let project else { throw HTTPError.notFound(code: "not_found", message: "No project serves this host.") }
                // Approved partner apps join the project's own platforms in the association files.
                var configuration = project.configuration
                configuration.platforms += try ManagementAPI.call { () throws(SesameError) in
                    try sesame.partners.approvedPlatforms(projectID: project.id)
                }
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Cache-Control": "max-age=300"],
                                    body: file(configuration))
            }
        }
    }
}

/// The database check behind `GET /health`, cached for one second so a flood of probes cannot load the database.
final class HealthCheck: Sendable {
    static let pass = Array(#"{"database":"pass","status":"pass"}"#.utf8)
    static let fail = Array(#"{"database":"fail","status":"fail"}"#.utf8)
    private static let lifetime = Duration.seconds(1)
    private let store: Store
    private let last = Mutex<(at: ContinuousClock.Instant, healthy: Bool)?>(nil)

    init(store: Store) { self.store = store }

    func isHealthy() -> Bool {
        let now = ContinuousClock.now
        if let cached = last.withLock({ $0 }), now - cached.at < Self.lifetime { return cached.healthy }
        let healthy = (try? store.healthCheck()) != nil
        last.withLock { $0 = (now, healthy) }
        return healthy
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
