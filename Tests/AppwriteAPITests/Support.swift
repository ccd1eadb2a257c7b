import Foundation
import SesameCore
import SesameHTTP
import SesameServer
import SesameStore
import SesameTestSupport
import Testing


/// A whole Sesame application (every route, in process) with one project and an API key holding every scope.
struct Harness {
    let application: SesameApplication
    let clock: ManualClock
    let projectID: String
    let key: String

    /// - Parameter store: the store to serve (else a fresh one on `backend`).
    init(_ backend: Backend = .sqlite, log: RequestLog? = nil, store: Store? = nil) throws {
        clock = ManualClock()
        let sesame = Sesame(store: try store ?? Store.open(try backend.makeURL()), clock: clock, masterKeys: MasterKeyring(current: .generate()))
        application = SesameApplication(sesame: sesame, log: log)
        projectID = try sesame.projects.create(name: "Shop", relyingPartyID: "shop.example").id
        _ = try sesame.projects.addPlatform(projectID: projectID, .web(hostname: "shop.example"))
        key = try sesame.apiKeys.create(projectID: projectID, name: "server", scopes: APIKey.Scope.all).secret
    }

    var sesame: Sesame { application.sesame }

    /// Sends a request as the Python SDK would: project header, JSON content type on non-GET, an empty one on GET.
    /// It goes through the router and is recorded in the application's metrics (and log), as the HTTP server does.
    func send(_ method: HTTPMethod, _ path: String, json: String? = nil, project: String? = nil, headers: [(String, String)] = [],
              query: [String: String] = [:]) -> Reply {
        var all = HTTPHeaders()
        all.add("X-Appwrite-Project", project ?? projectID)
        all.add("content-type", method == .GET ? "" : "application/json")
        for (name, value) in headers { all.set(name, value) }
        let body = json ?? (method == .GET ? "" : "{}")
        let request = HTTPRequest(method: method, path: path, query: query, headers: all, body: Array(body.utf8), remoteAddress: "127.0.0.1")
        return Reply(application.respond(to: request))
    }

    /// Creates an account and returns the secret of a session for it (minted by email sign-in under the API key).
    func signUpAndIn(_ email: String = "alice@example.org", id: String = "alice") throws -> String {
        let created = send(.POST, "/v1/account", json: #"{"userId":"\#(id)","email":"\#(email)","password":"password123"}"#)
        #expect(created.status == 201, "\(created.text)")
        let session = send(.POST, "/v1/account/sessions/email", json: #"{"email":"\#(email)","password":"password123"}"#,
                           headers: [("X-Appwrite-Key", key)])
        #expect(session.status == 201, "\(session.text)")
        return try #require(session.object["secret"] as? String)
    }
}

/// A response with its body parsed as a JSON object when it is one.
struct Reply {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
    var status: Int { response.status }
    var text: String { String(decoding: response.body, as: UTF8.self) }
    var object: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:] }
    var type: String? { object["type"] as? String }
    var contentType: String? { response.headers["Content-Type"] }

    /// Checks the Appwrite error shape exactly: four keys, `code` equal to the status, the given type and status.
    func expectError(_ status: Int, _ type: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(text)", sourceLocation: sourceLocation)
        #expect(Set(object.keys) == ["message", "code", "type", "version"], "\(text)", sourceLocation: sourceLocation)
        #expect(object["code"] as? Int == status, sourceLocation: sourceLocation)
        #expect(self.type == type, "\(text)", sourceLocation: sourceLocation)
        #expect(!(object["message"] as? String ?? "").isEmpty, sourceLocation: sourceLocation)
        #expect(contentType == "application/json; charset=UTF-8", sourceLocation: sourceLocation)
    }
}
