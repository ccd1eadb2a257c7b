public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Carries the SDK's calls to the client API; replace it to add pinning or a test double. It must not log requests
/// or answers: they hold tokens, challenges and credentials.
public protocol AuthsignalTransport: Sendable {
    /// Sends `request` and returns the answer's body and HTTP status, whatever the status.
    /// - Throws: when no answer arrived (no connection, timeout, cancellation).
    func send(_ request: URLRequest) async throws -> (body: Data, status: Int)
}

/// The default ``AuthsignalTransport``, over `URLSession`.
public struct URLSessionAuthsignalTransport: AuthsignalTransport {
    private let session: URLSession

    /// Creates a transport over `session` (`URLSession.shared` unless given).
    public init(session: URLSession = .shared) { self.session = session }

    public func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let (data, response) = try await session.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }
}

/// The client API's calls (`{baseURL}/client/...`) as the iOS SDK makes them: JSON bodies, tenant Basic as base64url
/// without padding of `"<tenantID>:"`, success only with HTTP 200, errors read from `errorCode` (else `error`).
struct AuthsignalAPIClient: Sendable {
    let tenantID: String
    let baseURL: String
    let transport: any AuthsignalTransport

    /// How a call authenticates.
    enum Credential {
        case tenant
        case token(String)
    }

    /// A failed call, as the response's `error` and `errorCode`.
    struct Failure: Error {
        let error: String
        let errorCode: String?
    }

    static let sdkVersion = "2.13.0"

    func post(_ path: String, _ body: [String: Any], _ credential: Credential) async -> Result<[String: Any], Failure> {
        guard let url = URL(string: baseURL + "/client" + path), let data = try? JSONSerialization.data(withJSONObject: body) else {
            return .failure(Failure(error: "The base URL or the request is invalid.", errorCode: SdkErrorCode.networkError.rawValue))
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = data
        return await send(request, credential)
    }

    func get(_ path: String, query: [URLQueryItem], _ credential: Credential) async -> Result<[String: Any], Failure> {
        guard var components = URLComponents(string: baseURL + "/client" + path) else {
            return .failure(Failure(error: "The base URL is invalid.", errorCode: SdkErrorCode.networkError.rawValue))
        }
        components.queryItems = query
        guard let url = components.url else {
            return .failure(Failure(error: "The base URL is invalid.", errorCode: SdkErrorCode.networkError.rawValue))
        }
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        return await send(request, credential)
    }

    private func send(_ request: URLRequest, _ credential: Credential) async -> Result<[String: Any], Failure> {
        var request = request
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("sesame-swift", forHTTPHeaderField: "X-Authsignal-SDK")
        request.setValue(Self.sdkVersion, forHTTPHeaderField: "X-Authsignal-Version")
        request.setValue(tenantID, forHTTPHeaderField: "X-Authsignal-Tenant-ID")
        switch credential {
        case .tenant:
            let encoded = Data("\(tenantID):".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            request.setValue("Basic " + encoded, forHTTPHeaderField: "Authorization")
        case .token(let token):
            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        }
        let answer: (body: Data, status: Int)
        do { answer = try await transport.send(request) } catch {
            return .failure(Failure(error: "The request failed: no answer from the server.", errorCode: SdkErrorCode.networkError.rawValue))
        }
        guard let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] else {
            return .failure(Failure(error: "The answer is not JSON.", errorCode: SdkErrorCode.networkError.rawValue))
        }
        guard answer.status == 200 else {
            let description = object["errorDescription"] as? String ?? ""
            if answer.status == 404, description.isEmpty { return .failure(Failure(error: "Not found.", errorCode: SdkErrorCode.apiError.rawValue)) }
            let code = object["errorCode"] as? String ?? object["error"] as? String
            return .failure(Failure(error: description.isEmpty ? "The request failed (HTTP \(answer.status))." : description, errorCode: code))
        }
        return .success(object)
    }
}
