import Foundation
import SesameClient
import SesameCore
import SesameStore
import SesameTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An inline-verification deployment on one database, as an operator sets it up: project, platform, partner, API key,
/// webhook endpoint and link through the admin CLI; the person and their passkey through the domain (the hosted setup
/// page does not exist yet), with a software authenticator standing in for the phone.
final class InlineDeployment: @unchecked Sendable {
    // @unchecked Sendable: the stored properties are immutable; `SoftwareAuthenticator` and `WebhookReceiver` are Sendable.
    static let rpID = "id.example"
    static let appURL = "https://app.id.example"
    static let apiURL = "https://api.id.example"
    /// The origin an iOS app's assertion reports.
    static let origin = "https://id.example"
    static let ref = "acct_1"

    let database: String
    let store: Store
    let projectID: String
    let partnerID: String
    let liveKey: String
    let webhookSecret: String
    let userID: String
    let userHandle: [UInt8]
    let credentialID: [UInt8]
    let authenticator = SoftwareAuthenticator()
    let receiver: WebhookReceiver

    init(database: String) throws {
        self.database = database
        receiver = try WebhookReceiver(secrets: [])
        let db = ["--db", database]
        projectID = try Self.string(SesameCLI.succeed(["project", "create", "--name", "ID", "--rp-id", Self.rpID, "--rp-name", "Sesame ID"] + db), "id")
        try SesameCLI.succeed(["platform", "add", "--project", projectID, "--web", "app.\(Self.rpID)"] + db)
        partnerID = try Self.string(SesameCLI.succeed(["partner", "create", "--project", projectID, "--name", "Ticketz"] + db), "id")
        liveKey = try Self.string(SesameCLI.succeed(["partner", "add-key", "--partner", partnerID, "--env", "live"] + db), "secret")
        webhookSecret = try Self.string(SesameCLI.succeed(["partner", "add-webhook", "--partner", partnerID, "--env", "live",
                                                           "--url", receiver.url.absoluteString, "--allow-local"] + db), "secret")
        receiver.setSecrets([webhookSecret])

        store = try Store.open(database)
        let sesame = Sesame(store: store, inline: InlineConfiguration(appURL: Self.appURL, apiURL: Self.apiURL),
                            masterKeys: try TestMasterKey.keyring(for: database))
        let user = try sesame.users.create(projectID: projectID, id: nil, email: nil, password: nil, name: nil)
        userID = user.id
        let project = try sesame.projects.get(projectID)
        let session = try sesame.sessions.create(projectID: projectID, userID: user.id, provider: "passkey", factors: ["passkey"],
                                                 client: ClientInfo(ip: "127.0.0.1", userAgent: "tests")).session
        let start = try sesame.passkeys.beginRegistration(project: project, user: user, session: session, passkeyID: nil, name: nil,
                                                          requestOrigin: Self.appURL)
        userHandle = start.userHandle
        let options = PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: start.rpID, name: start.rpName),
            user: .init(id: Self.base64URL(start.userHandle), name: start.userName, displayName: start.userDisplayName),
            challenge: Self.base64URL(start.challenge), pubKeyCredParams: start.algorithms.map { .init(alg: $0) }
        )
        let response = try authenticator.create(options, origin: Self.appURL)
        _ = try sesame.passkeys.finishRegistration(project: project, user: user, session: session, passkeyID: start.passkeyID,
                                                   credentialJSON: Array(try JSONEncoder().encode(response)), requestOrigin: Self.appURL)
        credentialID = try #require(Self.base64URLDecode(response.rawID))
        try SesameCLI.succeed(["partner", "link", "--partner", partnerID, "--env", "live", "--ref", Self.ref, "--user", userID] + db)
    }

    deinit { receiver.stop() }

    /// Starts `sesame serve` on this database with the deployment's URLs and local webhooks allowed.
    func startNode(log: Bool = false) throws -> ServerProcess {
        try ServerProcess.start(database: database, extra: ["--public-url", Self.apiURL, "--app-url", Self.appURL, "--webhooks-allow-local"]
                                    + (log ? ["--log", "json"] : []), logOff: !log)
    }

    // MARK: The flow over HTTP

    /// create-session, then create-verification-link for the linked ref.
    func createRequest(_ node: ServerProcess, ref: String? = InlineDeployment.ref) throws -> (requestID: String, grant: String) {
        let partner = HTTPClient(port: node.port, key: liveKey)
        let session = try partner.post("/operations/sdk/create-session", "{}")
        let grant = try Self.string(Self.payload(session), "anchor_grant_token")
        var body: [String: Any] = ["scope": "checkout"]
        if let ref { body["partner_user_ref"] = ref }
        let link = try HTTPClient(port: node.port, key: grant).post("/operations/sdk/create-verification-link", try Self.json(body))
        return (try Self.string(Self.payload(link), "request_id"), grant)
    }

    /// passkey-options; the `.data.data` payload.
    func options(_ node: ServerProcess, requestID: String) throws -> [String: Any] {
        try Self.payload(HTTPClient(port: node.port).post("/operations/request/passkey-options", try Self.json(["request_id": requestID])))
    }

    /// The authenticator's answer to an options payload, as the app forwards it.
    func assertion(_ payload: [String: Any]) throws -> [String: Any] {
        let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self,
                                               from: JSONSerialization.data(withJSONObject: try #require(payload["options"])))
        let response = try authenticator.get(options, origin: Self.origin)
        return try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(response)) as? [String: Any])
    }

    /// passkey-complete; the `(outcome, code)` of `.data.data`.
    func complete(_ node: ServerProcess, requestID: String, challengeID: String, response: [String: Any]) throws -> (String?, String?) {
        let reply = try HTTPClient(port: node.port).post("/operations/request/passkey-complete",
                                                          try Self.json(["request_id": requestID, "challenge_id": challengeID, "response": response]))
        let data = try Self.payload(reply)
        return (data["outcome"] as? String, data["code"] as? String)
    }

    /// The status payload of a request.
    func status(_ node: ServerProcess, requestID: String) throws -> [String: Any] {
        try Self.payload(HTTPClient(port: node.port, key: liveKey).get("/operations/verification/status?request_id=\(requestID)"))
    }

    // MARK: Helpers

    static func payload(_ reply: HTTPResult) throws -> [String: Any] {
        guard reply.status == 200, let data = (reply.json["data"] as? [String: Any])?["data"] as? [String: Any] else {
            throw IntegrationFailure("unexpected answer: \(reply)")
        }
        return data
    }

    static func string(_ object: [String: Any], _ key: String) throws -> String {
        guard let value = object[key] as? String else { throw IntegrationFailure("no \(key) in \(object)") }
        return value
    }

    static func json(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecode(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }

    /// The `node` name a server process records with its webhook attempts (host name and process ID).
    static func nodeName(_ node: ServerProcess) -> String { "\(ProcessInfo.processInfo.hostName):\(node.pid)" }
}

