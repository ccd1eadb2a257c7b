import Foundation
import SesameStore
import SesameTestSupport
import Testing

/// Spec §1.7 and §2.11, test matrix row 39: a real `sesame serve --log json` process runs every inline flow, and its
/// whole output (stdout and stderr) must not contain a request ID, challenge, assertion, credential ID, grant, API key,
/// token or webhook secret.
@Suite("Request log privacy of the inline-verification flows")
struct LogPrivacyTests {
    @Test("no request ID, challenge, assertion, credential ID, grant, key, token or webhook secret reaches the log")
    func nothingSecretIsLogged() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let deployment = try InlineDeployment(database: "sqlite:\(folder.path)/sesame.db")
        let node = try deployment.startNode(log: true)
        defer { node.kill() }
        var secrets: [(what: String, value: String)] = [
            ("API key", deployment.liveKey), ("webhook secret", deployment.webhookSecret),
            ("webhook key", String(deployment.webhookSecret.dropFirst("whsec_".count))),
            ("credential ID", InlineDeployment.base64URL(deployment.credentialID)),
            ("credential ID (base64)", Data(deployment.credentialID).base64EncodedString()),
            ("user handle", InlineDeployment.base64URL(deployment.userHandle)), ("user ID", deployment.userID),
        ]
        var requests = 0
        func note(_ what: String, _ value: String?) {
            if let value, !value.isEmpty { secrets.append((what, value)) }
        }
        func noteAssertion(_ answer: [String: Any]) {
            let response = answer["response"] as? [String: Any] ?? [:]
            for field in ["clientDataJSON", "authenticatorData", "signature", "userHandle"] { note(field, response[field] as? String) }
            note("assertion id", answer["id"] as? String)
        }
        func noteOptions(_ options: [String: Any]) {
            note("challenge ID", options["challenge_id"] as? String)
            let webauthn = options["options"] as? [String: Any] ?? [:]
            note("challenge", webauthn["challenge"] as? String)
            for credential in webauthn["allowCredentials"] as? [[String: Any]] ?? [] { note("allowed credential", credential["id"] as? String) }
        }

        // 1. Partner: create-session and create-verification-link (2 requests).
        let (first, grant) = try deployment.createRequest(node)
        requests += 2
        note("request ID", first)
        note("grant", grant)

        // 2. App: options and a verified complete.
        let options = try deployment.options(node, requestID: first)
        noteOptions(options)
        let answer = try deployment.assertion(options)
        noteAssertion(answer)
        let challengeID = try InlineDeployment.string(options, "challenge_id")
        #expect(try deployment.complete(node, requestID: first, challengeID: challengeID, response: answer) == ("verified", nil))
        requests += 2

        // 3. Failing completes: a tampered signature, a replayed challenge, an unknown request; options of an unknown request.
        let (second, secondGrant) = try deployment.createRequest(node)
        requests += 2
        note("request ID", second)
        note("grant", secondGrant)
        let secondOptions = try deployment.options(node, requestID: second)
        noteOptions(secondOptions)
        var tampered = try deployment.assertion(secondOptions)
        noteAssertion(tampered)
        var response = try #require(tampered["response"] as? [String: Any])
        let signature = try #require(response["signature"] as? String)
        response["signature"] = String(signature.dropLast()) + (signature.hasSuffix("A") ? "B" : "A")
        tampered["response"] = response
        note("tampered signature", response["signature"] as? String)
        let secondChallenge = try InlineDeployment.string(secondOptions, "challenge_id")
        #expect(try deployment.complete(node, requestID: second, challengeID: secondChallenge, response: tampered).0 == "failed")
        #expect(try deployment.complete(node, requestID: second, challengeID: challengeID, response: answer).0 == "expired")
        let unknown = "req_" + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        note("unknown request ID", unknown)
        #expect(try deployment.complete(node, requestID: unknown, challengeID: UUID().uuidString.lowercased(), response: answer).0 == "failed")
        #expect(try deployment.options(node, requestID: unknown)["code"] as? String == "unknown_request")
        requests += 5

