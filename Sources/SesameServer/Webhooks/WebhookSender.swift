import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SesameCore
import Synchronization

/// Posts one signed webhook body to an endpoint and reports the status, synchronously: a
/// ``WebhookSendOutcome/status(_:)`` (a 3xx as is: redirects are not followed) or a short generic reason without the
/// URL, headers or body (`"timeout"`, `"connection refused"`, `"host not found"`, `"TLS failure"`,
/// `"address not allowed"`).
///
/// Connections are kept alive: each endpoint origin (scheme, host, port) has one ephemeral `URLSession`, reused by
/// every attempt to it, with at most ``WebhookOutbox/parallelSends`` connections; the least recently used of more than
/// ``WebhookSender/maximumSessions`` origins is closed. Sessions have no cookies, cache or credential storage, and
/// redirects are not followed (a 3xx is reported as ``WebhookSendOutcome/status(_:)``). The response body is read and
/// dropped, so that the connection can be reused, within the attempt's timeout: a status that arrived counts even
/// when its body does not end in time (the connection is then closed). Every request is a `POST` with
/// `Content-Type: application/json` and `User-Agent: Sesame-Webhooks/1`.
///
/// Before connecting, the URL is checked with `EndpointAddressPolicy.check(url:allowPrivate:allowHTTP:)`
/// and refused with `.failed("address not allowed")` when it fails.
///
/// - Important: Known limitation (DNS rebinding window): the address check resolves the host, and `URLSession`
///   then resolves it again on its own to connect. A name whose DNS answer changes between the two lookups (a short
///   TTL controlled by an attacker) can still reach a private address. Closing the gap needs connecting to the
///   checked address itself (or an egress proxy that filters addresses, such as smokescreen); run the webhook
///   worker where it cannot reach internal services. The HTTP client may also honour the process's proxy
///   environment variables (`https_proxy`, `no_proxy`). A kept-alive connection stays with the address it was made
///   to until it closes.
public final class WebhookSender: Sendable {
    /// The `User-Agent` of every delivery.
    public static let userAgent = "Sesame-Webhooks/1"
    /// Endpoint origins with a session kept open at once.
    public static let maximumSessions = 32

    /// Whether loopback, private and other non-public addresses may be reached (development and tests only).
    public let allowPrivate: Bool
    /// Whether `http://` URLs may be used besides `https://` (development and tests only).
    public let allowHTTP: Bool
    /// The open sessions by origin and timeout, with when each was last used.
    private let sessions = Mutex<[SessionKey: OpenSession]>([:])

    /// Creates a sender.
    /// - Parameters:
    ///   - allowPrivate: Allow non-public addresses; `false` in production.
    ///   - allowHTTP: Allow plain `http://`; `false` in production.
    public init(allowPrivate: Bool = false, allowHTTP: Bool = false) {
        self.allowPrivate = allowPrivate
        self.allowHTTP = allowHTTP
    }

    deinit {
        // A session retains its delegate until it is invalidated.
        for open in sessions.withLock({ Array($0.values) }) { open.session.invalidateAndCancel() }
    }

