internal import CMicroHTTPD
internal import CSesameShims

/// Builds an ``HTTPRequest`` (without body) from the connection's parsed request line and headers.
///
/// The query comes from `rawTarget` when the request-line callback captured it (libmicrohttpd then stored no query
/// arguments); otherwise from libmicrohttpd's own arguments.
/// - Returns: The request, and whether the query had more than `maximumQueryArguments` arguments (its query is then
///   empty).
func readRequest(
    _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, rawTarget: [UInt8]?,
    maximumQueryArguments: Int
) -> (request: HTTPRequest, tooManyArguments: Bool) {
    var headers = HTTPHeaders()
    // With no iterator, libmicrohttpd only counts the fields.
    headers.reserveCapacity(max(0, Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil))))
    withUnsafeMutablePointer(to: &headers) { pointer in
        _ = MHD_get_connection_values(connection, .HEADER_KIND, sesameCollectHeader, pointer)
    }
    var query: [String: String] = [:]
    var tooManyArguments = false
    if let rawTarget {
        if let parsed = parseQuery(of: rawTarget, maximumArguments: maximumQueryArguments) {
            query = parsed
        } else {
            tooManyArguments = true
        }
    } else {
        withUnsafeMutablePointer(to: &query) { pointer in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, sesameCollectQuery, pointer)
        }
    }
    let remoteAddress = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { address in
        guard let base = address.baseAddress else { return "" }
        address.initialize(repeating: 0)
        _ = csesame_mhd_client_address(connection, base, address.count)
        return String(cString: base)
    }
    let request = HTTPRequest(
        method: HTTPMethod(rawValue: method.map { String(cString: $0) } ?? ""),
        // libmicrohttpd passes the path percent-decoded and without the query string.
        path: url.map { String(cString: $0) } ?? "",
        query: query,
        headers: headers,
        remoteAddress: remoteAddress
    )
    return (request, tooManyArguments)
}

/// Parses the query string of a raw request target the way libmicrohttpd 0.9.75 does, so handlers see the same values.
///
/// Arguments are split at `&` (an empty argument before another counts, with the name `""`; a trailing `&` adds
/// nothing), each at its first `=` (a bare name gets `""`); `+` becomes a space, then `%XX` with two hex digits is
/// decoded (anything else is kept as is), and a decoded NUL ends the text. The first value of a repeated name wins.
/// - Parameters:
///   - target: The request target as sent, for example `/path?a=1&b=%20`.
///   - maximumArguments: The most arguments accepted.
/// - Returns: The arguments, or nil if there are more than `maximumArguments`.
func parseQuery(of target: [UInt8], maximumArguments: Int) -> [String: String]? {
    guard let question = target.firstIndex(of: UInt8(ascii: "?")) else { return [:] }
    var parts = target[(question + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
    if parts.last?.isEmpty == true { parts.removeLast() }
    guard parts.count <= maximumArguments else { return nil }
    var query: [String: String] = [:]
    for part in parts {
        let name: String
        let value: String
        if let equals = part.firstIndex(of: UInt8(ascii: "=")) {
            name = decodeQueryComponent(part[..<equals])
            value = decodeQueryComponent(part[(equals + 1)...])
        } else {
            name = decodeQueryComponent(part)
            value = ""
        }
        if query[name] == nil { query[name] = value }
    }
    return query
}

/// `+` to space, then `%XX` decoded; text ends at a decoded NUL; invalid UTF-8 is repaired.
private func decodeQueryComponent(_ bytes: ArraySlice<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = bytes.startIndex
    while index < bytes.endIndex {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%"), bytes.distance(from: index, to: bytes.endIndex) >= 3,
            let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
        {
            out.append(high << 4 | low)
            index += 3
        } else {
            out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
    }
    if let nul = out.firstIndex(of: 0) { out.removeSubrange(nul...) }
    return String(decoding: out, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Appends one header to the `HTTPHeaders` that `cls` points at (skipping the server's own Cookie placeholder).
private func sesameCollectHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    if let value, csesame_mhd_is_placeholder(value) != 0 { return .YES }
    let headers = cls.assumingMemoryBound(to: HTTPHeaders.self)
    headers.pointee.add(String(cString: key), value.map { String(cString: $0) } ?? "")
    return .YES
}

/// Stores one query argument (first value wins) in the dictionary that `cls` points at.
private func sesameCollectQuery(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let query = cls.assumingMemoryBound(to: [String: String].self)
    let name = String(cString: key)
    if query.pointee[name] == nil {
        query.pointee[name] = value.map { String(cString: $0) } ?? ""
    }
    return .YES
}