        // 4. Partner: status (the request ID in the query), verify-token, unlink, logout; and the public JWKS.
        let partner = HTTPClient(port: node.port, key: deployment.liveKey)
        let status = try deployment.status(node, requestID: first)
        let token = try InlineDeployment.string(status, "verification_token")
        note("token", token)
        for part in token.split(separator: ".").dropFirst() { note("token part", String(part)) }
        #expect(try deployment.status(node, requestID: second)["status"] as? String == "pending")
        let verified = try InlineDeployment.payload(try partner.post("/operations/sdk/verify-token", try InlineDeployment.json(["token": token])))
        #expect(verified["valid"] as? Bool == true, "\(verified)")
        note("token ID", (verified["claims"] as? [String: Any])?["jti"] as? String)
        let unlinked = try InlineDeployment.payload(try partner.post("/operations/sdk/unlink",
                                                                     try InlineDeployment.json(["partner_user_ref": InlineDeployment.ref])))
        #expect(unlinked["unlinked"] as? Bool == true)
        #expect(try HTTPClient(port: node.port).get("/.well-known/jwks.json").status == 200)
        #expect(try HTTPClient(port: node.port, key: grant).post("/operations/sdk/logout", "{}").status == 200)
        // Refused partner calls still carry secrets in the URL or header.
        #expect(try HTTPClient(port: node.port, key: "sesame_live_sk_" + String(repeating: "x", count: 40))
                    .get("/operations/verification/status?request_id=\(second)").status == 401)
        requests += 7
        // URLs of the hosted pages carry the request ID (hand-off and QR); whatever answers them, the ID stays out of the log.
        _ = try HTTPClient(port: node.port).get("/verify?request_id=\(second)")
        _ = try HTTPClient(port: node.port).get("/operations/qr/\(second).svg")
        requests += 2

        // 5. The webhook of the completed request goes out from this node.
        #expect(deployment.receiver.waitFor(count: 1, timeout: 10))
        note("webhook-id", deployment.receiver.deliveries.first?.id)
        note("webhook signature", deployment.receiver.deliveries.first?.signature.map { String($0.dropFirst(3)) })

        // A graceful stop flushes the log.
        let termination = node.terminate()
        let output = node.stdout + node.stderr
        #expect(termination == .exited(0), "\(node.stderr.suffix(4000))")
        // The log is really there (one JSON line per request, by route), so the absence checks below mean something.
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("{") && $0.contains("\"route\":") }
        try #require(lines.count == requests, "expected \(requests) request log lines, got \(lines.count):\n\(output)")
        for route in ["/operations/request/passkey-options", "/operations/request/passkey-complete", "/operations/sdk/create-session",
                      "/operations/sdk/create-verification-link", "/operations/verification/status", "/operations/sdk/verify-token",
                      "/operations/sdk/unlink", "/.well-known/jwks.json"] {
            #expect(lines.contains { $0.contains("\"route\":\"\(route)\"") }, "no log line for \(route)")
        }

        // Lines of one verification request share its correlation tag `rq` (a keyed hash, never the ID).
        func tag(_ line: Substring) -> String? { line.firstMatch(of: /"rq":"([0-9a-f]{8})"/).map { String($0.output.1) } }
        let tagged = ["/operations/request/passkey-options", "/operations/request/passkey-complete", "/operations/sdk/create-verification-link"]
        for line in lines where tagged.contains(where: { line.contains("\"route\":\"\($0)\"") }) {
            #expect(tag(line) != nil, "no rq on \(line)")
        }
        let created = lines.filter { $0.contains("\"route\":\"/operations/sdk/create-verification-link\"") }.compactMap(tag)
        #expect(Set(created).count == created.count && created.count >= 2, "\(created)")
        for rq in created { #expect(lines.filter { tag($0) == rq }.count >= 2, "rq \(rq) correlates nothing") }

        #expect(secrets.count >= 25)
        for (what, value) in secrets {
            #expect(value.count >= 16, "\(what) is too short to search for: \(value)")
            #expect(!output.contains(value), "the output contains a \(what): \(value)")
        }
        let requestIDs = output.matches(of: /req_[0-9a-f]{32}/).map { String($0.output) }
        #expect(requestIDs.isEmpty, "request IDs in the output: \(requestIDs)")
        #expect(!output.contains("whsec_"))
        #expect(!output.contains("bss_"))
        #expect(!output.contains("sesame_live_sk_"))
    }
}
