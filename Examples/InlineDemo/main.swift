// sesame-inline-demo: the app side of inline verification, with a software passkey.
//
//   sesame-inline-demo --server http://localhost:8080 --admin-key sesame_sk_... --user alice
//
// 1. Enrols the person: creates user `alice` in the default project through the Appwrite-compatible API (with the
//    admin key) and registers one passkey on a software authenticator held in this process.
// 2. Reads request IDs from stdin, one per line, and runs the Swift SDK's `InlineVerification` for each: passkey
//    options, the authenticator, passkey-complete. It prints `verified` or the panel the app would show.
// The partner server's side (grant, verification link, status) is curl: see the README.
import Foundation
import SesameClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct DemoError: Error, CustomStringConvertible {
    let description: String
}

/// Prints a line at once, also into a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

func option(_ name: String, default value: String? = nil) -> String {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: name), index + 1 < arguments.count { return arguments[index + 1] }
    if let value { return value }
    FileHandle.standardError.write(Data("usage: sesame-inline-demo --server URL --admin-key KEY --user USER_ID\n".utf8))
    exit(2)
}

/// One JSON call to the Appwrite-compatible API of the default project.
func call(_ server: String, _ method: String, _ path: String, headers: [String: String], body: Any) async throws -> [String: Any] {
    var request = URLRequest(url: URL(string: server + path)!)
    request.httpMethod = method
    request.setValue("default", forHTTPHeaderField: "X-Appwrite-Project")
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    // A browser on the server's own origin: passkeys made here belong to the `localhost` development relying party.
    request.setValue(server, forHTTPHeaderField: "Origin")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    let (data, response) = try await URLSession.shared.data(for: request)
    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
        throw DemoError(description: "\(method) \(path): \(object["message"] as? String ?? "failed")")
    }
    return object
}

let server = option("--server", default: "http://localhost:8080")
let adminKey = option("--admin-key")
let userID = option("--user", default: "alice")
let authenticator = SoftwareAuthenticator()
let keyed = ["X-Appwrite-Key": adminKey]

do {
    // Development passkeys run under the `localhost` relying party, which needs a `localhost` web platform.
    _ = try? await call(server, "POST", "/v1/project/platforms/web", headers: keyed,
                        body: ["platformId": "localhost", "name": "Local development", "hostname": "localhost"])
    _ = try await call(server, "POST", "/v1/users", headers: keyed, body: ["userId": userID])
    let session = try await call(server, "POST", "/v1/users/\(userID)/sessions", headers: keyed, body: [:])
    let signedIn = ["X-Appwrite-Session": session["secret"] as? String ?? ""]
    let start = try await call(server, "POST", "/v1/account/passkeys", headers: signedIn, body: [:])
    let creation = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                            from: JSONSerialization.data(withJSONObject: start["publicKey"] ?? [:]))
    let registration = try authenticator.create(creation, origin: server)
    let credential = try JSONSerialization.jsonObject(with: JSONEncoder().encode(registration))
    _ = try await call(server, "PUT", "/v1/account/passkeys/\(start["passkeyId"] as? String ?? "")/verification", headers: signedIn,
                       body: ["credential": credential])
} catch {
    FileHandle.standardError.write(Data("sesame-inline-demo: enrolment failed: \(error)\n".utf8))
    exit(1)
}
say("Enrolled \(userID) with a passkey. Link a partner ref to \(userID), then paste request IDs here (Ctrl-D ends).")

// An iOS app's assertions report the relying party's origin: https://localhost for the development relying party.
let inline = InlineVerification(baseURL: URL(string: server + "/operations")!,
                                authenticator: SoftwareInlineAuthenticator(authenticator, origin: "https://localhost"))
while let line = readLine() {
    let requestID = line.trimmingCharacters(in: .whitespaces)
    guard !requestID.isEmpty else { continue }
    switch await inline.verify(requestID: requestID) {
    case .verified:
        say("verified: the partner server now confirms with GET /operations/verification/status")
    case .panel(let panel, let url, let setupURL):
        say("panel \(panel); hand-off: \(url?.absoluteString ?? "-"), set up a passkey: \(setupURL?.absoluteString ?? "-")")
    }
}
