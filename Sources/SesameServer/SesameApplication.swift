import AppwriteAPI
import AuthsignalAPI
import BotShieldAPI
import Foundation
import SesameCore
import SesameHTTP

/// One Sesame server: the domain, its routes, metrics and request log, served over HTTP.
public final class SesameApplication: Sendable {
    public let sesame: Sesame
    public let metrics: Metrics
    /// Every route, for in-process tests without sockets.
    public let router: Router
    private let log: RequestLog?

    /// Assembles the routes over `sesame`; `log` nil turns request logging off.
    public init(sesame: Sesame, log: RequestLog? = RequestLog()) {
        self.sesame = sesame
        self.log = log
        let metrics = Metrics()
        self.metrics = metrics
        var router = Router()
        PlatformRoutes.add(to: &router, sesame: sesame, metrics: metrics)
        ManagementAPI.add(to: &router, sesame: sesame)
        AppwriteAPI.add(to: &router, sesame: sesame)
        BotShieldAPI.add(to: &router, sesame: sesame)
        AuthsignalAPI.add(to: &router, sesame: sesame)
        WebRoutes.add(to: &router, inline: sesame.inline)
        WidgetPages.add(to: &router, sesame: sesame)
        self.router = router
    }

    /// Records a finished request in the metrics and the log, with the ceremony it finished or refused, if any.
    public func observe(_ request: HTTPRequest, _ response: HTTPResponse, _ duration: Duration) {
        let route = response.route ?? "unmatched"
        metrics.recordRequest(route: route, method: request.method.rawValue, status: response.status, duration: duration)
        if let ceremony = response.ceremony { metrics.recordCeremony(ceremony) }
        log?.record(time: sesame.clock.now(), method: request.method.rawValue, route: route, status: response.status,
                    duration: duration, remoteAddress: request.remoteAddress, correlation: response.correlation,
                    reason: response.ceremony?.reason)
    }

    /// Answers `request` through the router and records it as the HTTP server does (in-process callers and tests).
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let started = ContinuousClock.now
        let response = OneRequest(router: router).respond(to: request)
        observe(request, response, ContinuousClock.now - started)
        return response
    }

    /// An HTTP server for this application.
    public func makeServer(configuration: HTTPServer.Configuration) -> HTTPServer {
        HTTPServer(configuration: configuration, responder: OneRequest(router: router), observer: { [self] request, response, duration in
            observe(request, response, duration)
        })
    }
}

/// The router, each request served from one reading of the configuration version (``Sesame/servingOneRequest(_:)``).
private struct OneRequest: HTTPResponder {
    let router: Router

    func respond(to request: HTTPRequest) -> HTTPResponse {
        Sesame.servingOneRequest { router.respond(to: request) }
    }

    func respond(to error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        router.respond(to: error, for: request)
    }
}
