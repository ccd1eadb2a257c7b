import Foundation
import SesameCrypto
import SesameHTTP
import Synchronization

/// A real HTTP endpoint for webhook tests: listens on 127.0.0.1 (a random port), records every request, and
/// answers with a configurable sequence of statuses.
///
/// It checks Standard Webhooks signatures itself (HMAC-SHA256 from SesameCrypto, constant-time comparison), on
/// purpose independently of SesameCore's implementation, so that a test compares two implementations.
///
/// ```swift
/// let receiver = try WebhookReceiver(secrets: [secret], statuses: [500, 500, 200])
/// defer { receiver.stop() }
/// // ... deliver to receiver.url ...
/// #expect(receiver.waitFor(count: 3, timeout: 5))
/// #expect(receiver.deliveries.allSatisfy(\.signatureVerified))
/// ```
public final class WebhookReceiver: Sendable {
    /// One request as received.
    public struct Delivery: Sendable {
        /// The request method, such as `"POST"`.
        public let method: String
        /// The request path, such as `"/webhook"`.
        public let path: String
        /// All request headers.
        public let headers: HTTPHeaders
        /// The `webhook-id` header.
        public let id: String?
        /// The `webhook-timestamp` header.
        public let timestamp: String?
        /// The `webhook-signature` header.
        public let signature: String?
        /// The raw body.
        public let body: [UInt8]
        /// Whether the signature verified against the receiver's secrets at arrival, timestamp tolerance included.
        public let signatureVerified: Bool
        /// When the request arrived, by the receiver's clock.
        public let receivedAt: Date
        /// The status the receiver answered with.
        public let answeredStatus: Int
    }

    private struct State {
        var deliveries: [Delivery] = []
        var secrets: [String]
        var statuses: [Int]
        var location: String?
    }

    /// The recorded requests and settings, shared with the route handler (which cannot capture `self` in `init`).
    private final class Recorder: Sendable {
        let state: Mutex<State>
        let tolerance: TimeInterval
        let now: @Sendable () -> Date

        init(_ state: State, tolerance: TimeInterval, now: @escaping @Sendable () -> Date) {
            self.state = Mutex(state)
            self.tolerance = tolerance
            self.now = now
        }
    }

    private let recorder: Recorder
    private let server: HTTPServer
    /// The base URL, `http://127.0.0.1:<port>`.
    private let base: String

    /// The default delivery URL, `http://127.0.0.1:<port>/webhook`.
    public var url: URL { url(path: "/webhook") }

    /// A URL on this receiver; every single-segment path is recorded alike.
    /// - Parameter path: A path such as `"/moved"`.
    /// - Returns: The URL.
    public func url(path: String) -> URL {
        URL(string: base + path)!
    }

