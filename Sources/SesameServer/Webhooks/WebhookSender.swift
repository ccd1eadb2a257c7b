import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SesameCore
import SesameCrypto
import Synchronization

/// Posts one signed webhook body to an endpoint and reports the status, synchronously: a
/// ``WebhookSendOutcome/status(_:)`` (a 3xx as is: redirects are not followed) or a short generic reason without the
/// URL, headers or body (`"timeout"`, `"connection refused"`, `"network unreachable"`, `"connection lost"`,
/// `"TLS failure"`, `"bad response"`, `"address not allowed"`, `"bad request"`).
///
/// Before connecting, the URL is checked with `EndpointAddressPolicy.endpoint(url:allowPrivate:allowHTTP:)`, which
/// resolves its host; a URL that fails is refused with `.failed("address not allowed")`. The connection is made to
/// one of the addresses that check returned, never to a name resolved again, so a DNS answer that changes between the
/// check and the connection (DNS rebinding) cannot reach a private address. No proxy is used.
///
/// `https` is TLS 1.2 or later, with the server's certificate verified against the system's trust store (OpenSSL's
/// default locations: on Debian the `ca-certificates` package; `SSL_CERT_FILE` or `SSL_CERT_DIR` name others) for the
/// URL's host name (sent as SNI) or address literal. Any certificate or handshake failure is `"TLS failure"`.
///
/// Connections are kept alive: each endpoint origin (scheme, host, port) keeps up to ``WebhookOutbox/parallelSends``
/// idle connections, reused by later attempts; the least recently used of more than ``maximumSessions`` origins is
/// closed. A kept-alive connection stays with the address it was made to until it closes. A reused connection that
/// the server had closed meanwhile is replaced by a new one within the same attempt. Each request is a `POST` with
/// `Content-Type: application/json`, `User-Agent: Sesame-Webhooks/1` and the body's `Content-Length`. The response
/// body is read and dropped (whatever its framing: length, chunked, or until the server closes), so that the
/// connection can be reused, within the attempt's timeout: a status that arrived counts even when its body does not
/// end in time (the connection is then closed).

public final class WebhookSender: Sendable {
    /// The `User-Agent` of every delivery.
    public static let userAgent = "Sesame-Webhooks/1"
    /// Endpoint origins with connections kept open at once.
    public static let maximumSessions = 32

    /// Whether loopback, private and other non-public addresses may be reached (development and tests only).
    public let allowPrivate: Bool
    /// Whether `http://` URLs may be used besides `https://` (development and tests only).
    public let allowHTTP: Bool
    /// The TLS configuration, made at the first `https` attempt (it loads the trust store).
    private let tls = Mutex<TLSClientContext?>(nil)
    private let trustedRootsFile: String?
    /// The idle connections by origin, with when each origin was last used.
    private let pool = Mutex<[Origin: Idle]>([:])

    /// Creates a sender.
    /// - Parameters:
    ///   - allowPrivate: Allow non-public addresses; `false` in production.
    ///   - allowHTTP: Allow plain `http://`; `false` in production.
    public convenience init(allowPrivate: Bool = false, allowHTTP: Bool = false) {
        self.init(allowPrivate: allowPrivate, allowHTTP: allowHTTP, trustedRootsFile: nil)
    }

