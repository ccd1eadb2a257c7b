import Synchronization

/// What the C callbacks need from the server; passed to libmicrohttpd as a retained opaque pointer.
///
/// Sendable: every stored property is immutable or atomic.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let observer: HTTPServer.Observer?
    let maximumBodySize: Int
    /// Requests whose headers arrived and whose completion has not been reported yet.
    let inFlight = Atomic<Int>(0)
    /// Set once shutdown begins: responses then carry `Connection: close`.
    let draining = Atomic<Bool>(false)

    init(responder: any HTTPResponder, observer: HTTPServer.Observer?, maximumBodySize: Int) {
        self.responder = responder
        self.observer = observer
        self.maximumBodySize = maximumBodySize
    }
}

/// One request's state between libmicrohttpd callbacks, stored in `*con_cls`.
///
/// Not Sendable: libmicrohttpd calls back for one connection on one worker thread at a time.
final class RequestState {
    var request: HTTPRequest
    let started: ContinuousClock.Instant
    /// The body went over the limit: further bytes are discarded and the answer is 413.
    var overflowed = false
    /// Body bytes read and dropped after overflowing.
    var discarded = 0
    /// The response handed to libmicrohttpd, once there is one.
    var response: HTTPResponse?

    init(request: HTTPRequest, started: ContinuousClock.Instant) {
        self.request = request
        self.started = started
    }
}

@available(*, unavailable)
extension RequestState: Sendable {}
