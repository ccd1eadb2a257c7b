import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif


/// A whole Sesame server on a loopback port, with a manual clock, one project (relying party `id.example`, hosted
/// pages on `https://app.id.example`), one partner with a live and a test API key, and a software authenticator that
/// holds every person's passkeys.
final class InlineHarness: @unchecked Sendable {
    static let rpID = "id.example"
    static let appURL = "https://app.id.example"
    static let apiURL = "https://api.id.example"
    /// The origin an iOS app's assertion reports.
    static let iosOrigin = "https://id.example"

    let clock: ManualClock
    let application: SesameApplication
    let server: HTTPServer
    let projectID: String
    let partner: Partner
    let liveKey: String
    let testKey: String
    let authenticator = SoftwareAuthenticator()

    init(_ backend: Backend, appURL: String = InlineHarness.appURL, tokenSigner: (any VerificationTokenSigner)? = nil,
         store: Store? = nil, masterKeys: MasterKeyring? = nil, ipLimit: Int = 60, siteKeyLimit: Int = 600) throws {
        clock = ManualClock(Date())
        let inline = InlineConfiguration(appURL: appURL, apiURL: Self.apiURL, allowLocalWebhooks: true, publicCallsPerMinutePerIP: ipLimit,
                                         widgetCallsPerMinutePerSiteKey: siteKeyLimit)
        let sesame = Sesame(store: try store ?? Store.open(try backend.makeURL()), clock: clock, inline: inline,
                            masterKeys: masterKeys ?? MasterKeyring(current: .generate()), tokenSigner: tokenSigner)
        application = SesameApplication(sesame: sesame, log: nil)
        // The ID project of the hosted setup page (InlineConfiguration.idProjectID) is `default`.
        projectID = try sesame.projects.create(id: "default", name: "ID", relyingPartyID: Self.rpID, relyingPartyName: "Sesame ID").id
        // Passkeys are made on the project's own pages (the setup page comes with the web issue); tests register them
        // through the domain from this origin.
        _ = try sesame.projects.addPlatform(projectID: projectID, .web(hostname: "app.\(Self.rpID)"))
        partner = try sesame.partners.create(projectID: projectID, name: "Ticketz")
        liveKey = try sesame.partners.createAPIKey(partnerID: partner.id, environment: .live).secret
        testKey = try sesame.partners.createAPIKey(partnerID: partner.id, environment: .test).secret
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.threadCount = 8
        server = application.makeServer(configuration: configuration)
        try server.start()
    }

    deinit { server.shutdown() }

