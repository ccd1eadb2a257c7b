import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore

/// A real Sesame application on a fresh SQLite database, with something behind every kind of ID the routes take:
/// a project with a web platform and an all-scopes API key, a signed-up user with a session and a registered passkey,
/// a partner with a live API key, a grant and a linked, pending verification request. Seed bodies (a genuine
/// registration and assertions) give the mutations real WebAuthn responses to start from.
final class World {
    static let rpID = "fuzz.example"
    static let origin = "https://fuzz.example"

    let application: SesameApplication
    let folder: URL
    let projectID: String
    let apiKey: String
    let userID: String
    let email = "fuzz@example.org"
    let password = "password123"
    let sessionID: String
    let sessionSecret: String
    let passkeyID: String
    let platformID: String
    let partnerKey: String
    let grant: String
    let requestID: String
    let partnerUserRef = "person-1"
    /// An Authsignal tenant secret of the project, and a track token for `authsignalUserID`.
    let authsignalSecret: String
    let authsignalToken: String
    let authsignalUserID = "fuzz-user"
    /// Good values by parameter or property name, for the fuzzer to start from.
    private(set) var values: [String: [String]] = [:]
    /// Genuine JSON bodies of WebAuthn responses (registration and assertion), to mutate.
    private(set) var credentials: [String] = []

    struct SetupFailure: Error, CustomStringConvertible { let description: String }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-face-fuzz-\(UUID().uuidString)")
        let inline = InlineConfiguration(appURL: Self.origin, apiURL: "https://api.fuzz.example", allowLocalWebhooks: false)
        let sesame = Sesame(store: try Store.open("sqlite:\(folder.path)/db"), inline: inline, masterKeys: MasterKeyring(current: .generate()))
        application = SesameApplication(sesame: sesame, log: nil)
        // `default`: also the ID project of the hosted setup page (InlineConfiguration.idProjectID).
        projectID = try sesame.projects.create(id: "default", name: "Fuzz", relyingPartyID: Self.rpID, relyingPartyName: "Fuzz").id
        platformID = try sesame.projects.addPlatform(projectID: projectID, .web(hostname: Self.rpID)).id
        apiKey = try sesame.apiKeys.create(projectID: projectID, name: "fuzz", scopes: APIKey.Scope.all).secret

