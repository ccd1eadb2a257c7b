import Foundation
internal import CMicroHTTPD
internal import CSesameShims
import Synchronization

// libmicrohttpd's callbacks. They are plain global functions (not closures) so they carry no actor isolation: they
// run on libmicrohttpd's worker threads, which may block. See STYLE.md §5, "Swift 6 trap".

/// The request-line callback (libmicrohttpd's URI log callback): runs once the request line is in, before the
/// library splits the query or reads any header. It copies the raw target, keeps the library from storing query
/// arguments and cookies in its per-connection memory (the server parses both itself, within its own limits), and
/// returns the request's state, which libmicrohttpd hands to the access handler as `*con_cls`.
func sesameRequestLineReceived(
    _ cls: UnsafeMutableRawPointer?, _ target: UnsafePointer<CChar>?, _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    var rawTarget: [UInt8]?
    if let target {
        rawTarget = Array(UnsafeRawBufferPointer(start: target, count: strlen(target)))
        csesame_mhd_drop_query(target)
    }
    if let connection { _ = csesame_mhd_mask_cookies(connection) }
    return Unmanaged.passRetained(RequestState(rawTarget: rawTarget)).toOpaque()
}

/// The access handler: called once when the headers are in, once per body chunk, and once when the body is complete.
func sesameAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?, _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let conCls else { return .NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    if conCls.pointee == nil {
        // Only if the request-line callback did not run; libmicrohttpd then parsed the query itself.
        conCls.pointee = Unmanaged.passRetained(RequestState(rawTarget: nil)).toOpaque()
    }
    guard let statePointer = conCls.pointee else { return .NO }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()

    if !state.headersRead {
        // First call: the request line and headers are complete, no body has been read.
        state.headersRead = true
        state.started = .now
        context.inFlight.add(1, ordering: .relaxed)
        // The header deadline is met; the body is bounded by the idle timeout and the body limit.
        connectionRecord(connection)?.headerDeadline.store(0, ordering: .relaxed)
        let (request, tooManyArguments) = readRequest(
            connection, url: url, method: method, rawTarget: state.rawTarget,
            maximumQueryArguments: context.limits.maximumQueryArguments
        )
        let refusal =
            tooManyArguments
            ? .uriTooLong()
            : refusal(of: request, connection, rawTarget: state.rawTarget, method: method, version: version, context.limits)
        guard let refusal else {
            state.request = request
            return .YES
        }
        // Answer before reading the body; libmicrohttpd then skips the body and closes the connection.
        state.refused = true
        let response = context.responder.respond(to: refusal, for: request)
        state.request = request
        return respond(response, state, context, connection)
    }

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
    // Moved out and back, so that handing the request on copies none of its parts.
    let request = state.takeRequest()
    let response =
        state.overflowed
        ? context.responder.respond(to: .payloadTooLarge(), for: request)
        : context.responder.respond(to: request)
    state.request = request
    return respond(response, state, context, connection)
}

/// Called by libmicrohttpd once per request whose request line was read, after the response was sent or the
/// connection failed; frees the request state and reports answered requests to the observer.
func sesameRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ reason: MHD_RequestTerminationCode
) {
    guard let cls, let conCls, let statePointer = conCls.pointee else { return }
    conCls.pointee = nil
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeRetainedValue()
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    // On a kept-alive connection the next request's headers are due within the header timeout from now.
    if let connection { connectionRecord(connection)?.headerDeadline.store(context.connections.deadlineFromNow(), ordering: .relaxed) }
    // A request libmicrohttpd refused itself (after the request line) never reached the access handler.
    guard state.headersRead else { return }
    if let observer = context.observer, let response = state.response.take() {
        observer(state.takeRequest(), response, .now - state.started)
    }
    context.inFlight.subtract(1, ordering: .releasing)
}

/// Queues `response` and remembers it for the observer.
private func respond(
    _ response: consuming HTTPResponse, _ state: RequestState, _ context: ServerContext, _ connection: OpaquePointer
) -> MHD_Result {
    let closing = state.overflowed || state.refused || context.draining.load(ordering: .relaxed)
    let (result, sent) = queueResponse(response, isHead: state.request.method == .HEAD, closing: closing, on: connection)
    state.response = sent
    return result
}

