internal import CMicroHTTPD
internal import CSesameShims
import Synchronization

// libmicrohttpd's callbacks. They are plain global functions (not closures) so they carry no actor isolation: they
// run on libmicrohttpd's worker threads, which may block. See STYLE.md §5, "Swift 6 trap".

/// The access handler: called once when the headers are in, once per body chunk, and once when the body is complete.
func sesameAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let conCls else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let statePointer = conCls.pointee else {
        // First call: the request line and headers are complete, no body has been read.
        let request = readRequest(connection, url: url, method: method)
        let state = RequestState(request: request, started: .now)
        conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        context.inFlight.add(1, ordering: .relaxed)
        if declaredLengthExceeds(context.maximumBodySize, in: request.headers) {
            // Answer before reading the body; libmicrohttpd then skips the body and closes the connection.
            state.overflowed = true
            return respond(context.responder.respond(to: .payloadTooLarge(), for: request), state, context, connection)
        }
        return .YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        uploadDataSize.pointee = 0  // Consumed (stored or discarded) either way.
        if state.overflowed || state.response != nil {
            // libmicrohttpd 0.9.75 cannot queue a response mid-body, so excess bytes are read and dropped until the
            // body ends; past the drain limit the connection is closed without an answer.
            state.discarded += chunkSize
            return state.discarded > drainLimit(context) ? .NO : .YES
        }
        guard let uploadData else { return .YES }
        guard state.request.body.count + chunkSize <= context.maximumBodySize else {
            state.overflowed = true
            state.discarded = state.request.body.count + chunkSize
            state.request.body = []
            return .YES
        }
        // Copy the bytes out now: libmicrohttpd reuses its buffer once the callback returns.
        uploadData.withMemoryRebound(to: UInt8.self, capacity: chunkSize) {
            state.request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: chunkSize))
        }
        return .YES
    }

    // Final call: the whole body has arrived (or was discarded).
    if state.response != nil { return .YES }
    let response =
        state.overflowed
        ? context.responder.respond(to: .payloadTooLarge(), for: state.request)
        : context.responder.respond(to: state.request)
    return respond(response, state, context, connection)
}

/// Called by libmicrohttpd once per request that reached the access handler, after the response was sent or the
/// connection failed; frees the request state and reports to the observer.
func sesameRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let conCls, let statePointer = conCls.pointee else { return }
    conCls.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeRetainedValue()
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if let observer = context.observer, let response = state.response {
        observer(state.request, response, .now - state.started)
    }
    context.inFlight.subtract(1, ordering: .releasing)
}

/// Queues `response` and remembers it for the observer.
private func respond(
    _ response: HTTPResponse, _ state: RequestState, _ context: ServerContext, _ connection: OpaquePointer
) -> MHD_Result {
    let closing = state.overflowed || context.draining.load(ordering: .relaxed)
    let (result, sent) = queueResponse(response, isHead: state.request.method == .HEAD, closing: closing, on: connection)
    state.response = sent
    return result
}

/// How many bytes of an oversized (chunked) body are read and dropped before giving up on answering 413.
private func drainLimit(_ context: ServerContext) -> Int {
    max(context.maximumBodySize, 1 << 20)
}

/// Whether `Content-Length` announces more than `limit` bytes (an unparsable value counts as too large).
private func declaredLengthExceeds(_ limit: Int, in headers: HTTPHeaders) -> Bool {
    guard let text = headers["Content-Length"] else { return false }
    guard let length = UInt64(text.trimmingCharacters(in: " \t")) else { return true }
    return length > UInt64(limit)
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return result
    }
}