    /// Creates a sender that trusts only the PEM roots in `trustedRootsFile` for `https` (tests with their own
    /// authority), or the system's store when it is `nil`.
    init(allowPrivate: Bool, allowHTTP: Bool, trustedRootsFile: String?) {
        self.allowPrivate = allowPrivate
        self.allowHTTP = allowHTTP
        self.trustedRootsFile = trustedRootsFile
        // OpenSSL writes to the socket with write(2): a server that closed the connection must not kill the process.
        _ = Self.ignoreBrokenPipes
    }

    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Sends one attempt and waits for the status; call it from a worker thread (it blocks up to about `timeout`).
    ///
    /// - Parameters:
    ///   - url: The endpoint URL.
    ///   - body: The exact bytes that were signed.
    ///   - headers: Extra headers, normally `webhook-id`, `webhook-timestamp` and `webhook-signature`.
    ///     `Content-Type`, `User-Agent`, `Content-Length` and `Host` are always set by the sender and override values
    ///     given here; a name or value that could break the request (not a token, or a value with a control character)
    ///     is refused with `.failed("bad request")` before connecting.
    ///   - timeout: Seconds allowed for the whole attempt (connect, TLS, send, the status line and the body).
    /// - Returns: The status received, or why there was none.
    public func send(
        url: URL, body: [UInt8], headers: [String: String], timeout: TimeInterval = 15
    ) -> WebhookSendOutcome {
        let deadline = ContinuousClock.now + .seconds(timeout.isNaN ? 0 : min(max(timeout, 0), 3600))
        let endpoint: EndpointAddressPolicy.Endpoint
        do {
            endpoint = try EndpointAddressPolicy.endpoint(
                url: url.absoluteString, allowPrivate: allowPrivate, allowHTTP: allowHTTP
            )
        } catch {
            return .failed("address not allowed")
        }
        guard let request = Self.request(to: endpoint, body: body, headers: headers) else { return .failed("bad request") }
        let origin = Origin(isSecure: endpoint.isSecure, host: endpoint.host, port: endpoint.port)
        do throws(WebhookConnection.Failure) {
            // A kept-alive connection the server closed meanwhile is lost before any status: then once more, anew.
            if let idle = checkOut(origin) {
                do {
                    return finish(try idle.exchange(request, deadline: deadline), on: idle, origin: origin)
                } catch {
                    idle.close()
                    guard error == .lost else { throw error }
                }
            }
            let context = endpoint.isSecure ? try tlsContext() : nil
            let connection = try WebhookConnection(
                addresses: endpoint.addresses, port: endpoint.port, host: endpoint.host, tls: context, deadline: deadline
            )
            return finish(try connection.exchange(request, deadline: deadline), on: connection, origin: origin)
        } catch {
            return .failed(error.reason)
        }
    }

    /// The outcome of `response`; its connection goes back to the pool when it can carry another request.
    private func finish(_ response: WebhookConnection.Response, on connection: WebhookConnection, origin: Origin)
        -> WebhookSendOutcome
    {
        if response.reusable { checkIn(connection, origin: origin) } else { connection.close() }
        return .status(response.status)
    }

    /// The whole request, or `nil` when a caller's header could break it.
    private static func request(
        to endpoint: EndpointAddressPolicy.Endpoint, body: [UInt8], headers: [String: String]
    ) -> [UInt8]? {
        let fixed = ["host", "content-type", "user-agent", "content-length", "transfer-encoding", "connection"]
        var head = "POST \(endpoint.target) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nContent-Type: application/json\r\n"
            + "User-Agent: \(userAgent)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where !fixed.contains(name.lowercased()) {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenCharacter),
                value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
            else { return nil }
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The TLS configuration, made once.
    private func tlsContext() throws(WebhookConnection.Failure) -> TLSClientContext {
        let made = tls.withLock { context -> TLSClientContext? in
            if context == nil { context = try? TLSClientContext(trustedRootsFile: trustedRootsFile) }
            return context
        }
        guard let made else { throw .tls }
        return made
    }

    // MARK: - Pool

    /// An endpoint origin: connections are shared by the URLs of one origin.
    private struct Origin: Hashable {
        let isSecure: Bool
        let host: String
        let port: UInt16
    }

    /// One origin's idle connections and when it was last used.
    private struct Idle {
        var connections: [WebhookConnection] = []
        var lastUsed: UInt64
    }

    /// An idle connection to `origin` the server has not closed, if there is one; marks the origin used (opening its
    /// place in the pool, and closing the least recently used origin's connections when there are too many).
    private func checkOut(_ origin: Origin) -> WebhookConnection? {
        let now = DispatchTime.now().uptimeNanoseconds
        let (taken, stale) = pool.withLock { pool -> (WebhookConnection?, [WebhookConnection]) in
            var stale: [WebhookConnection] = []
            if pool[origin] == nil, pool.count >= Self.maximumSessions,
               let oldest = pool.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key {
                stale = pool.removeValue(forKey: oldest)?.connections ?? []
            }
            pool[origin, default: Idle(lastUsed: now)].lastUsed = now
            while let connection = pool[origin]?.connections.popLast() {
                if !connection.isStale { return (connection, stale) }
                stale.append(connection)
            }
            return (nil, stale)
        }
        stale.forEach { $0.close() }
        return taken
    }

    /// Keeps `connection` for the next attempt to `origin`, unless the origin left the pool meanwhile or has enough.
    private func checkIn(_ connection: WebhookConnection, origin: Origin) {
        let kept = pool.withLock { pool in
            guard let count = pool[origin]?.connections.count, count < WebhookOutbox.parallelSends else { return false }
            pool[origin]?.connections.append(connection)
            return true
        }
        if !kept { connection.close() }
    }
}