/// How many bytes of an oversized (chunked) body are read and dropped before giving up on answering 413.
private func drainLimit(_ context: ServerContext) -> Int {
    max(context.maximumBodySize, 1 << 20)
}

/// Why the transport refuses a request whose headers are in, before its body: a limit or its framing; nil if not.
private func refusal(
    of request: HTTPRequest, _ connection: OpaquePointer, rawTarget: [UInt8]?, method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?, _ limits: RequestLimits
) -> HTTPError? {
    // The request line as sent is method SP target SP version (extra spaces, which libmicrohttpd tolerates, aside).
    let methodLength: Int = method.map { strlen($0) } ?? 0
    let targetLength: Int = rawTarget?.count ?? request.path.utf8.count
    let versionLength: Int = version.map { strlen($0) } ?? 0
    let lineLength = methodLength + targetLength + versionLength + 2
    if lineLength > limits.maximumRequestLineBytes { return .uriTooLong() }
    // libmicrohttpd counts from the method through the blank line; the header section is what follows the line's CRLF.
    let headerSection = max(0, csesame_mhd_header_size(connection) - lineLength - 2)
    if headerSection > limits.maximumHeaderBytes || request.headers.count > limits.maximumHeaderCount {
        return .headerFieldsTooLarge()
    }
    if let framing = framingError(in: request.headers) { return framing }
    if declaredLengthExceeds(limits.maximumBodySize, in: request.headers) { return .payloadTooLarge() }
    return nil
}

/// A body framing the server refuses (RFC 9112 §6): conflicting `Content-Length` values, `Content-Length` together
/// with `Transfer-Encoding`, or a transfer coding other than `chunked` (libmicrohttpd would read such a body to the end
/// of the connection). libmicrohttpd itself reads only the first `Content-Length`, so the others are checked here.
private func framingError(in headers: HTTPHeaders) -> HTTPError? {
    let declared = headers.values("Content-Length")
    // Nearly every request: no transfer coding and at most one plain decimal length that fits in 64 bits.
    if declared.count <= 1, !headers.contains("Transfer-Encoding"), declared.allSatisfy({ plainDecimal($0) != nil }) { return nil }
    let lengths = declared.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
    let transferCodings = headers.values("Transfer-Encoding")
    if !transferCodings.isEmpty {
        let chunked = transferCodings.count == 1 && transferCodings[0].trimmingCharacters(in: " \t").lowercased() == "chunked"
        guard chunked, lengths.isEmpty else {
            return .badRequest(code: "invalid_framing", message: "The request body framing is invalid.")
        }
        return nil
    }
    let distinct = Set(lengths.map { $0.trimmingCharacters(in: " \t") })
    guard distinct.count <= 1, distinct.allSatisfy({ !$0.isEmpty && UInt64($0) != nil }) else {
        return .badRequest(code: "invalid_framing", message: "The request body framing is invalid.")
    }
    return nil
}

/// Whether `Content-Length` announces more than `limit` bytes (an unparsable value counts as too large).
private func declaredLengthExceeds(_ limit: Int, in headers: HTTPHeaders) -> Bool {
    guard let text = headers["Content-Length"] else { return false }
    guard let length = plainDecimal(text) ?? UInt64(text.trimmingCharacters(in: " \t")) else { return true }
    return length > UInt64(limit)
}

/// The value of 1 to 19 ASCII digits and nothing else (nearly every `Content-Length`), read from the bytes; `nil` for
/// anything else, which the caller reads the slower way.
private func plainDecimal(_ text: String) -> UInt64? {
    guard (1...19).contains(text.utf8.count) else { return nil }
    var value: UInt64 = 0
    for byte in text.utf8 {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
        value = value * 10 + UInt64(byte - UInt8(ascii: "0"))  // trap-safe: at most 19 digits, below UInt64.max
    }
    return value
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return result
    }
}