    /// Starts a receiver.
    /// - Parameters:
    ///   - secrets: The `whsec_` secrets signatures are checked against.
    ///   - statuses: The status for the 1st, 2nd, ... request; the last one repeats (`[410]` answers 410 forever).
    ///   - location: A `Location` header added to 3xx answers (for redirect tests).
    ///   - tolerance: The timestamp tolerance of the signature check, in seconds.
    ///   - now: The receiver's clock, which timestamps are checked against: the wall clock unless told. A test whose
    ///     sender runs on a hand-moved clock passes that clock, so that neither a moved clock nor a slow run (a test
    ///     suspended for minutes on a loaded machine) ages a delivery.
    /// - Throws: ``HTTPServerError`` when the server cannot start.
    public init(
        secrets: [String], statuses: [Int] = [200], location: String? = nil, tolerance: TimeInterval = 300,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(HTTPServerError) {
        precondition(!statuses.isEmpty, "WebhookReceiver needs at least one status")
        let recorder = Recorder(State(secrets: secrets, statuses: statuses, location: location), tolerance: tolerance, now: now)
        self.recorder = recorder
        var router = Router()
        let handler: @Sendable (HTTPRequest) -> HTTPResponse = { request in
            Self.record(request, in: recorder)
        }
        for method in [HTTPMethod.POST, .PUT, .GET] {
            router.add(method, "/:path", requiresJSONBody: false, handler)
        }
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.threadCount = 4
        configuration.maximumBodySize = 1 << 20
        server = HTTPServer(configuration: configuration, responder: router)
        try server.start()
        base = "http://127.0.0.1:\(server.boundPort)"
    }

    /// Every request received so far, in arrival order.
    public var deliveries: [Delivery] {
        recorder.state.withLock { $0.deliveries }
    }

    /// Replaces the secrets later requests are checked against (for rotation tests).
    /// - Parameter secrets: The `whsec_` secrets.
    public func setSecrets(_ secrets: [String]) {
        recorder.state.withLock { $0.secrets = secrets }
    }

    /// Replaces the status sequence; it applies from the next request on, counted from the first request ever.
    /// - Parameter statuses: The statuses; the last one repeats.
    public func setStatuses(_ statuses: [Int]) {
        precondition(!statuses.isEmpty, "WebhookReceiver needs at least one status")
        recorder.state.withLock { $0.statuses = statuses }
    }

    /// Replaces the `Location` header of later 3xx answers; `nil` sends none.
    /// - Parameter location: The redirect target, for example another receiver's URL.
    public func setLocation(_ location: String?) {
        recorder.state.withLock { $0.location = location }
    }

    /// Waits until at least `count` requests were recorded.
    /// - Parameters:
    ///   - count: The number of requests to wait for.
    ///   - timeout: Seconds to wait at most.
    /// - Returns: `true` if `count` requests arrived in time.
    public func waitFor(count: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if recorder.state.withLock({ $0.deliveries.count }) >= count { return true }
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Stops listening; idempotent.
    public func stop() {
        server.shutdown(timeout: .seconds(1))
    }

    /// Records `request` and chooses its answer.
    private static func record(_ request: HTTPRequest, in recorder: Recorder) -> HTTPResponse {
        let tolerance = recorder.tolerance
        let now = recorder.now()
        let id = request.headers["webhook-id"]
        let timestamp = request.headers["webhook-timestamp"]
        let signature = request.headers["webhook-signature"]
        return recorder.state.withLock { state in
            let verified = verify(
                body: request.body, id: id, timestamp: timestamp, signature: signature, secrets: state.secrets,
                now: now, tolerance: tolerance
            )
            let status = state.statuses[min(state.deliveries.count, state.statuses.count - 1)]
            state.deliveries.append(
                Delivery(
                    method: request.method.rawValue, path: request.path, headers: request.headers, id: id,
                    timestamp: timestamp, signature: signature, body: request.body, signatureVerified: verified,
                    receivedAt: now, answeredStatus: status
                )
            )
            var response = HTTPResponse.text(status == 410 ? "gone" : "ok", status: status)
            if (300...399).contains(status), let location = state.location {
                response.headers.set("Location", location)
            }
            return response
        }
    }

    /// The receiver side of Standard Webhooks 1.0, written independently of SesameCore.
    ///
    /// True when `timestamp` is integer seconds within `tolerance` of `now` and some `v1,` entry of `signature`
    /// equals (constant time) HMAC-SHA256(key, "{id}.{timestamp}.{body}") for the key of some `whsec_` secret.
    /// - Parameters:
    ///   - body: The raw body.
    ///   - id: The `webhook-id` header.
    ///   - timestamp: The `webhook-timestamp` header.
    ///   - signature: The `webhook-signature` header.
    ///   - secrets: The trusted `whsec_` secrets.
    ///   - now: The current time.
    ///   - tolerance: The allowed clock difference, in seconds.
    /// - Returns: Whether the delivery is authentic and fresh.
    public static func verify(
        body: [UInt8], id: String?, timestamp: String?, signature: String?, secrets: [String], now: Date,
        tolerance: TimeInterval = 300
    ) -> Bool {
        guard let id, !id.isEmpty, let timestamp, let signature,
            !timestamp.isEmpty, timestamp.allSatisfy({ $0.isASCII && $0.isNumber }),
            let seconds = Double(timestamp), abs(now.timeIntervalSince1970 - seconds) <= tolerance
        else { return false }
        let signed = Array("\(id).\(timestamp).".utf8) + body
        let candidates = signature.split(separator: " ").compactMap { entry -> [UInt8]? in
            guard entry.hasPrefix("v1,"), let data = Data(base64Encoded: String(entry.dropFirst(3))) else { return nil }
            return [UInt8](data)
        }
        var verified = false
        for secret in secrets where secret.hasPrefix("whsec_") {
            var encoded = String(secret.dropFirst(6))
            while encoded.utf8.count % 4 != 0 { encoded += "=" }
            guard let key = Data(base64Encoded: encoded) else { continue }
            let expected = HMAC.sha256(key: [UInt8](key), message: signed)
            for candidate in candidates where constantTimeEquals(candidate, expected) { verified = true }
        }
        return verified
    }
}