    /// Sends one attempt and waits for the status; call it from a worker thread (it blocks up to about `timeout`).
    ///
    /// - Parameters:
    ///   - url: The endpoint URL.
    ///   - body: The exact bytes that were signed.
    ///   - headers: Extra headers, normally `webhook-id`, `webhook-timestamp` and `webhook-signature`.
    ///     `Content-Type` and `User-Agent` are always set by the sender and override values given here.
    ///   - timeout: Seconds allowed for the whole attempt (connect, TLS, send, and the status line).
    /// - Returns: The status received, or why there was none.
    public func send(
        url: URL, body: [UInt8], headers: [String: String], timeout: TimeInterval = 15
    ) -> WebhookSendOutcome {
        do {
            try EndpointAddressPolicy.check(url: url, allowPrivate: allowPrivate, allowHTTP: allowHTTP)
        } catch {
            return .failed("address not allowed")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        request.httpBody = Data(body)

        let open = session(for: url, timeout: timeout)
        let attempt = Attempt()
        let task = open.session.dataTask(with: request)
        open.router.register(attempt, for: task.taskIdentifier)
        task.resume()
        // URLSession enforces `timeout` itself; the margin only guards against a callback that never comes.
        guard let outcome = attempt.wait(until: .now() + timeout + 5) else {
            task.cancel()
            return .failed("timeout")
        }
        return outcome
    }

    /// The kept-alive session of `url`'s origin, opened if there is none (closing the least recently used one when
    /// there are too many).
    private func session(for url: URL, timeout: TimeInterval) -> OpenSession {
        let key = SessionKey(scheme: url.scheme ?? "", host: url.host ?? "", port: url.port, timeout: timeout)
        let (open, evicted) = sessions.withLock { sessions -> (OpenSession, OpenSession?) in
            if let open = sessions[key] {
                open.lastUsed.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
                return (open, nil)
            }
            var evicted: OpenSession?
            if sessions.count >= Self.maximumSessions,
               let oldest = sessions.min(by: { $0.value.lastUsed.load(ordering: .relaxed) < $1.value.lastUsed.load(ordering: .relaxed) }) {
                evicted = sessions.removeValue(forKey: oldest.key)
            }
            let open = OpenSession(timeout: timeout)
            sessions[key] = open
            return (open, evicted)
        }
        // Attempts in flight on it finish first.
        evicted?.session.finishTasksAndInvalidate()
        return open
    }

    /// What a session is kept for: an endpoint's origin, and the timeout its configuration carries.
    private struct SessionKey: Hashable {
        let scheme: String
        let host: String
        let port: Int?
        let timeout: TimeInterval
    }

    /// One origin's session and the delegate that hands each task's events to its attempt.
    private final class OpenSession: Sendable {
        let session: URLSession
        let router = Router()
        /// `DispatchTime` nanoseconds of the last attempt.
        let lastUsed = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)

        init(timeout: TimeInterval) {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
            configuration.urlCache = nil
            configuration.urlCredentialStorage = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout
            configuration.httpMaximumConnectionsPerHost = WebhookOutbox.parallelSends
            session = URLSession(configuration: configuration, delegate: router, delegateQueue: nil)
        }
    }

    /// The delegate of one session: routes each task's events to its attempt, until the task completes.
    private final class Router: NSObject, URLSessionDataDelegate, Sendable {
        private let attempts = Mutex<[Int: Attempt]>([:])

        func register(_ attempt: Attempt, for task: Int) { attempts.withLock { $0[task] = attempt } }

        private func attempt(_ task: URLSessionTask) -> Attempt? { attempts.withLock { $0[task.taskIdentifier] } }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)  // never follow: the 3xx itself becomes the result
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            completionHandler(.allow)  // the body is read and dropped, so that the connection can be reused
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let attempt = attempts.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            // A status that arrived counts, even when the body was then cut off or timed out.
            if let response = task.response as? HTTPURLResponse {
                attempt.finish(.status(response.statusCode))
            } else if let error {
                attempt.finish(.failed(Attempt.reason(for: error)))
            } else {
                attempt.finish(.failed("bad response"))
            }
        }
    }

    /// One attempt: records the first result and wakes the waiting thread.
    private final class Attempt: Sendable {
        private let result = Mutex<WebhookSendOutcome?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        /// Waits for the result until `deadline`; `nil` if none came.
        func wait(until deadline: DispatchTime) -> WebhookSendOutcome? {
            _ = finished.wait(timeout: deadline)
            return result.withLock { $0 }
        }

        /// Records `outcome` unless a result is already there, and wakes the waiter the first time.
        func finish(_ outcome: WebhookSendOutcome) {
            let first = result.withLock { current in
                guard current == nil else { return false }
                current = outcome
                return true
            }
            if first { finished.signal() }
        }

        /// A short, generic reason for a transport error.
        static func reason(for error: any Error) -> String {
            guard let code = (error as? URLError)?.code else { return "network error" }
            switch code {
            case .timedOut: return "timeout"
            case .cannotConnectToHost: return "connection refused"
            case .cannotFindHost, .dnsLookupFailed: return "host not found"
            case .networkConnectionLost: return "connection lost"
            case .notConnectedToInternet: return "network unreachable"
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
                .clientCertificateRequired:
                return "TLS failure"
            case .badServerResponse, .cannotParseResponse, .zeroByteResource: return "bad response"
            case .cancelled: return "cancelled"
            default: return "network error"
            }
        }
    }
}
