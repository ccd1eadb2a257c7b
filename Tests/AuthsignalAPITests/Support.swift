import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Testing


/// A Sesame application answered in process through its router, with a manual clock, one tenant (relying party
/// `shop.example` with a web platform), its tenant secret, and a software authenticator for the app side.
final class Harness: @unchecked Sendable {
    static let rpID = "shop.example"
    static let origin = "https://shop.example"

    let clock = ManualClock(Date())
    /// The database, for a second server over it.
    let url: String
    let application: SesameApplication
    let tenantID: String
    let secret: String
    /// `@unchecked Sendable`: each test uses its harness from one task at a time, except where it says otherwise.
    let authenticator = SoftwareAuthenticator()

    init(_ backend: Backend, callsPerMinutePerIP: Int = 1000, perIPLimits: Bool = true) throws {
        let inline = InlineConfiguration(publicCallsPerMinutePerIP: callsPerMinutePerIP)
        url = try backend.makeURL()
        let sesame = Sesame(store: try Store.open(url), clock: clock, inline: inline,
                            masterKeys: MasterKeyring(current: .generate()), perIPLimits: perIPLimits)
        application = SesameApplication(sesame: sesame, log: nil)
        tenantID = try sesame.projects.create(name: "Shop", relyingPartyID: Self.rpID, relyingPartyName: "Shop").id
        _ = try sesame.projects.addPlatform(projectID: tenantID, .web(hostname: Self.rpID))
        secret = try sesame.authsignal.createSecret(projectID: tenantID).secret
    }

    var sesame: Sesame { application.sesame }

    /// What the face answered: status, headers and the body parsed as JSON.
    struct Reply {
        let response: HTTPResponse
        var status: Int { response.status }
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(response.body)) }
        var object: [String: Any] { json as? [String: Any] ?? [:] }
        var text: String { String(decoding: response.body, as: UTF8.self) }
    }

    /// Sends a request through the router (and the metrics) under `/authsignal/v1`; `raw` is a JSON body sent as given.
    func send(_ method: HTTPMethod, _ path: String, _ body: Any? = nil, raw: [UInt8]? = nil, authorization: String?, query: [String: String] = [:],
              headers extra: [(String, String)] = [], remoteAddress: String = "192.0.2.10") -> Reply {
        var headers = HTTPHeaders()
        if let authorization { headers.add("Authorization", authorization) }
        var bytes: [UInt8] = []
        if let body {
            bytes = (try? Array(JSONSerialization.data(withJSONObject: body))) ?? []
        }
        if let raw { bytes = raw }
        if body != nil || raw != nil { headers.add("Content-Type", "application/json") }
        for (name, value) in extra { headers.set(name, value) }
        return Reply(response: application.respond(to: HTTPRequest(method: method, path: "/authsignal/v1" + path, query: query, headers: headers,
                                                                   body: bytes, remoteAddress: remoteAddress)))
    }

    var serverAuthorization: String { "Basic " + Data("\(secret):".utf8).base64EncodedString() }
    var tenantAuthorization: String { "Basic " + Data("\(tenantID):".utf8).base64EncodedString() }

    /// Tracks `action` for `user` through the server API; returns the response body.
    func track(_ user: String, _ action: String, _ body: [String: Any] = [:]) -> [String: Any] {
        send(.POST, "/users/\(user)/actions/\(action)", body, authorization: serverAuthorization).object
    }

    /// Validates a token through the server API.
    func validate(_ token: String, user: String? = nil, action: String? = nil) -> [String: Any] {
        var body: [String: Any] = ["token": token]
        body["userId"] = user
        body["action"] = action
        return send(.POST, "/validate", body, authorization: serverAuthorization).object
    }

    /// C1 then C2 with `token` on `authenticator`; returns the C2 reply.
    func signUp(_ token: String, authenticator: SoftwareAuthenticator? = nil, origin: String = Harness.origin) throws -> Reply {
        let options = send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + token)
        try #require(options.status == 200, "\(options.text)")
        let creation = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                from: JSONSerialization.data(withJSONObject: options.object["options"] ?? [:]))
        let credential = try (authenticator ?? self.authenticator).create(creation, origin: origin)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential))
        return send(.POST, "/client/user-authenticators/passkey", ["challengeId": options.object["challengeId"] ?? "", "registrationCredential": json],
                    authorization: "Bearer " + token)
    }

    /// C4 with `authorization` (and a C3 challenge for `action`, or C3's `actionID`); returns the challenge ID and the
    /// assertion's JSON.
    func assertion(authorization: String, action: String? = nil, actionID: String? = nil, token: String? = nil, origin: String = Harness.origin,
                   authenticator: SoftwareAuthenticator? = nil) throws -> (challengeID: String, credential: Any) {
        var body: [String: Any] = [:]
        body["challengeId"] = actionID
        if let action {
            let started = send(.POST, "/client/challenge", ["action": action], authorization: authorization)
            try #require(started.status == 200, "\(started.text)")
            body["challengeId"] = started.object["challengeId"]
        }
        let options = send(.POST, "/client/user-authenticators/passkey/authentication-options", body, authorization: token.map { "Bearer " + $0 } ?? authorization)
        try #require(options.status == 200, "\(options.text)")
        let request = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: options.object["options"] ?? [:]))
        let credential = try (authenticator ?? self.authenticator).get(request, origin: origin)
        return (try #require(options.object["challengeId"] as? String), try JSONSerialization.jsonObject(with: JSONEncoder().encode(credential)))
    }

    /// C5.
    func verify(_ challengeID: String, _ credential: Any, authorization: String) -> Reply {
        send(.POST, "/client/verify/passkey", ["challengeId": challengeID, "authenticationCredential": credential], authorization: authorization)
    }

    /// A user with a passkey on `authenticator`; returns the result token of the sign-up.
    func enrolledUser(_ user: String, authenticator: SoftwareAuthenticator? = nil) throws -> String {
        let token = try #require(track(user, "createPasskey")["token"] as? String)
        let added = try signUp(token, authenticator: authenticator)
        try #require(added.status == 200 && added.object["isVerified"] as? Bool == true, "\(added.text)")
        return try #require(added.object["accessToken"] as? String)
    }

    /// The number recorded for a ceremony series of the face.
    func ceremonies(_ ceremony: String, _ outcome: String, _ reason: String) -> Int {
        let series = #"sesame_ceremonies_total{face="authsignal",ceremony="\#(ceremony)",outcome="\#(outcome)",reason="\#(reason)"} "#
        for line in application.metrics.exposition().split(separator: "\n") where line.hasPrefix(series) {
            return Int(line.dropFirst(series.count)) ?? 0
        }
        return 0
    }
}

extension Harness.Reply {
    /// Whether this is the §1.4 error body with `code` at `status`, labelled exactly `application/json`.
    func isError(_ status: Int, _ code: String) -> Bool {
        let object = self.object
        return self.status == status && response.headers["Content-Type"] == "application/json" && object["error"] as? String == code
            && object["errorCode"] as? String == code && !((object["errorDescription"] as? String) ?? "").isEmpty
    }
}
