/// Routes requests to handlers by method and path, and renders errors in the shape of the mount the path is under.
///
/// Matching rules:
/// - Paths are compared segment by segment, exactly and case-sensitively. A trailing slash is **not** tolerated:
///   `/v1/projects/` does not match `/v1/projects` (one URL per resource; a 404 points at the client bug).
/// - `:name` segments capture one non-empty segment into ``HTTPRequest/pathParameters``.
/// - When several patterns match, a literal segment beats a parameter at the first place they differ.
/// - No route for the path gives 404 `route_not_found`; a path known only under other methods gives 405
///   `method_not_allowed` with an `Allow` header.
/// - `HEAD` is served by the `GET` handler unless a `HEAD` route exists; the body is dropped and its length kept in
///   `Content-Length`.
/// - Every response carries `X-Request-Id` (the request's ``HTTPRequest/id``) and ``HTTPResponse/route``.
public struct Router: HTTPResponder {
    private var routes: [Route] = []
    /// Routes whose pattern has no parameter, by method and exact path: the common case, answered without a scan.
    private var literalRoutes: [LiteralKey: Int] = [:]

    private struct LiteralKey: Hashable {
        var method: HTTPMethod
        var path: String
    }
    private var mounts: [Mount] = [Mount(prefix: [], renderer: DefaultErrorRenderer())]

    /// A class, so that handing a matched route on costs one reference, not a copy of its parts.
    private final class Route: Sendable {
        let method: HTTPMethod
        let pattern: RoutePattern
        let cors: Bool
        /// CORS for any origin without credentials (`Access-Control-Allow-Origin: *`).
        let anyOrigin: Bool
        let requiresJSONBody: Bool
        let handler: @Sendable (HTTPRequest) throws -> HTTPResponse

        init(method: HTTPMethod, pattern: RoutePattern, cors: Bool, anyOrigin: Bool, requiresJSONBody: Bool,
             handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
            (self.method, self.pattern, self.cors, self.anyOrigin, self.requiresJSONBody) = (method, pattern, cors, anyOrigin, requiresJSONBody)
            self.handler = handler
        }
    }

    private struct Mount: Sendable {
        var prefix: [Substring]
        var renderer: any HTTPErrorRenderer
    }

    /// Creates a router with no routes, whose errors render with ``DefaultErrorRenderer``.
    public init() {}

    /// Every route added, as method and pattern (`GET /v1/users/:userId`), in the order added.
    public var routeTable: [(method: HTTPMethod, pattern: String)] {
        routes.map { ($0.method, $0.pattern.text) }
    }

    /// Routes under `prefix` (e.g. "/v1") render errors (404, 405, 413, 415, thrown HTTPError) with `renderer`.
    ///
    /// The longest matching prefix wins, compared by whole segments (`/v1` covers `/v1/x` but not `/v10`); the default
    /// mount `/` uses ``DefaultErrorRenderer``. Mounting the same prefix again replaces its renderer.
    /// - Parameters:
    ///   - prefix: A path prefix starting with `/`.
    ///   - errorRenderer: The renderer for errors under `prefix`.
    public mutating func mount(_ prefix: String, errorRenderer: any HTTPErrorRenderer) {
        guard var segments = PathSegments.split(prefix) else {
            preconditionFailure("mount prefix must start with '/': \(prefix)")
        }
        if segments.last?.isEmpty == true { segments.removeLast() }
        mounts.removeAll { $0.prefix == segments }
        mounts.append(Mount(prefix: segments, renderer: errorRenderer))
    }

