import Foundation

/// The one rule for a partner's web origins (site key origins and return origins, spec §2.2 and §2.9): `https://` and
/// a host name, or, for local development, `http://localhost` or `http://127.0.0.1`, each with an optional port.
///
/// Parsed by hand and strictly (ASCII only; no user info, backslash, space or control character), so the origin read
/// here is the one a browser reads from the same text.
public enum PartnerWebOrigin {
    /// The longest origin accepted.
    public static let maximumOriginLength = 270
    /// The longest `return_url` accepted.
    public static let maximumURLLength = 2048

    /// The canonical form of an origin: lowercase, default port dropped, no trailing slash.
    /// - Throws: `invalid_argument` for anything else (a path, query or fragment included).
    public static func normalized(_ text: String) throws(SesameError) -> String {
        guard text.utf8.count <= maximumOriginLength, let (origin, rest) = split(text), rest.isEmpty || rest == "/" else {
            throw SesameError(.invalidArgument,
                              "an origin is https://HOST[:PORT], or http://localhost[:PORT] or http://127.0.0.1[:PORT] for development")
        }
        return origin
    }

    /// The canonical origin of an absolute `http(s)` URL that may have a path, query and fragment; `nil` when the URL is
    /// malformed, too long or has an origin ``normalized(_:)`` refuses.
    public static func origin(ofURL text: String) -> String? {
        guard text.utf8.count <= maximumURLLength, let (origin, rest) = split(text) else { return nil }
        guard rest.isEmpty || rest.hasPrefix("/") || rest.hasPrefix("?") || rest.hasPrefix("#") else { return nil }
        return origin
    }

    /// The origin and what follows the authority.
    private static func split(_ text: String) -> (origin: String, rest: Substring)? {
        // Printable ASCII without space or backslash: no header injection, no parser disagreement.
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x5C }) else { return nil }
        let lower = text.lowercased()
        let scheme: String
        if lower.hasPrefix("https://") { scheme = "https" } else if lower.hasPrefix("http://") { scheme = "http" } else { return nil }
        let afterScheme = text.dropFirst(scheme.count + 3)
        let authorityEnd = afterScheme.firstIndex { "/?#".contains($0) } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd].lowercased()
        guard !authority.contains("@") else { return nil }
        var host = Substring(authority), port: Int?
        if let colon = authority.lastIndex(of: ":") {
            let digits = authority[authority.index(after: colon)...]
            // At most 5 digits, so the conversion cannot overflow.
            guard (1...5).contains(digits.count), digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), let value = Int(digits),
                  (1...65535).contains(value)
            else { return nil }
            host = authority[..<colon]
            port = value
        }
        guard isHostName(host) else { return nil }
        if scheme == "http", host != "localhost", host != "127.0.0.1" { return nil }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        return ("\(scheme)://\(host)" + (port.map { ":\($0)" } ?? ""), afterScheme[authorityEnd...])
    }

    /// Dot-separated labels of `a-z 0-9 -`, none empty or longer than 63, not starting or ending with `-`.
    private static func isHostName(_ host: Substring) -> Bool {
        guard (1...253).contains(host.count) else { return false }
        return host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
        }
    }
}