@Suite("gate.human_verified from several sesame nodes sharing one database")
struct WebhookDeliveryTests {
    /// Completes `count` requests spread over `nodes` (each step of a request on a different node where possible), then
    /// checks that the receiver got exactly one correctly signed delivery per event, each attempt made by one node.
    /// - Parameter ceremonyOnOneNode: whether a request's passkey options and completion go to the same node (on SQLite,
    ///   where an authentication's challenge is held by the node that issued it); the request is created on another.
    func deliverAcrossNodes(_ deployment: InlineDeployment, nodes: [ServerProcess], count: Int, ceremonyOnOneNode: Bool = false) throws {
        var requests: [String] = []
        for index in 0..<count {
            let create = nodes[index % nodes.count], ask = nodes[(index + 1) % nodes.count]
            let finish = ceremonyOnOneNode ? ask : nodes[(index + 2) % nodes.count]
            let requestID = try deployment.createRequest(create).requestID
            let options = try deployment.options(ask, requestID: requestID)
            let challengeID = try InlineDeployment.string(options, "challenge_id")
            let outcome = try deployment.complete(finish, requestID: requestID, challengeID: challengeID,
                                                  response: try deployment.assertion(options))
            try #require(outcome.0 == "verified", "request \(index): \(outcome)")
            requests.append(requestID)
        }

        let receiver = deployment.receiver
        #expect(receiver.waitFor(count: count, timeout: 20), "deliveries: \(receiver.deliveries.count) of \(count)")
        // Several polls of every node later, still nothing more.
        Thread.sleep(forTimeInterval: 1.5)
        let received = receiver.deliveries
        #expect(received.count == count, "exactly one delivery per event: \(received.count)")
        let ids = received.compactMap(\.id)
        #expect(ids.count == received.count)
        #expect(Set(ids).count == count, "distinct webhook-ids: \(Set(ids).count)")
        #expect(received.allSatisfy { $0.signatureVerified }, "every signature verifies with the endpoint's secret")
        #expect(received.allSatisfy { $0.answeredStatus == 200 })

        var delivered: [String: String] = [:]  // request ID -> token
        for delivery in received {
            let body = try #require(try JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any])
            #expect(body["type"] as? String == "gate.human_verified")
            let data = try #require(body["data"] as? [String: Any])
            let requestID = try #require(data["request_id"] as? String)
            #expect(delivered[requestID] == nil, "\(requestID) delivered twice")
            delivered[requestID] = data["verification_token"] as? String
        }
        #expect(Set(delivered.keys) == Set(requests), "one delivery for each completed request")
        for (index, requestID) in requests.enumerated() where index.isMultiple(of: 5) {
            let status = try deployment.status(nodes[index % nodes.count], requestID: requestID)
            #expect(status["status"] as? String == "completed")
            #expect(status["verification_token"] as? String == delivered[requestID], "the webhook carries the status token")
        }

        // The outbox as the nodes left it: one delivery per event, delivered on its first attempt by one of the nodes.
        let names = Set(nodes.map(InlineDeployment.nodeName))
        let events = try deployment.store.webhooks.events(partnerID: deployment.partnerID)
        #expect(events.count == count)
        #expect(Set(events.map(\.id)) == Set(ids), "the receiver saw every event, by its webhook-id")
        var perNode: [String: Int] = [:]
        for event in events {
            let deliveries = try deployment.store.webhooks.deliveries(eventID: event.id)
            try #require(deliveries.count == 1, "\(event.id): \(deliveries)")
            #expect(deliveries[0].state == WebhookDeliveryRecord.delivered)
            #expect(deliveries[0].attempts == 1)
            let attempts = try deployment.store.webhooks.attempts(deliveryID: deliveries[0].id)
            #expect(attempts.count == 1, "\(event.id): \(attempts)")
            #expect(attempts.first?.httpStatus == 200)
            let node = attempts.first?.node ?? "?"
            #expect(names.contains(node), "attempt by \(node), not one of \(names)")
            perNode[node, default: 0] += 1
        }
        print("webhook attempts per node: \(perNode.sorted { $0.key < $1.key })")
    }

    @Test("three nodes on one PostgreSQL database: 30 events, 30 deliveries, one attempt each")
    func postgres() throws {
        let database = try PostgresCluster.shared.createDatabase()
        let deployment = try InlineDeployment(database: database)
        let nodes = try (0..<3).map { _ in try deployment.startNode() }
        defer { nodes.forEach { $0.kill() } }
        try deliverAcrossNodes(deployment, nodes: nodes, count: 30)
        for node in nodes { #expect(node.stderr.isEmpty, "\(node.stderr)") }
    }

    @Test("two nodes on one SQLite file: 30 events, 30 deliveries, one attempt each")
    func sqlite() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let deployment = try InlineDeployment(database: "sqlite:\(folder.path)/sesame.db")
        let nodes = try (0..<2).map { _ in try deployment.startNode() }
        defer { nodes.forEach { $0.kill() } }
        try deliverAcrossNodes(deployment, nodes: nodes, count: 30, ceremonyOnOneNode: true)
        for node in nodes { #expect(node.stderr.isEmpty, "\(node.stderr)") }
    }
}
