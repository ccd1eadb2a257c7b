// The JSON shapes of the two public inline endpoints. Every answer is HTTP 200 with `{ "data": { "data": … } }`,
// or `{ "data": { "error": { "statusCode", … } } }` for a server error.

/// The envelope of every answer; ``payload`` is `.data.data`, `nil` when the server sent `.data.error` instead.
struct InlineEnvelope<Payload: Decodable>: Decodable {
    struct Inner: Decodable {
        let data: Payload?
    }

    private let data: Inner

    /// The answer's `.data.data`.
    var payload: Payload? { data.data }
}

/// `POST {base}/request/passkey-options` request body.
struct PasskeyOptionsRequest: Encodable {
    let requestID: String

    private enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
    }
}

/// The `passkey-options` payload: options, fallback or closed; whichever members the shape has.
///
/// A member of the wrong type reads as absent, so a bad `options` still leaves the links readable.
struct PasskeyOptionsPayload: Decodable {
    let options: PublicKeyCredentialRequestOptionsJSON?
    let challengeID: String?
    let url: String?
    let setupURL: String?
    let fallback: String?
    let reason: String?
    let outcome: String?
    let code: String?

    private enum CodingKeys: String, CodingKey {
        case options
        case challengeID = "challenge_id"
        case url
        case setupURL = "setup_url"
        case fallback, reason, outcome, code
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        options = try? container.decodeIfPresent(
            PublicKeyCredentialRequestOptionsJSON.self, forKey: .options)
        challengeID = try? container.decodeIfPresent(String.self, forKey: .challengeID)
        url = try? container.decodeIfPresent(String.self, forKey: .url)
        setupURL = try? container.decodeIfPresent(String.self, forKey: .setupURL)
        fallback = try? container.decodeIfPresent(String.self, forKey: .fallback)
        reason = try? container.decodeIfPresent(String.self, forKey: .reason)
        outcome = try? container.decodeIfPresent(String.self, forKey: .outcome)
        code = try? container.decodeIfPresent(String.self, forKey: .code)
    }
}

/// `POST {base}/request/passkey-complete` request body.
struct PasskeyCompleteRequest: Encodable {
    let requestID: String
    let challengeID: String
    let response: AuthenticationResponseJSON

    private enum CodingKeys: String, CodingKey {
        case requestID = "request_id"
        case challengeID = "challenge_id"
        case response
    }
}

/// The `passkey-complete` payload: `{ outcome, code? }` and nothing else.
struct PasskeyCompletePayload: Decodable {
    let outcome: String?
    let code: String?

    private enum CodingKeys: String, CodingKey {
        case outcome, code
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        outcome = try? container.decodeIfPresent(String.self, forKey: .outcome)
        code = try? container.decodeIfPresent(String.self, forKey: .code)
    }
}