    /// Adds a route; traps if the pattern is malformed or the same method and pattern were already added.
    ///
    /// - Parameters:
    ///   - method: The method the route answers.
    ///   - pattern: A path pattern; segments `:name` capture one non-empty segment.
    ///   - cors: Answer `OPTIONS` preflights for the path and add `Access-Control-Allow-Origin` (echoing `Origin`),
    ///     `Access-Control-Allow-Credentials: true`, `Access-Control-Expose-Headers` (`X-Request-Id`, after any the
    ///     handler set) and `Vary: Origin` to its responses.
    ///   - corsAnyOrigin: CORS for public, credential-free routes instead: preflights are answered and responses carry
    ///     `Access-Control-Allow-Origin: *`, without `Access-Control-Allow-Credentials`.
    ///   - requiresJSONBody: A `POST`/`PUT`/`PATCH` with a body or a `Content-Type` must be `application/json`
    ///     (parameters allowed), else 415. A bodyless request without `Content-Type` reaches the handler.
    ///   - handler: Runs on a server worker thread and may block; throw ``HTTPError`` to answer with a status.
    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, cors: Bool = false, corsAnyOrigin: Bool = false, requiresJSONBody: Bool = true,
        _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse
    ) {
        let parsed = RoutePattern(pattern)
        precondition(
            !routes.contains { $0.method == method && $0.pattern.segments == parsed.segments },
            "route \(method) \(pattern) added twice"
        )
        routes.append(
            Route(method: method, pattern: parsed, cors: cors || corsAnyOrigin, anyOrigin: corsAnyOrigin, requiresJSONBody: requiresJSONBody,
                  handler: handler)
        )
        if parsed.segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            literalRoutes[LiteralKey(method: method, path: parsed.text)] = routes.count - 1
        }
    }

    /// Routes `request` to its handler and turns errors into responses.
    /// - Parameter request: The request.
    /// - Returns: The response, with `X-Request-Id` and ``HTTPResponse/route`` set.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        // A literal route with this method is the most specific match there can be: no scan needed.
        if let index = literalRoutes[LiteralKey(method: request.method, path: request.path)] {
            return dispatch(request, to: routes[index], parameters: [:])
        }
        let path = PathSegments.split(request.path)
        let renderer = self.renderer(for: path ?? [])
        let candidates = path.map(self.candidates(for:)) ?? []
        guard let first = candidates.first else {
            let error = HTTPError.notFound(code: "route_not_found", message: "No route matches the request path.")
            return finish(render(error, request, renderer), for: request, route: nil, cors: false)
        }
        let corsEnabled = candidates.contains { $0.route.cors }

        let chosen =
            candidates.first { $0.route.method == request.method }
            ?? (request.method == .HEAD ? candidates.first { $0.route.method == .GET } : nil)
        guard let (route, parameters) = chosen else {
            if request.method == .OPTIONS && corsEnabled {
                return finish(preflight(request, candidates), for: request, route: first.route.pattern.text, cors: true,
                              anyOrigin: candidates.contains { $0.route.anyOrigin })
            }
            let error = HTTPError.methodNotAllowed(allowed: allowedMethods(candidates))
            return finish(render(error, request, renderer), for: request, route: first.route.pattern.text, cors: corsEnabled,
                          anyOrigin: candidates.contains { $0.route.anyOrigin })
        }

        return dispatch(request, to: route, parameters: parameters)
    }

    /// Runs `route`'s handler (after the JSON body check) and renders what it throws.
    private func dispatch(_ request: HTTPRequest, to route: Route, parameters: [String: String]) -> HTTPResponse {
        let response: HTTPResponse
        if route.requiresJSONBody, request.method.carriesBody, !Self.hasAcceptableJSONBody(request) {
            response = render(.unsupportedMediaType(), request, renderer(for: request))
        } else {
            do {
                if parameters.isEmpty, request.pathParameters.isEmpty {
                    response = try route.handler(request)  // no path parameters to add: the request as it is, not a copy
                } else {
                    var routed = request
                    routed.pathParameters = parameters
                    response = try route.handler(routed)
                }
            } catch let error as HTTPError {
                response = render(error, request, renderer(for: request))
            } catch {
                response = render(.internalError(), request, renderer(for: request))
            }
        }
        return finish(response, for: request, route: route.pattern.text, cors: route.cors, anyOrigin: route.anyOrigin)
    }

    private func renderer(for request: HTTPRequest) -> any HTTPErrorRenderer {
        renderer(for: PathSegments.split(request.path) ?? [])
    }

    /// Renders a transport-level rejection (such as 413) with the mount's renderer, plus CORS for CORS routes.
    /// - Parameters:
    ///   - error: Why the request was rejected.
    ///   - request: The request as far as it was read.
    /// - Returns: The response.
    public func respond(to error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        let path = PathSegments.split(request.path)
        let candidates = path.map(self.candidates(for:)) ?? []
        let response = render(error, request, renderer(for: path ?? []))
        return finish(
            response, for: request, route: candidates.first?.route.pattern.text,
            cors: candidates.contains { $0.route.cors }, anyOrigin: candidates.contains { $0.route.anyOrigin }
        )
    }

    // MARK: - Matching

    private func candidates(for path: [Substring]) -> [(route: Route, parameters: [String: String])] {
        var matches: [(route: Route, parameters: [String: String])] = []
        for route in routes {
            if let parameters = route.pattern.match(path) { matches.append((route, parameters)) }
        }
        // Stable order: more specific patterns first, then registration order.
        var sorted: [(route: Route, parameters: [String: String])] = []
        for match in matches {
            let index = sorted.firstIndex { match.route.pattern.isMoreSpecific(than: $0.route.pattern) } ?? sorted.endIndex
            sorted.insert(match, at: index)
        }
        return sorted
    }

    private func renderer(for path: [Substring]) -> any HTTPErrorRenderer {
        var best = mounts[0]
        for mount in mounts where mount.prefix.count >= best.prefix.count && path.starts(with: mount.prefix) {
            best = mount
        }
        return best.renderer
    }

    private func allowedMethods(_ candidates: [(route: Route, parameters: [String: String])]) -> [HTTPMethod] {
        var methods: [HTTPMethod] = []
        for candidate in candidates where !methods.contains(candidate.route.method) {
            methods.append(candidate.route.method)
        }
        if methods.contains(.GET) && !methods.contains(.HEAD) { methods.append(.HEAD) }
        if candidates.contains(where: { $0.route.cors }) && !methods.contains(.OPTIONS) { methods.append(.OPTIONS) }
        return methods
    }

    // MARK: - Responses

    private func render(_ error: HTTPError, _ request: HTTPRequest, _ renderer: any HTTPErrorRenderer) -> HTTPResponse {
        var response = renderer.render(error, for: request)
        for (name, value) in error.headers { response.headers.set(name, value) }
        response.ceremony = error.ceremony
        return response
    }

    private func preflight(
        _ request: HTTPRequest, _ candidates: [(route: Route, parameters: [String: String])]
    ) -> HTTPResponse {
        var response = HTTPResponse.noContent()
        let allowed = allowedMethods(candidates)
        response.headers.set("Allow", allowed.map(\.rawValue).joined(separator: ", "))
        guard request.headers["Origin"] != nil else { return response }
        let corsMethods = allowedMethods(candidates.filter { $0.route.cors })
        response.headers.set("Access-Control-Allow-Methods", corsMethods.map(\.rawValue).joined(separator: ", "))
        response.headers.set(
            "Access-Control-Allow-Headers", request.headers["Access-Control-Request-Headers"] ?? "Content-Type"
        )
        response.headers.set("Access-Control-Max-Age", "600")
        Self.addVary(&response, "Access-Control-Request-Method")
        Self.addVary(&response, "Access-Control-Request-Headers")
        return response
    }

    /// Adds the headers every routed response carries.
    private func finish(_ response: consuming HTTPResponse, for request: HTTPRequest, route: String?, cors: Bool, anyOrigin: Bool = false)
        -> HTTPResponse
    {
        response.route = route
        response.headers.set("X-Request-Id", request.id)
        if cors, anyOrigin, request.headers["Origin"] != nil {
            response.headers.set("Access-Control-Allow-Origin", "*")
            let exposed = response.headers["Access-Control-Expose-Headers"].map { $0.isEmpty ? "" : $0 + ", " } ?? ""
            response.headers.set("Access-Control-Expose-Headers", exposed + "X-Request-Id")
        } else if cors, let origin = request.headers["Origin"] {
            response.headers.set("Access-Control-Allow-Origin", origin)
            response.headers.set("Access-Control-Allow-Credentials", "true")
            // A handler may expose headers of its own (for example a session cookie fallback); X-Request-Id joins them.
            let exposed = response.headers["Access-Control-Expose-Headers"].map { $0.isEmpty ? "" : $0 + ", " } ?? ""
            response.headers.set("Access-Control-Expose-Headers", exposed + "X-Request-Id")
            Self.addVary(&response, "Origin")
        }
        if request.method == .HEAD && !response.body.isEmpty {
            response.headers.set("Content-Length", String(response.body.count))
            response.body = []
        }
        return response
    }

    private static func addVary(_ response: inout HTTPResponse, _ name: String) {
        if let existing = response.headers["Vary"], !existing.isEmpty {
            response.headers.set("Vary", existing + ", " + name)
        } else {
            response.headers.set("Vary", name)
        }
    }

    /// A bodyless request without `Content-Type` passes; otherwise the media type must be `application/json`.
    private static func hasAcceptableJSONBody(_ request: HTTPRequest) -> Bool {
        guard let contentType = request.headers["Content-Type"] else { return request.body.isEmpty }
        // The media type (before any parameter), without surrounding spaces and tabs, in ASCII case-insensitively.
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var mediaType = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }
        while let first = mediaType.first, isSpace(first) { mediaType = mediaType.dropFirst() }
        while let last = mediaType.last, isSpace(last) { mediaType = mediaType.dropLast() }
        return mediaType.elementsEqual("application/json".utf8) { byte, expected in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == expected : byte == expected
        }
    }
}
