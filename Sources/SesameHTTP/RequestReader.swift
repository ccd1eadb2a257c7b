internal import CMicroHTTPD
internal import CSesameShims

/// Builds an ``HTTPRequest`` (without body) from the connection's parsed request line and headers.
func readRequest(
    _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?
) -> HTTPRequest {
    var headers = HTTPHeaders()
    withUnsafeMutablePointer(to: &headers) { pointer in
        _ = MHD_get_connection_values(connection, .HEADER_KIND, sesameCollectHeader, pointer)
    }
    var query: [String: String] = [:]
    withUnsafeMutablePointer(to: &query) { pointer in
        _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, sesameCollectQuery, pointer)
    }
    var address = [CChar](repeating: 0, count: 64)
    _ = csesame_mhd_client_address(connection, &address, address.count)
    return HTTPRequest(
        method: HTTPMethod(rawValue: method.map { String(cString: $0) } ?? ""),
        // libmicrohttpd passes the path percent-decoded and without the query string.
        path: url.map { String(cString: $0) } ?? "",
        query: query,
        headers: headers,
        remoteAddress: String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    )
}

/// Appends one header to the `HTTPHeaders` that `cls` points at.
private func sesameCollectHeader(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return .YES }
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
