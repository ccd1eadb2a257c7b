import Foundation
import SesameClient
import Synchronization
import Testing
import WebAuthn

/// The inline-verification helper against scripted server answers, with the real software authenticator.
@Suite struct InlineVerificationTests {
    static let base = "http://127.0.0.1:8080/operations"
    static let handOff =
        "https://app.example.org/verify?request_id=req_4b1f0c6e2a9d4e7f8a3b5c6d7e8f9a0b"
    static let setup = "https://app.example.org/app/account/passkey"
    static let requestID = "req_4b1f0c6e2a9d4e7f8a3b5c6d7e8f9a0b"
    static let challengeID = "6f1d3c1e-8a2b-4c7d-9e0f-1a2b3c4d5e6f"

    let rp = TestRelyingParty()
    let authenticator = SoftwareAuthenticator()
    let record: CredentialRecord
    let challenge = TestRelyingParty.challenge()

    init() throws {
        record = try rp.register(authenticator)
    }

    // MARK: Helpers

    /// `{ "data": { "data": payload } }`.
    static func envelope(_ payload: String) -> String { #"{"data":{"data":\#(payload)}}"# }

    /// The options payload, allowing `allow` (the registered credential unless given).
    func optionsPayload(allow: [[UInt8]]? = nil) -> String {
        let allowed = (allow ?? [record.id]).map {
            #"{"id":"\#(Base64URL.encode($0))","type":"public-key","transports":["internal","hybrid"]}"#
        }
        return #"""
            {"options":{"rpId":"\#(rp.id)","challenge":"\#(Base64URL.encode(challenge))",\#
            "allowCredentials":[\#(allowed.joined(separator: ","))],"userVerification":"required","timeout":60000},\#
            "challenge_id":"\#(Self.challengeID)","expires_at":"2026-11-10T17:09:05.000Z",\#
            "url":"\#(Self.handOff)","setup_url":"\#(Self.setup)"}
            """#
    }

    /// The panel result with the links the options answer carried.
    static func panelWithLinks(_ panel: InlinePanel) -> InlineVerificationResult {
        .panel(panel, url: URL(string: handOff), setupURL: URL(string: setup))
    }

    /// Runs `verify` for ``requestID`` against the script, with the software authenticator unless given.
    func run(
        options: ScriptedTransport.Reply, complete: ScriptedTransport.Reply? = nil,
        base: String = Self.base,
        authenticator custom: (any InlinePasskeyAuthenticator)? = nil
    ) async throws -> (InlineVerificationResult, [ScriptedTransport.Sent]) {
        let transport = ScriptedTransport(options: options, complete: complete)
        let verification = InlineVerification(
            baseURL: try #require(URL(string: base)), transport: transport,
            authenticator: custom ?? SoftwareInlineAuthenticator(authenticator, origin: rp.origin))
        let result = await verification.verify(requestID: Self.requestID)
        return (result, transport.sent)
    }

    /// The JSON object in `data`.
    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    // MARK: Success

    @Test("options, a passkey and `verified` give .verified, with the bodies the server expects")
    func verified() async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())),
            complete: .body(Self.envelope(#"{"outcome":"verified"}"#)))
        #expect(result == .verified)
        try #require(sent.count == 2)

        #expect(sent[0].url.absoluteString == Self.base + "/request/passkey-options")
        #expect(try Self.object(sent[0].body) as? [String: String] == ["request_id": Self.requestID])

        #expect(sent[1].url.absoluteString == Self.base + "/request/passkey-complete")
        let complete = try Self.object(sent[1].body)
        #expect(Set(complete.keys) == ["request_id", "challenge_id", "response"])
        #expect(complete["request_id"] as? String == Self.requestID)
        #expect(complete["challenge_id"] as? String == Self.challengeID)
        let raw = try #require(complete["response"] as? [String: Any])
        #expect((raw["clientExtensionResults"] as? [String: Any])?.isEmpty == true)
        #expect(raw["authenticatorAttachment"] as? String == "platform")
        #expect(raw["type"] as? String == "public-key")

        // The response is AuthenticationResponseJSON for the options' challenge, and the real verifier accepts it.
        let response = try JSONDecoder().decode(
            AuthenticationResponseJSON.self, from: JSONSerialization.data(withJSONObject: raw))
        #expect(try bytes(response.rawID) == record.id)
        let clientData = try Self.object(Data(try bytes(response.response.clientDataJSON)))
        #expect(clientData["challenge"] as? String == Base64URL.encode(challenge))
        #expect(clientData["type"] as? String == "webauthn.get")
        #expect(clientData["origin"] as? String == rp.origin)
        let verified = try rp.verify(
            response, challenge: challenge, record: record, allow: [record.id],
            identifiedUserHandle: record.userHandle)
        #expect(verified.credentialID == record.id && verified.userVerified)
    }

    @Test("a base URL with a trailing slash reaches the same endpoints")
    func trailingSlash() async throws {
        let (_, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())),
            complete: .body(Self.envelope(#"{"outcome":"verified"}"#)),
            base: Self.base + "/")
        #expect(
            sent.map(\.url.path) == [
                "/operations/request/passkey-options", "/operations/request/passkey-complete",
            ])
    }

    // MARK: passkey-complete outcomes

    struct CompleteCase: Sendable, CustomTestStringConvertible {
        let payload: String
        let panel: InlinePanel
        var testDescription: String { "\(payload) → \(panel)" }
    }

    @Test(
        "each passkey-complete outcome other than verified gives its panel, with the options' links",
        arguments: [
            CompleteCase(payload: #"{"outcome":"wrong_identity"}"#, panel: .wrongIdentity),
            CompleteCase(
                payload: #"{"outcome":"expired","code":"challenge_expired"}"#,
                panel: .expired(code: "challenge_expired")),
            CompleteCase(
                payload: #"{"outcome":"expired","code":"request_expired"}"#,
                panel: .expired(code: "request_expired")),
            CompleteCase(payload: #"{"outcome":"failed","code":"link_changed"}"#, panel: .notLinked),
            CompleteCase(
                payload: #"{"outcome":"failed","code":"assertion_invalid"}"#,
                panel: .failed(code: "assertion_invalid")),
            CompleteCase(
                payload: #"{"outcome":"failed","code":"user_not_verified"}"#,
                panel: .failed(code: "user_not_verified")),
            CompleteCase(
                payload: #"{"outcome":"failed","code":"unknown_request"}"#,
                panel: .failed(code: "unknown_request")),
            CompleteCase(
                payload: #"{"outcome":"failed","code":"request_closed"}"#,
                panel: .failed(code: "request_closed")),
            CompleteCase(
                payload: #"{"outcome":"failed","code":"completion_failed"}"#,
                panel: .failed(code: "completion_failed")),
            CompleteCase(payload: #"{"outcome":"failed"}"#, panel: .failed(code: nil)),
            CompleteCase(
                payload: #"{"outcome":"a_future_outcome","code":"x"}"#, panel: .failed(code: "x")),
            CompleteCase(payload: #"{}"#, panel: .failed(code: nil)),
        ])
    func completeOutcome(_ testCase: CompleteCase) async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())),
            complete: .body(Self.envelope(testCase.payload)))
        #expect(result == Self.panelWithLinks(testCase.panel))
        #expect(sent.count == 2)
    }

    // MARK: passkey-options shapes

    @Test(
        "a fallback gives its reason's panel with url and setup_url, and runs no passkey",
        arguments: [
            ("not_linked", InlinePanel.notLinked), ("no_passkey", .noPasskey),
            ("a_future_reason", .failed(code: nil)),
        ])
    func fallback(reason: String, panel: InlinePanel) async throws {
        let payload =
            #"{"fallback":"app","reason":"\#(reason)","url":"\#(Self.handOff)","setup_url":"\#(Self.setup)"}"#
        let (result, sent) = try await run(
            options: .body(Self.envelope(payload)), authenticator: ScriptedAuthenticator(error: .failed))
        #expect(result == Self.panelWithLinks(panel))
        #expect(sent.count == 1)
    }

    @Test(
        "a closed request gives an expired or failed panel without links",
        arguments: [
            (
                #"{"outcome":"expired","code":"request_expired"}"#,
                InlinePanel.expired(code: "request_expired")
            ),
            (#"{"outcome":"failed","code":"unknown_request"}"#, .failed(code: "unknown_request")),
            (#"{"outcome":"failed","code":"request_closed"}"#, .failed(code: "request_closed")),
        ])
    func closed(payload: String, panel: InlinePanel) async throws {
        let (result, sent) = try await run(options: .body(Self.envelope(payload)))
        #expect(result == .panel(panel, url: nil, setupURL: nil))
        #expect(sent.count == 1)
    }

    // MARK: Server errors, unreadable answers, no answer

    @Test(
        ".data.error from passkey-options is treated like a fallback: failed, no links known",
        arguments: [500, 429])
    func serverErrorOnOptions(status: Int) async throws {
        let body = #"{"data":{"error":{"statusCode":\#(status),"message":"internal_error"}}}"#
        let (result, sent) = try await run(options: .body(body))
        #expect(result == .panel(.failed(code: nil), url: nil, setupURL: nil))
        #expect(sent.count == 1)
    }

    @Test(
        ".data.error from passkey-complete gives failed with the options' links", arguments: [500, 429])
    func serverErrorOnComplete(status: Int) async throws {
        let body = #"{"data":{"error":{"statusCode":\#(status),"message":"internal_error"}}}"#
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())), complete: .body(body))
        #expect(result == Self.panelWithLinks(.failed(code: nil)))
        #expect(sent.count == 2)
    }

    @Test(
        "an unreadable passkey-options answer gives failed without links",
        arguments: [
            "", "not json", "<html>502 Bad Gateway</html>", "[]", "{}", #"{"data":{}}"#,
            #"{"data":{"data":null}}"#,
            #"{"data":{"data":"options"}}"#, #"{"data":{"data":{}}}"#, #"{"error":{"statusCode":500}}"#,
        ])
    func malformedOptions(body: String) async throws {
        let (result, sent) = try await run(options: .body(body))
        #expect(result == .panel(.failed(code: nil), url: nil, setupURL: nil))
        #expect(sent.count == 1)
    }

    @Test("options without a usable challenge or challenge_id give failed, keeping the links")
    func incompleteOptions() async throws {
        let links = #""url":"\#(Self.handOff)","setup_url":"\#(Self.setup)""#
        let noChallenge = #"{"options":{"rpId":"example.org"},"challenge_id":"c",\#(links)}"#
        let noChallengeID = optionsPayload().replacingOccurrences(of: #""challenge_id""#, with: #""other""#)
        for payload in [noChallenge, noChallengeID] {
            let (result, sent) = try await run(options: .body(Self.envelope(payload)))
            #expect(result == Self.panelWithLinks(.failed(code: nil)))
            #expect(sent.count == 1)
        }
    }

    @Test(
        "an unreadable passkey-complete answer gives failed with the options' links",
        arguments: [
            "", "<html>502 Bad Gateway</html>", #"{"data":{}}"#, #"{"data":{"data":"verified"}}"#,
        ])
    func malformedComplete(body: String) async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())), complete: .body(body))
        #expect(result == Self.panelWithLinks(.failed(code: nil)))
        #expect(sent.count == 2)
    }

    @Test("no answer to passkey-options gives failed without links")
    func transportFailsOnOptions() async throws {
        let (result, sent) = try await run(options: .failure)
        #expect(result == .panel(.failed(code: nil), url: nil, setupURL: nil))
        #expect(sent.count == 1)
    }

    @Test("no answer to passkey-complete gives failed with the options' links")
    func transportFailsOnComplete() async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())), complete: .failure)
        #expect(result == Self.panelWithLinks(.failed(code: nil)))
        #expect(sent.count == 2)
    }

    @Test("the URLSession transport reports an unreachable server, which gives failed")
    func urlSessionUnreachable() async throws {
        // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
        let url = try #require(URL(string: "http://127.0.0.1:1/operations/request/passkey-options"))
        await #expect(throws: (any Error).self) {
            _ = try await URLSessionInlineTransport().post(url, json: Data("{}".utf8))
        }
        let verification = InlineVerification(
            baseURL: try #require(URL(string: "http://127.0.0.1:1/operations")),
            authenticator: ScriptedAuthenticator(error: .failed))
        #expect(
            await verification.verify(requestID: Self.requestID)
                == .panel(.failed(code: nil), url: nil, setupURL: nil))
    }

    // MARK: The device

    @Test(
        "an authenticator holding none of allowCredentials gives noCredential with the links, and no completion"
    )
    func noMatchingCredential() async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload(allow: [Array(repeating: 7, count: 16)]))))
        #expect(result == Self.panelWithLinks(.noCredential))
        #expect(sent.count == 1)
    }

    @Test("the software authenticator reports a missing credential as noCredential")
    func softwareNoCredential() async throws {
        let empty = SoftwareInlineAuthenticator(SoftwareAuthenticator(), origin: rp.origin)
        await #expect(throws: InlineAuthenticatorError.noCredential) {
            _ = try await empty.assert(rp.requestOptions(challenge: challenge, allow: [record.id]))
        }
        await #expect(throws: InlineAuthenticatorError.noCredential) {
            _ = try await empty.assert(rp.requestOptions(challenge: challenge))
        }
        await #expect(throws: InlineAuthenticatorError.failed) {
            _ = try await empty.assert(
                PublicKeyCredentialRequestOptionsJSON(challenge: "not base64url!", rpID: rp.id))
        }
    }

    @Test(
        "each device-side failure gives its panel with the links, and no completion",
        arguments: [
            (InlineAuthenticatorError.cancelled, InlinePanel.cancelled), (.noCredential, .noCredential),
            (.notAssociated, .unsupported), (.notSupported, .unsupported), (.failed, .failed(code: nil)),
        ])
    func deviceFailure(error: InlineAuthenticatorError, panel: InlinePanel) async throws {
        let (result, sent) = try await run(
            options: .body(Self.envelope(optionsPayload())),
            authenticator: ScriptedAuthenticator(error: error))
        #expect(result == Self.panelWithLinks(panel))
        #expect(sent.count == 1)
    }
}

/// A transport below the HTTP seam: it records each request and answers from a script, by endpoint.
final class ScriptedTransport: InlineVerificationTransport {
    /// One scripted answer.
    enum Reply: Sendable {
        /// This body, as if with HTTP 200.
        case body(String)
        /// No answer: the post throws.
        case failure
    }

    /// One recorded request.
    struct Sent: Sendable {
        let url: URL
        let body: Data
    }

    struct NoAnswer: Error {}

    private let replies: [String: Reply]
    private let log = Mutex<[Sent]>([])

    init(options: Reply, complete: Reply?) {
        var replies = ["passkey-options": options]
        replies["passkey-complete"] = complete
        self.replies = replies
    }

    /// The requests so far, oldest first.
    var sent: [Sent] { log.withLock { $0 } }

    func post(_ url: URL, json body: Data) async throws -> Data {
        log.withLock { $0.append(Sent(url: url, body: body)) }
        guard case .body(let text) = replies[url.lastPathComponent] else { throw NoAnswer() }
        return Data(text.utf8)
    }
}

/// An authenticator that fails as a device would.
struct ScriptedAuthenticator: InlinePasskeyAuthenticator {
    let error: InlineAuthenticatorError

    func assert(_ options: PublicKeyCredentialRequestOptionsJSON)
        async throws(InlineAuthenticatorError)
        -> AuthenticationResponseJSON
    {
        throw error
    }
}