    /// Cookies are the tests' to send (the setup page's), never a shared store's: every harness is on 127.0.0.1, and
    /// cookies do not tell ports apart.
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration)
    }()

    var sesame: Sesame { application.sesame }
    var base: String { "http://127.0.0.1:\(server.boundPort)" }

    // MARK: People and links

    /// A person of the project with `passkeys` passkeys on this harness's authenticator.
    /// - Returns: the user ID and the credential IDs.
    func person(passkeys: Int = 1) throws -> (id: String, credentials: [[UInt8]]) {
        let user = try sesame.users.create(projectID: projectID, id: nil, email: nil, password: nil, name: nil)
        var credentials: [[UInt8]] = []
        for _ in 0..<passkeys { credentials.append(try addPasskey(userID: user.id)) }
        return (user.id, credentials)
    }

    /// Registers one more passkey for a person, as the setup page will.
    @discardableResult
    func addPasskey(userID: String) throws -> [UInt8] {
        let project = try sesame.projects.get(projectID)
        let user = try sesame.users.get(projectID: projectID, id: userID)
        let session = try sesame.sessions.create(projectID: projectID, userID: userID, provider: "passkey", factors: ["passkey"],
                                                 client: ClientInfo(ip: "127.0.0.1", userAgent: "tests")).session
        let start = try sesame.passkeys.beginRegistration(project: project, user: user, session: session, passkeyID: nil, name: nil,
                                                          requestOrigin: Self.appURL)
        let options = PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: start.rpID, name: start.rpName),
            user: .init(id: Base64URL.encode(start.userHandle), name: start.userName, displayName: start.userDisplayName),
            challenge: Base64URL.encode(start.challenge), pubKeyCredParams: start.algorithms.map { .init(alg: $0) }
        )
        let response = try authenticator.create(options, origin: Self.appURL)
        _ = try sesame.passkeys.finishRegistration(project: project, user: user, session: session, passkeyID: start.passkeyID,
                                                   credentialJSON: Array(try JSONEncoder().encode(response)), requestOrigin: Self.appURL)
        return try Base64URL.decode(response.rawID)
    }

    /// Links `ref` to a person in an environment (as the hand-off's link transaction will).
    @discardableResult
    func link(_ ref: String, to userID: String, environment: PartnerEnvironment = .live) throws -> PartnerLink {
        try sesame.partners.link(partnerID: partner.id, environment: environment, partnerUserRef: ref, userID: userID)
    }

    // MARK: Partner server calls

    /// create-session then create-verification-link with `key`.
    /// - Returns: the `.data.data` of create-verification-link.
    func createRequest(scope: String = "checkout", ref: String? = nil, key: String? = nil, extra: [String: Any] = [:]) async throws
        -> [String: Any]
    {
        let session = try await post("/operations/sdk/create-session", [:], bearer: key ?? liveKey)
        #expect(session.status == 200, "\(session.text)")
        let grant = try #require(session.data?["anchor_grant_token"] as? String)
        var body: [String: Any] = ["scope": scope]
        if let ref { body["partner_user_ref"] = ref }
        body.merge(extra) { $1 }
        let link = try await post("/operations/sdk/create-verification-link", body, bearer: grant)
        #expect(link.status == 200, "\(link.text)")
        return try #require(link.data)
    }

    /// `GET /operations/verification/status` with `key`.
    func status(_ requestID: String, key: String? = nil) async throws -> HTTPReply {
        try await send("GET", "/operations/verification/status?request_id=\(requestID)", body: nil, bearer: key ?? liveKey)
    }

    // MARK: App calls

    /// `passkey-options` for a request; the reply's `.data.data`.
    func options(_ requestID: String) async throws -> HTTPReply {
        try await post("/operations/request/passkey-options", ["request_id": requestID])
    }

    /// Runs the authenticator on an options payload.
    /// - Parameters:
    ///   - credentialID: which of the allowed credentials to use (the authenticator's first usable one by default).
    ///   - origin: the origin the client reports (an iOS app reports `https://{rpId}`).
    func assert(_ payload: [String: Any], credentialID: [UInt8]? = nil, origin: String = InlineHarness.iosOrigin,
                using authenticator: SoftwareAuthenticator? = nil) throws -> [String: Any] {
        let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(payload["options"])))
        let response = try (authenticator ?? self.authenticator).get(options, origin: origin, credentialID: credentialID)
        return try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
    }

    /// `passkey-complete` with an answer.
    func complete(_ requestID: String, challengeID: String, response: [String: Any]) async throws -> HTTPReply {
        try await post("/operations/request/passkey-complete", ["request_id": requestID, "challenge_id": challengeID, "response": response])
    }

    /// options, authenticator, complete: the whole inline run for a request whose options come back.
    func verifyInline(_ requestID: String, credentialID: [UInt8]? = nil) async throws -> HTTPReply {
        let options = try await self.options(requestID)
        let payload = try #require(options.data, "\(options.text)")
        let answer = try assert(payload, credentialID: credentialID)
        return try await complete(requestID, challengeID: try #require(payload["challenge_id"] as? String), response: answer)
    }

    // MARK: HTTP

    func post(_ path: String, _ body: [String: Any], bearer: String? = nil, headers: [String: String] = [:]) async throws -> HTTPReply {
        try await send("POST", path, body: try JSONSerialization.data(withJSONObject: body), bearer: bearer, headers: headers)
    }

    func send(_ method: String, _ path: String, body: Data?, bearer: String? = nil, headers: [String: String] = [:],
              contentType: String? = "application/json") async throws -> HTTPReply {
        var request = URLRequest(url: try #require(URL(string: base + path)))
        request.httpMethod = method
        if let contentType, body != nil { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        let (data, response) = try await Self.session.data(for: request)
        return HTTPReply(response: try #require(response as? HTTPURLResponse), body: data)
    }
}

/// An HTTP response with its JSON body.
struct HTTPReply: CustomStringConvertible {
    let response: HTTPURLResponse
    let body: Data

    var status: Int { response.statusCode }
    var text: String { String(decoding: body, as: UTF8.self) }
    var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    /// `.data.data`, the payload of every success.
    var data: [String: Any]? { (object["data"] as? [String: Any])?["data"] as? [String: Any] }
    /// `.data.error` of the public endpoints.
    var publicError: [String: Any]? { (object["data"] as? [String: Any])?["error"] as? [String: Any] }
    /// `.error` of the partner endpoints.
    var error: [String: Any]? { object["error"] as? [String: Any] }
    func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }
    var description: String { "\(status) \(text)" }

    /// `.data.data` as `{outcome, code?}`.
    var outcome: (outcome: String?, code: String?) { (data?["outcome"] as? String, data?["code"] as? String) }
}

extension InlineHarness {
    /// `answer` with one byte of its signature flipped: genuine in every other part.
    static func flippingSignature(_ answer: [String: Any]) throws -> [String: Any] {
        var answer = answer
        var response = try #require(answer["response"] as? [String: Any])
        var signature = try Base64URL.decode(try #require(response["signature"] as? String))
        signature[signature.count / 2] ^= 0x01
        response["signature"] = Base64URL.encode(signature)
        answer["response"] = response
        return answer
    }

    /// The hosted hand-off page's run: its options, the authenticator at the hosted pages' origin, its completion.
    func verifyByHandOff(_ requestID: String, credentialID: [UInt8]? = nil, using authenticator: SoftwareAuthenticator? = nil) async throws
        -> HTTPReply
    {
        let options = try await post("/operations/handoff/options", ["request_id": requestID])
        let payload = try #require(options.data, "\(options.text)")
        let answer = try assert(payload, credentialID: credentialID, origin: Self.appURL, using: authenticator)
        return try await post("/operations/handoff/complete",
                              ["request_id": requestID, "challenge_id": try #require(payload["challenge_id"] as? String), "response": answer])
    }
}
