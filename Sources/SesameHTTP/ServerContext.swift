import Synchronization

/// What the C callbacks need from the server; passed to libmicrohttpd as a retained opaque pointer.
///
/// Sendable: every stored property is immutable, atomic or itself Sendable.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let observer: HTTPServer.Observer?
    let limits: RequestLimits
    /// Open connections and their header deadlines.
    let connections: ConnectionTracker
    /// Requests whose headers arrived and whose completion has not been reported yet.
    let inFlight = Atomic<Int>(0)
    /// Set once shutdown begins: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)

    init(responder: any HTTPResponder, observer: HTTPServer.Observer?, configuration: HTTPServer.Configuration) {
        self.responder = responder
        self.observer = observer
        self.limits = RequestLimits(configuration)
        self.connections = ConnectionTracker(headerTimeoutSeconds: configuration.headerTimeout)
    }

    var maximumBodySize: Int { limits.maximumBodySize }
}

/// The request limits the access handler enforces, copied from the configuration.
struct RequestLimits: Sendable {
    var maximumBodySize: Int
    var maximumRequestLineBytes: Int
    var maximumQueryArguments: Int
    var maximumHeaderBytes: Int
    var maximumHeaderCount: Int

    init(_ configuration: HTTPServer.Configuration) {
        maximumBodySize = configuration.maximumBodySize
        maximumRequestLineBytes = configuration.maximumRequestLineBytes
        maximumQueryArguments = configuration.maximumQueryArguments
        maximumHeaderBytes = configuration.maximumHeaderBytes
        maximumHeaderCount = configuration.maximumHeaderCount
    }
}

/// One request's state between libmicrohttpd callbacks, stored in `*con_cls`.
///
/// Created when the request line is in (with the raw target), filled in when the headers are in. Not Sendable:
/// libmicrohttpd calls back for one connection on one worker thread at a time.
final class RequestState {
    /// The request target exactly as sent (path and query, not decoded), or nil if it was not captured (then
    /// libmicrohttpd parsed the query arguments itself).
    let rawTarget: [UInt8]?
    /// Set on the first access-handler call, when the headers are complete.
    var headersRead = false
    var request = RequestState.noRequest
    var started: ContinuousClock.Instant = .now
    /// The body went over the limit: further bytes are discarded and the answer is 413.
    var overflowed = false
    /// The request was refused before its body (a limit or its framing): the connection closes after the answer.
    var refused = false
    /// Body bytes read and dropped after overflowing.
    var discarded = 0
    /// The response handed to libmicrohttpd, once there is one.
    var response: HTTPResponse?

    init(rawTarget: [UInt8]?) {
        self.rawTarget = rawTarget
    }

    /// The request, moved out (an empty one takes its place): handing it on then copies none of its parts.
    func takeRequest() -> HTTPRequest {
        var taken = Self.noRequest
        swap(&taken, &request)
        return taken
    }

    /// What stands for the request until its headers are read, and after it is moved out.
    private static var noRequest: HTTPRequest { HTTPRequest(method: .GET, path: "", id: "") }
}

@available(*, unavailable)
extension RequestState: Sendable {}
