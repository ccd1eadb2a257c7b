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
/// Each call uses its own ephemeral `URLSession`: no cookies, no cache, no credential storage, and redirects are
/// not followed (a 3xx is reported as ``WebhookSendOutcome/status(_:)``). The response body is not read: the attempt
/// ends as soon as the status line and headers arrive. Every request is a `POST` with `Content-Type:
/// application/json` and `User-Agent: Sesame-Webhooks/1`.
///
/// Before connecting, the URL is checked with `EndpointAddressPolicy.check(url:allowPrivate:allowHTTP:)`
/// and refused with `.failed("address not allowed")` when it fails.
///
/// - Important: Known limitation (DNS rebinding window): the address check resolves the host, and `URLSession`
///   then resolves it again on its own to connect. A name whose DNS answer changes between the two lookups (a short
///   TTL controlled by an attacker) can still reach a private address. Closing the gap needs connecting to the
///   checked address itself (or an egress proxy that filters addresses, such as smokescreen); run the webhook
///   worker where it cannot reach internal services. The HTTP client may also honour the process's proxy
///   environment variables (`https_proxy`, `no_proxy`).
public final class WebhookSender: Sendable {
    /// The `User-Agent` of every delivery.
    public static let userAgent = "Sesame-Webhooks/1"

    /// Whether loopback, private and other non-public addresses may be reached (development and tests only).
    public let allowPrivate: Bool
    /// Whether `http://` URLs may be used besides `https://` (development and tests only).
    public let allowHTTP: Bool

    /// Creates a sender.
    /// - Parameters:
    ///   - allowPrivate: Allow non-public addresses; `false` in production.
    ///   - allowHTTP: Allow plain `http://`; `false` in production.
    public init(allowPrivate: Bool = false, allowHTTP: Bool = false) {
        self.allowPrivate = allowPrivate
        self.allowHTTP = allowHTTP
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

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpMaximumConnectionsPerHost = 1

        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        request.httpBody = Data(body)

        let attempt = Attempt()
        let session = URLSession(configuration: configuration, delegate: attempt, delegateQueue: nil)
        let task = session.dataTask(with: request)
        task.resume()
        // URLSession enforces `timeout` itself; the margin only guards against a callback that never comes.
        let outcome = attempt.wait(until: .now() + timeout + 5)
        // Releases the delegate (a session retains it until invalidated) and drops the connection.
        session.invalidateAndCancel()
        return outcome ?? .failed("timeout")
    }

    /// The delegate of one attempt: records the first result and wakes the waiting thread.
    private final class Attempt: NSObject, URLSessionDataDelegate, Sendable {
        private let result = Mutex<WebhookSendOutcome?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        /// Waits for the result until `deadline`; `nil` if none came.
        func wait(until deadline: DispatchTime) -> WebhookSendOutcome? {
            _ = finished.wait(timeout: deadline)
            return result.withLock { $0 }
        }

        /// Records `outcome` unless a result is already there, and wakes the waiter the first time.
        private func finish(_ outcome: WebhookSendOutcome) {
            let first = result.withLock { current in
                guard current == nil else { return false }
                current = outcome
                return true
            }
            if first { finished.signal() }
        }

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
            if let http = response as? HTTPURLResponse {
                finish(.status(http.statusCode))
            } else {
                finish(.failed("bad response"))
            }
            completionHandler(.cancel)  // the body is not needed
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if let response = task.response as? HTTPURLResponse {
                finish(.status(response.statusCode))
            } else if let error {
                finish(.failed(Self.reason(for: error)))
            } else {
                finish(.failed("bad response"))
            }
        }

        /// A short, generic reason for a transport error.
        private static func reason(for error: any Error) -> String {
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
