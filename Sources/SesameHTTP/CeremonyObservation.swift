/// What a route tells the operator about a WebAuthn ceremony it finished or refused; never sent to the client.
///
/// A face attaches it to its response (``HTTPResponse/ceremony``) or to the error it throws (``HTTPError/ceremony``);
/// the server counts it in its metrics and writes ``reason`` into the request log line.
public struct CeremonyObservation: Sendable, Hashable {
    /// The face that ran the ceremony, for example `appwrite`, `inline` or `handoff`.
    public let face: String
    /// `registration` or `authentication`.
    public let ceremony: String
    /// Why it failed: a WebAuthn core code (such as `origin_mismatch`) or a domain reason; empty on success.
    public let reason: String

    /// Creates an observation.
    /// - Parameters:
    ///   - face: the face that ran the ceremony.
    ///   - ceremony: `registration` or `authentication`.
    ///   - reason: the failure's stable code; empty for a success.
    public init(face: String, ceremony: String, reason: String) {
        self.face = face
        self.ceremony = ceremony
        self.reason = reason
    }

    /// Whether the ceremony succeeded (it has no reason).
    public var succeeded: Bool { reason.isEmpty }
}
