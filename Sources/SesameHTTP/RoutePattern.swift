/// A parsed route pattern such as `/v1/projects/:projectId`: literal segments and `:name` captures.
struct RoutePattern: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The pattern as written, reported as ``HTTPResponse/route``.
    let text: String
    let segments: [Segment]

    /// Parses `text`; traps on a malformed pattern, since patterns are written by programmers.
    init(_ text: String) {
        guard let parts = PathSegments.split(text) else {
            preconditionFailure("route pattern must start with '/': \(text)")
        }
        var names = Set<String>()
        segments = parts.map { part in
            precondition(!part.isEmpty, "route pattern has an empty segment: \(text)")
            guard part.first == ":" else { return .literal(String(part)) }
            let name = String(part.dropFirst())
            precondition(!name.isEmpty, "route pattern has an unnamed parameter: \(text)")
            precondition(names.insert(name).inserted, "route pattern repeats parameter '\(name)': \(text)")
            return .parameter(name)
        }
        self.text = text
    }

    /// The captured parameters if `path` matches segment by segment, else `nil`.
    func match(_ path: [Substring]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, path) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
        }
        return parameters
    }

    /// Whether `self` is more specific than `other`: at the first segment where they differ in kind, a literal wins.
    func isMoreSpecific(than other: RoutePattern) -> Bool {
        for (mine, theirs) in zip(segments, other.segments) {
            switch (mine, theirs) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }
}

/// Splits paths into segments the way the router compares them.
enum PathSegments {
    /// `"/"` gives `[]`, `"/a/b"` gives `["a", "b"]`, and `"/a/"` gives `["a", ""]` (so a trailing slash never
    /// matches a pattern without one); `nil` if `path` does not start with `/`.
    static func split(_ path: String) -> [Substring]? {
        guard path.first == "/" else { return nil }
        if path == "/" { return [] }
        return Array(path.dropFirst().split(separator: "/", omittingEmptySubsequences: false))
    }
}
