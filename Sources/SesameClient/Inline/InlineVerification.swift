public import Foundation

/// Runs the inline passkey for one verification request: options, the passkey on the device, then completion.
///
/// The partner's server creates the request and hands its `request_id` to the app; ``verify(requestID:)`` then
/// calls `POST {base}/request/passkey-options`, runs the ``InlinePasskeyAuthenticator``, posts the assertion to
/// `POST {base}/request/passkey-complete` and returns ``InlineVerificationResult/verified`` or the panel to show.
/// It never throws: every failure becomes a panel that keeps the hand-off (`url`).
///
/// It logs nothing and keeps nothing: the request ID, challenge and credential IDs live only for the call.
/// The app's `verified` is no proof for the partner's server, which reads the outcome by webhook or status.
public struct InlineVerification: Sendable {
    /// The public API base, such as `https://api.example.org/operations`.
    public let baseURL: URL
    private let transport: any InlineVerificationTransport
    private let authenticator: any InlinePasskeyAuthenticator

    /// Creates the helper.
    /// - Parameters:
    ///   - baseURL: the public API base; the endpoints are `{baseURL}/request/passkey-options` and `…-complete`.
    ///   - transport: how the JSON calls travel; `URLSession` unless given.
    ///   - authenticator: what runs the passkey, such as `PlatformInlineAuthenticator` on Apple platforms.
    public init(
        baseURL: URL, transport: any InlineVerificationTransport = URLSessionInlineTransport(),
        authenticator: any InlinePasskeyAuthenticator
    ) {
        self.baseURL = baseURL
        self.transport = transport
        self.authenticator = authenticator
    }

    /// Verifies the person for one request with a passkey on this device.
    ///
    /// Coming back from `setupURL`, call it again with the same request ID: options mean a passkey exists now.
    /// - Parameter requestID: the verification request's ID, from the partner's server.
    /// - Returns: ``InlineVerificationResult/verified``, or the panel with the links the server sent.
    public func verify(requestID: String) async -> InlineVerificationResult {
        // 1. passkey-options: no answer, an unreadable one or `.data.error` → failed, no links known yet.
        let request = PasskeyOptionsRequest(requestID: requestID)
        guard let offer = await call("passkey-options", request, as: PasskeyOptionsPayload.self) else {
            return .panel(.failed(code: nil), url: nil, setupURL: nil)
        }
        let url = offer.url.flatMap(URL.init(string:))
        let setupURL = offer.setupURL.flatMap(URL.init(string:))
        if offer.fallback != nil {
            return .panel(InlinePanel(fallbackReason: offer.reason), url: url, setupURL: setupURL)
        }
        guard let options = offer.options, let challengeID = offer.challengeID else {
            // The closed shape `{ outcome, code }` (it has no links), or an options answer missing its parts.
            let panel: InlinePanel =
                offer.outcome == nil ? .failed(code: nil) : InlinePanel(outcome: offer.outcome, code: offer.code)
            return .panel(panel, url: url, setupURL: setupURL)
        }

        // 2. The passkey on the device, with the options unchanged.
        let response: AuthenticationResponseJSON
        do {
            response = try await authenticator.assert(options)
        } catch {
            return .panel(InlinePanel(error), url: url, setupURL: setupURL)
        }

        // 3. passkey-complete: `verified`, else the outcome's panel; the links stay those of the options.
        let completion = PasskeyCompleteRequest(requestID: requestID, challengeID: challengeID, response: response)
        guard let answer = await call("passkey-complete", completion, as: PasskeyCompletePayload.self) else {
            return .panel(.failed(code: nil), url: url, setupURL: setupURL)
        }
        if answer.outcome == "verified" { return .verified }
        return .panel(InlinePanel(outcome: answer.outcome, code: answer.code), url: url, setupURL: setupURL)
    }

    /// Posts `body` to `{baseURL}/request/{operation}` and reads `.data.data`; `nil` for any failure.
    private func call<Payload: Decodable>(
        _ operation: String, _ body: some Encodable, as _: Payload.Type
    ) async -> Payload? {
        let endpoint = baseURL.appending(path: "request").appending(path: operation)
        guard let json = try? JSONEncoder().encode(body),
            let answer = try? await transport.post(endpoint, json: json),
            let envelope = try? JSONDecoder().decode(InlineEnvelope<Payload>.self, from: answer)
        else { return nil }
        return envelope.payload
    }
}
