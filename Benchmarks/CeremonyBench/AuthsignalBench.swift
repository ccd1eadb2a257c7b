import Foundation
import SesameClient
import SesameTestSupport

/// Authsignal sign-ins with a named action over loopback, on the server the Appwrite ceremonies just ran on: initiate
/// (`POST /client/challenge`), options, the software authenticator's signature, verify, then the backend's
/// `POST /validate` with the tenant secret. Its server CPU per ceremony is compared with the Appwrite sign-in's.
enum AuthsignalBench {
    /// Sets up a tenant secret and one user with a passkey per worker on `server`, whose project `CeremonyBench.enrol`
    /// pointed at `bench.example`; returns one sign-in ceremony of worker `index`'s user.
    static func ceremony(_ server: Server, binary: String, database: String, workers: Int) -> @Sendable (Int, LoopbackClient) -> Void {
        let keys = database.hasPrefix("postgres") ? ["--master-key-file", Server.masterKeyFile(binary: binary, database: database)] : []
        let created = try! ChildProcess.run(binary, ["authsignal", "secret", "create", "--db", database] + keys)
        precondition(created.status == 0, "sesame authsignal secret create failed: \(created.standardError)")
        let line = try! JSONSerialization.jsonObject(with: Data(created.standardOutput.utf8)) as! [String: Any]
        let server64 = Data("\(line["secret"] as! String):".utf8).base64EncodedString()
        let tenant = Data("\(line["tenantId"] as! String):".utf8).base64EncodedString()
        let backend = ["Authorization": "Basic " + server64, "Content-Type": "application/json"]
        let app = ["Authorization": "Basic " + tenant, "Content-Type": "application/json"]
        // One enrolled user per worker.
        let admin = LoopbackClient(port: server.port)
        var enrolled: [SoftwareAuthenticator] = []
        for index in 0..<workers {
            let token = CeremonyBench.check(admin.send("POST", "/authsignal/v1/users/as-bench\(index)/actions/createPasskey", headers: backend,
                                                       body: "{}"), 200).json["token"] as! String
            let bearer = ["Authorization": "Bearer " + token, "Content-Type": "application/json"]
            let start = CeremonyBench.check(admin.send("POST", "/authsignal/v1/client/user-authenticators/passkey/registration-options",
                                                       headers: bearer, body: "{}"), 200).json
            let authenticator = SoftwareAuthenticator()
            let options = try! JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                    from: JSONSerialization.data(withJSONObject: start["options"]!))
            let created = String(decoding: try! JSONEncoder().encode(try! authenticator.create(options, origin: CeremonyBench.origin)), as: UTF8.self)
            let body = #"{"challengeId":"\#(start["challengeId"] as! String)","registrationCredential":\#(created)}"#
            CeremonyBench.check(admin.send("POST", "/authsignal/v1/client/user-authenticators/passkey", headers: bearer, body: body), 200)
            enrolled.append(authenticator)
        }
        let authenticators = enrolled
        return { index, client in
            let challenge = CeremonyBench.check(client.send("POST", "/authsignal/v1/client/challenge", headers: app,
                                                            body: #"{"action":"signInWithPasskey"}"#), 200).decoded(Challenge.self)
            let started = CeremonyBench.check(client.send("POST", "/authsignal/v1/client/user-authenticators/passkey/authentication-options",
                                                          headers: app, body: #"{"challengeId":"\#(challenge.challengeId)"}"#), 200)
                .decoded(Options.self)
            let assertion = String(decoding: try! JSONEncoder().encode(try! authenticators[index].get(started.options, origin: CeremonyBench.origin)),
                                   as: UTF8.self)
            let verify = #"{"challengeId":"\#(started.challengeId)","authenticationCredential":\#(assertion)}"#
            let verified = CeremonyBench.check(client.send("POST", "/authsignal/v1/client/verify/passkey", headers: app, body: verify), 200)
                .decoded(Verified.self)
            let validated = CeremonyBench.check(client.send("POST", "/authsignal/v1/validate", headers: backend,
                                                            body: #"{"token":"\#(verified.accessToken)","action":"signInWithPasskey"}"#), 200)
                .decoded(Validated.self)
            precondition(validated.isValid, "validate: the token was not valid")
        }
    }

    // The answers the ceremony reads, as far as it reads them.
    struct Challenge: Decodable { let challengeId: String }
    struct Options: Decodable {
        let challengeId: String
        let options: PublicKeyCredentialRequestOptionsJSON
    }
    struct Verified: Decodable { let accessToken: String }
    struct Validated: Decodable { let isValid: Bool }
}
