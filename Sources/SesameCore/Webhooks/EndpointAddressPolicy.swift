import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The SSRF guard for webhook endpoint URLs: only absolute `https://` URLs whose host resolves to public addresses.
///
/// Checked when an endpoint is saved and again before every delivery. A URL is accepted when:
/// - it has at most ``maximumURLLength`` characters, all printable ASCII without spaces or backslashes;
/// - its scheme is `https` (or `http` when allowed), followed by `//` and an authority without user information;
/// - its host is a DNS name (letters, digits, `-`, `.`), an IPv4 literal or a bracketed IPv6 literal, and not
///   `localhost` or a name under `.localhost`; its port, if present, is 1...65535;
/// - its path, query and fragment use RFC 3986 characters only, with well-formed percent-encodings;
/// - every address the host resolves to is public (`isPublic(_: IPAddress)`), unless private addresses
///   are allowed (development and tests).
///
/// Address literals are classified without any lookup; names are resolved with `getaddrinfo` (blocking, with the
/// system resolver's own timeouts).
public enum EndpointAddressPolicy {
    /// The longest URL accepted, in characters.
    public static let maximumURLLength = 2048

    /// An IPv4 or IPv6 address, in network byte order.
    public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
        /// An IPv4 address: 4 bytes.
        case v4([UInt8])
        /// An IPv6 address: 16 bytes.
        case v6([UInt8])

