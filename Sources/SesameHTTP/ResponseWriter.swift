internal import CMicroHTTPD

/// Hands `response` to libmicrohttpd.
///
/// Statuses outside 200...599 become a generic 500. `Content-Length` and `Transfer-Encoding` are libmicrohttpd's job
/// and are not copied; headers libmicrohttpd refuses (for example values containing CR or LF) are dropped. For `HEAD`,
/// an empty body with a `Content-Length` header (as ``Router`` produces) is announced with that length and never read.
/// - Returns: libmicrohttpd's verdict and the response as actually queued.
func queueResponse(
    _ response: consuming HTTPResponse, isHead: Bool, closing: Bool, on connection: OpaquePointer
) -> (MHD_Result, HTTPResponse) {
    if !(200...599).contains(response.status) {
        let route = response.route
        response = DefaultErrorRenderer.body(for: .internalError())
        response.route = route
    }
    let headLength = isHead && response.body.isEmpty ? response.headers["Content-Length"].flatMap { UInt64($0) } : nil
    let created: OpaquePointer?
    if let headLength, headLength > 0 {
        created = MHD_create_response_from_callback(headLength, 4096, sesameNeverReadBody, nil, nil)
    } else {
        created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
    }
    guard let mhdResponse = created else { return (.NO, response) }
    defer { MHD_destroy_response(mhdResponse) }
    for (name, value) in response.headers where !isTransportHeader(name) {
        // `withCString`, not the implicit conversion: that copies a small (inline) string to the heap first.
        _ = name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } }
    }
    if closing {
        _ = MHD_add_response_header(mhdResponse, "Connection", "close")
    }
    return (MHD_queue_response(connection, UInt32(response.status), mhdResponse), response)
}

/// Body reader for `HEAD` responses, which libmicrohttpd never sends a body for; it ends the stream if ever called.
private func sesameNeverReadBody(
    _ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ maximum: Int
) -> Int {
    MHD_CONTENT_READER_END_WITH_ERROR
}

private func isTransportHeader(_ name: String) -> Bool {
    HTTPHeaders.namesMatch(name, "Content-Length") || HTTPHeaders.namesMatch(name, "Transfer-Encoding")
}