        let authenticator = SoftwareAuthenticator()
        let send = { [application, projectID] (method: HTTPMethod, path: String, body: String, headers: [(String, String)]) in
            var all = HTTPHeaders([("X-Appwrite-Project", projectID), ("Content-Type", "application/json")])
            for (name, value) in headers { all.set(name, value) }
            return application.router.respond(to: HTTPRequest(method: method, path: path, headers: all, body: Array(body.utf8),
                                                              remoteAddress: "127.0.0.1"))
        }
        func object(_ response: HTTPResponse, _ status: Int, _ what: String) throws -> [String: Any] {
            guard response.status == status,
                  let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
                throw SetupFailure(description: "\(what): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
            return object
        }
        func string(_ object: [String: Any], _ key: String, _ what: String) throws -> String {
            guard let value = object[key] as? String else { throw SetupFailure(description: "\(what): no \(key)") }
            return value
        }
        func publicKey<T: Decodable>(_ type: T.Type, _ object: [String: Any]) throws -> T {
            try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: object["publicKey"] ?? [:]))
        }
        func text(_ value: some Encodable) throws -> String { String(decoding: try JSONEncoder().encode(value), as: UTF8.self) }

        // A user, signed in by email (the API key returns the session's secret).
        let account = try object(send(.POST, "/v1/account", #"{"userId":"unique()","email":"\#(email)","password":"\#(password)"}"#, []),
                                 201, "sign-up")
        userID = try string(account, "$id", "sign-up")
        let session = try object(send(.POST, "/v1/account/sessions/email", #"{"email":"\#(email)","password":"\#(password)"}"#,
                                      [("X-Appwrite-Key", apiKey)]), 201, "sign-in")
        sessionID = try string(session, "$id", "sign-in")
        sessionSecret = try string(session, "secret", "sign-in")

        // A passkey, registered through the routes with a software authenticator.
        let start = try object(send(.POST, "/v1/account/passkeys", #"{"name":"Laptop"}"#, [("X-Appwrite-Session", sessionSecret)]),
                               201, "registration start")
        passkeyID = try string(start, "passkeyId", "registration start")
        let created = try text(authenticator.create(try publicKey(PublicKeyCredentialCreationOptionsJSON.self, start), origin: Self.origin))
        _ = try object(send(.PUT, "/v1/account/passkeys/\(passkeyID)/verification", #"{"credential":\#(created)}"#,
                            [("X-Appwrite-Session", sessionSecret)]), 200, "registration finish")
        credentials.append(created)

        // Assertions for sign-in challenges that stay open (one is spent by the first finish that reaches it).
        var challengeIDs: [String] = []
        for _ in 0..<3 {
            let signIn = try object(send(.POST, "/v1/account/tokens/passkey", "{}", [("X-Appwrite-Key", apiKey)]), 201, "sign-in start")
            challengeIDs.append(try string(signIn, "$id", "sign-in start"))
            credentials.append(try text(authenticator.get(try publicKey(PublicKeyCredentialRequestOptionsJSON.self, signIn),
                                                          origin: Self.origin)))
        }

        // A partner with a live key, a grant and a pending request linked to the user.
        let partner = try sesame.partners.create(projectID: projectID, name: "Fuzz partner")
        partnerKey = try sesame.partners.createAPIKey(partnerID: partner.id, environment: .live).secret
        _ = try sesame.partners.link(partnerID: partner.id, environment: .live, partnerUserRef: partnerUserRef, userID: userID)
        let bearer = [("Authorization", "Bearer \(partnerKey)")]
        func envelope(_ object: [String: Any]) -> [String: Any] { (object["data"] as? [String: Any])?["data"] as? [String: Any] ?? [:] }
        let grantReply = try object(send(.POST, "/operations/sdk/create-session", "{}", bearer), 200, "create-session")
        grant = try string(envelope(grantReply), "anchor_grant_token", "create-session")
        let link = try object(send(.POST, "/operations/sdk/create-verification-link",
                                   #"{"scope":"login","partner_user_ref":"\#(partnerUserRef)"}"#, [("Authorization", "Bearer \(grant)")]),
                              200, "create-verification-link")
        requestID = try string(envelope(link), "request_id", "create-verification-link")

        let options = try object(send(.POST, "/operations/request/passkey-options", #"{"request_id":"\#(requestID)"}"#, []),
                                 200, "passkey-options")
        let inlineChallenge = envelope(options)["challenge_id"] as? String ?? ""

        values = [
            "userId": [userID, "unique()"], "sessionId": [sessionID, "current", "recent()"], "passkeyId": [passkeyID],
            "platformId": [platformID], "methodId": ["email-password", "passkey"], "challengeId": challengeIDs + [inlineChallenge],
            "challenge_id": [inlineChallenge] + challengeIDs, "request_id": [requestID], "partner_user_ref": [partnerUserRef, "person-2"],
            "email": [email, "new@example.org"], "password": [password, "password124"], "name": ["Laptop", "Fuzz"],
            "hostname": [Self.rpID, "app.fuzz.example"], "rpId": [Self.rpID], "scope": ["login", "payment"],
            "session_token": [grant], "token": ["eyJhbGciOiJFUzI1NiJ9.e30.AAAA"], "secret": ["abcdef"],
            "applicationId": ["com.example.app"], "bundleIdentifier": ["com.example.app"], "purpose": ["registration", "authentication"],
            "status": ["true"], "link": ["true"], "current": ["true"],
        ]

        // An Authsignal tenant secret, a tracked action with its token, a verified contact and a usernameless challenge.
        authsignalSecret = try sesame.authsignal.createSecret(projectID: projectID).secret
        let project = try sesame.projects.get(projectID)
        let tracked = try sesame.authsignal.track(project: project, userID: authsignalUserID, actionCode: "signIn",
                                                  input: TrackInput(scopes: [.add]))
        authsignalToken = tracked.token
        let contact = try sesame.authsignal.enrollContact(project: project, userID: authsignalUserID, verificationMethod: "EMAIL_OTP",
                                                          email: email, phoneNumber: nil)
        let signInID = try sesame.authsignal.initiateChallenge(project: project, actionCode: "signInWithPasskey", idempotencyKey: nil)
        values["userId", default: []].append(authsignalUserID)
        values["action"] = ["signIn", "signInWithPasskey", "bad action"]
        values["idempotencyKey"] = [tracked.action.idempotencyKey]
        values["userAuthenticatorId"] = [contact.id]
        values["token", default: []].append(authsignalToken)
        values["challengeId", default: []].append(signInID)
        values["state"] = ["BLOCK", "CHALLENGE_SUCCEEDED", "nope"]
        values["verificationMethod"] = ["EMAIL_OTP", "SMS", "PASSKEY"]
        values["credentialId"] = ["AAAA", "x"]
    }

    /// Removes the database folder.
    func tearDown() {
        try? FileManager.default.removeItem(at: folder)
    }
}