        /// Parses a numeric address with `inet_pton`: dotted-quad IPv4 (exactly four decimal parts) or IPv6 text
        /// without brackets or zone. Returns `nil` for anything else, host names included.
        /// - Parameter text: The address text, for example `"93.184.215.14"` or `"2001:db8::1"`.
        public init?(_ text: String) {
            var v4 = in_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
                return
            }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, text, &v6) == 1 {
                self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
                return
            }
            return nil
        }

        /// The canonical text form, from `inet_ntop` (`"127.0.0.1"`, `"::1"`, `"::ffff:10.0.0.1"`).
        public var description: String {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            let family: Int32
            let bytes: [UInt8]
            switch self {
            case .v4(let b): (family, bytes) = (AF_INET, b)
            case .v6(let b): (family, bytes) = (AF_INET6, b)
            }
            let ok = bytes.withUnsafeBytes { raw in
                buffer.withUnsafeMutableBufferPointer { out in
                    inet_ntop(family, raw.baseAddress, out.baseAddress, socklen_t(out.count)) != nil
                }
            }
            guard ok else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    // MARK: - Classification

    /// Non-public IPv4 ranges (address, prefix length).
    private static let refusedIPv4: [([UInt8], Int)] = [
        ([0, 0, 0, 0], 8),  // "this network"
        ([10, 0, 0, 0], 8),  // private
        ([100, 64, 0, 0], 10),  // carrier-grade NAT
        ([127, 0, 0, 0], 8),  // loopback
        ([169, 254, 0, 0], 16),  // link-local (cloud metadata services)
        ([172, 16, 0, 0], 12),  // private
        ([192, 0, 0, 0], 24),  // IETF protocol assignments
        ([192, 0, 2, 0], 24),  // TEST-NET-1 (documentation)
        ([192, 88, 99, 0], 24),  // deprecated 6to4 relay anycast
        ([192, 168, 0, 0], 16),  // private
        ([198, 18, 0, 0], 15),  // benchmarking
        ([198, 51, 100, 0], 24),  // TEST-NET-2 (documentation)
        ([203, 0, 113, 0], 24),  // TEST-NET-3 (documentation)
        ([224, 0, 0, 0], 4),  // multicast
        ([240, 0, 0, 0], 4),  // reserved, including 255.255.255.255 (broadcast)
    ]

    /// Non-public ranges inside IPv6 global unicast 2000::/3 (address, prefix length).
    private static let refusedIPv6: [([UInt8], Int)] = [
        ([0x20, 0x01, 0x00, 0x00], 23),  // IETF protocol assignments, including Teredo 2001::/32
        ([0x20, 0x01, 0x0d, 0xb8], 32),  // documentation
        ([0x3f, 0xff, 0x00, 0x00], 20),  // documentation (RFC 9637)
    ]

    /// Whether `address` is a public unicast address a webhook may be sent to.
    ///
    /// IPv4 refuses 0.0.0.0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.0.0/24, the documentation nets
    /// 192.0.2/24, 198.51.100/24 and 203.0.113/24, 192.88.99/24, 192.168/16, 198.18/15 and 224/4 and above
    /// (multicast, reserved, 255.255.255.255). IPv6 is public only inside global unicast 2000::/3 (so `::`, `::1`,
    /// the rest of ::/96, fc00::/7, fe80::/10, fec0::/10, ff00::/8 and 100::/64 are refused), minus 2001::/23
    /// (includes Teredo), 2001:db8::/32 and 3fff::/20; addresses that embed an IPv4 address are judged by it:
    /// IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 and 6to4 2002::/16. The local-use NAT64 prefix 64:ff9b:1::/48
    /// is refused.
    /// - Parameter address: The address.
    /// - Returns: `true` if public.
    public static func isPublic(_ address: IPAddress) -> Bool {
        switch address {
        case .v4(let bytes):
            return !refusedIPv4.contains { matches(bytes, $0.0, prefix: $0.1) }
        case .v6(let bytes):
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                return isPublic(.v4(Array(bytes[12..<16])))  // IPv4-mapped
            }
            if matches(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], prefix: 96) {
                return isPublic(.v4(Array(bytes[12..<16])))  // NAT64 well-known prefix
            }
            if matches(bytes, [0x20, 0x02], prefix: 16) {
                return isPublic(.v4(Array(bytes[2..<6])))  // 6to4
            }
            guard bytes[0] & 0xe0 == 0x20 else { return false }  // outside global unicast 2000::/3
            return !refusedIPv6.contains { matches(bytes, $0.0, prefix: $0.1) }
        }
    }

    /// Whether `text` is an address literal (``IPAddress/init(_:)``) that is public; `false` for anything that is
    /// not a literal, host names included.
    /// - Parameter text: The address text, without brackets.
    /// - Returns: `true` if `text` is a public address literal.
    public static func isPublic(_ text: String) -> Bool {
        IPAddress(text).map(isPublic) ?? false
    }

    /// Whether the first `prefix` bits of `bytes` equal those of `network`.
    private static func matches(_ bytes: [UInt8], _ network: [UInt8], prefix: Int) -> Bool {
        var remaining = prefix
        var index = 0
        while remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            let expected = index < network.count ? network[index] : 0
            guard bytes[index] & mask == expected & mask else { return false }
            remaining -= 8
            index += 1
        }
        return true
    }

    // MARK: - Resolution

    /// The addresses `host` resolves to, through `getaddrinfo` (both families, duplicates removed, in the
    /// resolver's order). An address literal resolves to itself.
    /// - Parameter host: A host name or an address literal (IPv6 without brackets).
    /// - Returns: The addresses as canonical text (``IPAddress/description``), never empty.
    /// - Throws: `SesameError(.invalidArgument)` when the name does not resolve (including temporary resolver
    ///   failures; the caller retries later) or resolves to nothing.
    public static func resolve(host: String) throws(SesameError) -> [String] {
        try resolveAddresses(host: host).map(\.description)
    }

    /// `getaddrinfo` with the results as ``IPAddress`` values.
    private static func resolveAddresses(host: String) throws(SesameError) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw SesameError(.invalidArgument, "the webhook host \(host) does not resolve")
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var next = list
        while let entry = next {
            next = entry.pointee.ai_next
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            let address: IPAddress
            switch entry.pointee.ai_family {
            case AF_INET:
                var sin = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                address = .v4(withUnsafeBytes(of: &sin.sin_addr) { Array($0) })
            case AF_INET6:
                var sin6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                address = .v6(withUnsafeBytes(of: &sin6.sin6_addr) { Array($0) })
            default:
                continue
            }
            if !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            throw SesameError(.invalidArgument, "the webhook host \(host) has no IPv4 or IPv6 address")
        }
        return addresses
    }

    // MARK: - URLs

    /// Checks a webhook endpoint URL and returns the addresses its host resolves to.
    ///
    /// See the type's documentation for the rules. Call it when an endpoint is saved (to reject it early) and again
    /// right before each delivery (DNS may have changed).
    /// - Parameters:
    ///   - url: The endpoint URL as the operator gave it.
    ///   - allowPrivate: Accept loopback, private and other non-public addresses (and `localhost`); for development
    ///     and tests only.
    ///   - allowHTTP: Accept `http://` besides `https://`; for development and tests only.
    /// - Returns: The resolved addresses as canonical text, never empty.
    /// - Throws: `SesameError(.invalidArgument)` with a generic detail that may name the host but never repeats the
    ///   path, query or user information.
    @discardableResult
    public static func check(url: String, allowPrivate: Bool, allowHTTP: Bool) throws(SesameError) -> [String] {
        try endpoint(url: url, allowPrivate: allowPrivate, allowHTTP: allowHTTP).addresses
    }

    /// A webhook URL that passed the checks, in the parts a client connects and writes its request with.
    public struct Endpoint: Sendable, Equatable {
        /// `https` (or `http` when allowed).
        public var isSecure: Bool
        /// The host in lower case: a DNS name (a trailing dot kept as given) or an address literal, IPv6 without
        /// brackets.
        public var host: String
        /// The port given, or the scheme's (443, 80).
        public var port: UInt16
        /// The request target: the path and query as given (`/` when the path is empty), without the fragment.
        public var target: String
        /// The addresses the host resolved to, as canonical text, never empty: connect only to these.
        public var addresses: [String]

        /// The `Host` header's value: the host (IPv6 in brackets), with the port when it is not the scheme's.
        public var hostHeader: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
        }
    }

    /// Checks a webhook endpoint URL as `check(url:allowPrivate:allowHTTP:)` does and returns it in
    /// parts, with the addresses its host resolves to.
    /// - Parameters:
    ///   - url: The endpoint URL as the operator gave it.
    ///   - allowPrivate: Accept non-public addresses (development and tests only).
    ///   - allowHTTP: Accept `http://` (development and tests only).
    /// - Throws: `SesameError(.invalidArgument)` as for `check(url:allowPrivate:allowHTTP:)`.
    public static func endpoint(url: String, allowPrivate: Bool, allowHTTP: Bool) throws(SesameError) -> Endpoint {
        func refuse(_ detail: String) -> SesameError { SesameError(.invalidArgument, detail) }
        guard url.count <= maximumURLLength else {
            throw refuse("the webhook URL is longer than \(maximumURLLength) characters")
        }
        // Printable ASCII only, no spaces or backslashes: parsers disagree on those, which SSRF tricks exploit.
        guard !url.isEmpty, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\\") }) else {
            throw refuse("the webhook URL must be printable ASCII without spaces or backslashes")
        }
        guard let schemeEnd = url.range(of: "://") else {
            throw refuse("the webhook URL must be absolute and start with https://")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || (allowHTTP && scheme == "http") else {
            throw refuse(allowHTTP ? "the webhook URL must use https or http" : "the webhook URL must use https")
        }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)]
        guard !authority.contains("@") else {
            throw refuse("the webhook URL must not contain user information")
        }
        let host: Substring
        let port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse("the webhook URL host is malformed") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = nil
            } else if after.first == ":" {
                port = after.dropFirst()
            } else {
                throw refuse("the webhook URL host is malformed")
            }
            guard case .v6 = IPAddress(String(host)) else { throw refuse("the webhook URL host is malformed") }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                port = authority[authority.index(after: colon)...]
            } else {
                host = authority
                port = nil
            }
            let isNameCharacter = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == ".") }
            guard !host.isEmpty, host.allSatisfy(isNameCharacter) else {
                throw refuse("the webhook URL must name a host")
            }
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(port), (1...65535).contains(number)
            else { throw refuse("the webhook URL port is invalid") }
        }
        let afterAuthority = rest[authority.endIndex...]
        guard isWellFormedPathQueryAndFragment(afterAuthority.utf8) else {
            throw refuse("the webhook URL is malformed")
        }

        let hostName = String(host).lowercased()
        let bareName = hostName.hasSuffix(".") ? String(hostName.dropLast()) : hostName
        if !allowPrivate && (bareName == "localhost" || bareName.hasSuffix(".localhost")) {
            throw refuse("the webhook host \(hostName) is not a public address")
        }
        let addresses = try resolveAddresses(host: hostName)
        if !allowPrivate, addresses.contains(where: { !isPublic($0) }) {
            throw refuse("the webhook host \(hostName) resolves to a private or reserved address")
        }
        let target = afterAuthority[..<(afterAuthority.firstIndex(of: "#") ?? afterAuthority.endIndex)]
        return Endpoint(
            isSecure: scheme == "https", host: hostName, port: port.flatMap { UInt16($0) } ?? (scheme == "https" ? 443 : 80),
            target: target.hasPrefix("/") ? String(target) : "/" + target, addresses: addresses.map(\.description)
        )
    }

    /// Whether what follows a URL's authority is a path, query and fragment made of RFC 3986 characters only
    /// (§3.3-3.5: unreserved, sub-delimiters, `:`, `@`, `/`, `?` and percent-encodings of two hex digits), with at
    /// most one `#`. Anything else (`<`, `"`, `{`, `%zz`, a second `#`) is refused rather than sent as given.
    private static func isWellFormedPathQueryAndFragment(_ bytes: Substring.UTF8View) -> Bool {
        var pendingHexDigits = 0
        var seenFragment = false
        for byte in bytes {
            if pendingHexDigits > 0 {
                guard Character(Unicode.Scalar(byte)).isHexDigit else { return false }
                pendingHexDigits -= 1
                continue
            }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            case UInt8(ascii: "%"):
                pendingHexDigits = 2
            case UInt8(ascii: "#"):
                guard !seenFragment else { return false }
                seenFragment = true
            default:
                guard "-._~!$&'()*+,;=:@/?".utf8.contains(byte) else { return false }
            }
        }
        return pendingHexDigits == 0
    }

    /// Checks a webhook endpoint URL given as a `URL`; see the `String` form for the rules.
    /// - Parameters:
    ///   - url: The endpoint URL; its `absoluteString` is checked.
    ///   - allowPrivate: Accept non-public addresses (development and tests only).
    ///   - allowHTTP: Accept `http://` (development and tests only).
    /// - Returns: The resolved addresses as canonical text.
    /// - Throws: `SesameError(.invalidArgument)` as for the `String` form.
    @discardableResult
    public static func check(url: URL, allowPrivate: Bool, allowHTTP: Bool) throws(SesameError) -> [String] {
        try check(url: url.absoluteString, allowPrivate: allowPrivate, allowHTTP: allowHTTP)
    }
}
