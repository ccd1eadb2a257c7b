public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Carries ``InlineVerification``'s JSON calls; replace it to add headers, pinning or a test double.
///
/// Implementations must not log the body: it holds the request ID, the challenge ID and the assertion.
public protocol InlineVerificationTransport: Sendable {
    /// Sends `POST url` with a JSON body and returns the answer's body, whatever its HTTP status.
    /// - Parameters:
    ///   - url: the endpoint, such as `…/operations/request/passkey-options`.
    ///   - body: the UTF-8 JSON request body.
    /// - Returns: the response body.
    /// - Throws: when no answer arrived (no connection, timeout, cancellation).
    func post(_ url: URL, json body: Data) async throws -> Data
}

/// The default ``InlineVerificationTransport``, over `URLSession`.
public struct URLSessionInlineTransport: InlineVerificationTransport {
    private let session: URLSession

    /// Creates a transport.
    /// - Parameter session: the session to send with; `URLSession.shared` unless given.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Sends `POST url` with `Content-Type: application/json` and returns the body for any HTTP status.
    /// - Parameters:
    ///   - url: the endpoint.
    ///   - body: the UTF-8 JSON request body.
    /// - Returns: the response body.
    /// - Throws: the `URLSession` error when no answer arrived.
    public func post(_ url: URL, json body: Data) async throws -> Data {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = body
        let (data, _) = try await session.data(for: request)
        return data
    }
}
