import Foundation
import SesameCore
import SesameCrypto
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn

/// Part 3 rows P3-P6: the verification token as a partner receives it, checked with the JWKS by hand, by the online
/// check and by PyJWT.
@Suite struct TokenTests {
    static let claimNames: Set<String> = ["iss", "aud", "iat", "exp", "jti", "request_id", "scope", "env", "verified", "linked", "ver"]

    @Test("P3: ES256 compact JWS: header alg/typ/kid, 64-byte R||S, verifies with the JWKS key, claims exactly §2.4; PyJWT agrees",
          arguments: Backend.allCases)
    func tokenFormat(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_123", to: person.id)
        let (requestID, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_123")
        let parts = try TokenParts(token)

        #expect(Set(parts.header.keys) == ["alg", "typ", "kid"], "\(parts.header)")
        #expect(parts.header["alg"] == .string("ES256") && parts.header["typ"] == .string("JWT"))
        let kid = try #require(parts.header["kid"]?.stringValue)
        #expect(parts.signature.count == 64, "raw R||S, not DER")

        let jwks = try await harness.send("GET", "/.well-known/jwks.json", body: nil)
        #expect(jwks.status == 200, "\(jwks)")
        #expect(jwks.header("Cache-Control") == "public, max-age=300")
        #expect(jwks.header("Content-Type")?.hasPrefix("application/json") == true)
        let keys = try #require(jwks.object["keys"] as? [[String: Any]], "\(jwks)")
        for key in keys {
            #expect(Set(key.keys) == ["kty", "crv", "x", "y", "kid", "use", "alg"], "\(key)")
            #expect(key["kty"] as? String == "EC" && key["crv"] as? String == "P-256" && key["use"] as? String == "sig"
                && key["alg"] as? String == "ES256", "\(key)")
        }
        let jwk = try #require(keys.first { $0["kid"] as? String == kid }, "the token's kid is published")
        let xText = try #require(jwk["x"] as? String), yText = try #require(jwk["y"] as? String)
        let x = try Base64URL.decode(xText), y = try Base64URL.decode(yText)
        #expect(x.count == 32 && y.count == 32)
        // kid is the RFC 7638 thumbprint.
        let thumbprintInput = #"{"crv":"P-256","kty":"EC","x":""# + xText + #"","y":""# + yText + #""}"#
        #expect(Base64URL.encode(Digest.sha256(Array(thumbprintInput.utf8))) == kid)
        // The signature, checked here with the published point alone.
        let publicKey = try PublicKey(ellipticCurve: .p256, x: x, y: y)
        let der = try ECDSASignature.derRepresentation(raw: parts.signature, curve: .p256)
        #expect(publicKey.isValidSignature(der, for: parts.signingInput, algorithm: .ecdsaSHA256))
        #expect(!publicKey.isValidSignature(der, for: parts.signingInput + [0x20], algorithm: .ecdsaSHA256))

        // Claims: exactly the §2.4 set, with partner_user_ref because the request had one.
        let claims = parts.claims
        #expect(Set(claims.keys) == Self.claimNames.union(["partner_user_ref"]), "\(claims.keys.sorted())")
        #expect(claims["iss"] == .string(InlineHarness.apiURL))
        #expect(claims["aud"] == .string(harness.partner.id))
        let issuedAt = try #require(claims["iat"]?.integerValue)
        #expect(abs(Double(issuedAt) - harness.clock.now().timeIntervalSince1970) < 2)
        #expect(claims["exp"] == .integer(issuedAt + 300))
        #expect(claims["jti"]?.stringValue?.isEmpty == false)
        #expect(claims["request_id"] == .string(requestID) && claims["scope"] == .string("checkout") && claims["env"] == .string("live"))
        #expect(claims["verified"] == .bool(true) && claims["linked"] == .bool(true) && claims["ver"] == .integer(1))
        #expect(claims["partner_user_ref"] == .string("acct_123"))
        // Nothing about the person.
        let payloadText = String(decoding: try Base64URL.decode(parts.payloadPart), as: UTF8.self)
        let owner = try #require(try harness.sesame.store.users.get(projectID: harness.projectID, id: person.id))
        for secret in [person.id, Base64URL.encode(owner.userHandle), Base64URL.encode(person.credentials[0])] {
            #expect(!payloadText.contains(secret))
        }

        // A request without a ref, completed on the hand-off by any person's passkey: no partner_user_ref.
        let plain = try PartnerKit.requestID(try await harness.createRequest(scope: "login"))
        #expect(try await harness.verifyByHandOff(plain).outcome.outcome == "verified")
        let plainToken = try #require(try await harness.status(plain).data?["verification_token"] as? String)
        let plainClaims = try TokenParts(plainToken).claims
        #expect(Set(plainClaims.keys) == Self.claimNames, "\(plainClaims.keys.sorted())")
        #expect(plainClaims["linked"] == .bool(false) && plainClaims["scope"] == .string("login"))

        // PyJWT, offline with the served JWKS.
        let jwksFile = try TemporaryJWKS(jwks.body)
        defer { jwksFile.remove() }
        let expected = ["request_id": requestID, "scope": "checkout", "env": "live", "partner_user_ref": "acct_123", "verified": "true",
                        "linked": "true", "ver": "1"]
        let accepted = PyJWT.verify(token: token, jwks: .file(jwksFile.path), issuer: InlineHarness.apiURL, audience: harness.partner.id,
                                    claims: expected, now: harness.clock.now())
        switch accepted {
        case .success(let printed):
            let object = try #require(try JSONSerialization.jsonObject(with: printed) as? [String: Any])
            #expect(object["request_id"] as? String == requestID)
        case .failure(let failure):
            Issue.record("PyJWT refused a genuine token: \(failure)")
        }
        let plainAccepted = PyJWT.verify(token: plainToken, jwks: .file(jwksFile.path), issuer: InlineHarness.apiURL,
                                         audience: harness.partner.id, claims: ["request_id": plain, "linked": "false"], now: harness.clock.now())
        #expect((try? plainAccepted.get()) != nil, "\(plainAccepted)")

        var changed = claims
        changed["scope"] = .string("transfer")
        let tampered = parts.headerPart + "." + Base64URL.encode(try JSONValue.object(changed).jsonEncoded()) + "." + parts.signaturePart
        TokenKit.expectRejected(PyJWT.verify(token: tampered, jwks: .file(jwksFile.path), issuer: InlineHarness.apiURL,
                                             audience: harness.partner.id, now: harness.clock.now()), containing: "Signature", "tampered payload")
        TokenKit.expectRejected(PyJWT.verify(token: token, jwks: .file(jwksFile.path), issuer: InlineHarness.apiURL, audience: "org_someone_else",
                                             now: harness.clock.now()), containing: "Audience", "wrong audience")
    }

    @Test("P4: HS256 re-signed with the public key bytes, and alg none, are refused by verify-token and by PyJWT (ES256 only)",
          arguments: Backend.allCases)
    func algorithmConfusion(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let (_, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        let parts = try TokenParts(token)
        let kid = try #require(parts.header["kid"]?.stringValue)
        let jwks = try await harness.send("GET", "/.well-known/jwks.json", body: nil)
        let jwk = try #require((jwks.object["keys"] as? [[String: Any]])?.first { $0["kid"] as? String == kid })
        let x = try Base64URL.decode(try #require(jwk["x"] as? String)), y = try Base64URL.decode(try #require(jwk["y"] as? String))
        let spki = try PublicKey(ellipticCurve: .p256, x: x, y: y).derEncodedSubjectPublicKeyInfo
        let pem = TokenKit.pem(spki)
        let jwkText = String(decoding: try JSONSerialization.data(withJSONObject: jwk, options: [.sortedKeys]), as: UTF8.self)

        var forgeries: [(String, String)] = []
        for (label, secret) in [("SPKI DER", spki), ("PEM", Array(pem.utf8)), ("EC point", [0x04] + x + y), ("JWK JSON", Array(jwkText.utf8))] {
            let header = TokenKit.part(#"{"alg":"HS256","typ":"JWT","kid":"\#(kid)"}"#)
            let input = header + "." + parts.payloadPart
            forgeries.append(("HS256 keyed with the \(label)", input + "." + Base64URL.encode(HMAC.sha256(key: secret, message: Array(input.utf8)))))
        }
        forgeries.append(("alg none", TokenKit.part(#"{"alg":"none","typ":"JWT"}"#) + "." + parts.payloadPart + "."))
        forgeries.append(("alg none with kid", TokenKit.part(#"{"alg":"none","typ":"JWT","kid":"\#(kid)"}"#) + "." + parts.payloadPart + "."))
        forgeries.append(("alg none keeping the signature",
                          TokenKit.part(#"{"alg":"none","kid":"\#(kid)"}"#) + "." + parts.payloadPart + "." + parts.signaturePart))

        let jwksFile = try TemporaryJWKS(jwks.body)
        defer { jwksFile.remove() }
        for (label, forged) in forgeries {
            let check = try await harness.post("/operations/sdk/verify-token", ["token": forged], bearer: harness.liveKey)
            #expect(check.status == 200, "\(label): \(check)")
            #expect(check.data?["valid"] as? Bool == false && check.data?["claims"] == nil, "\(label): \(check)")
            #expect(check.data?["reason"] is String, "\(label): \(check)")
            TokenKit.expectRejected(PyJWT.verify(token: forged, jwks: .file(jwksFile.path), issuer: InlineHarness.apiURL,
                                                 audience: harness.partner.id, now: harness.clock.now()), containing: "alg", label)
        }

        // PyJWT's own decode, algorithms=["ES256"], keyed with the JWK and with the PEM: the genuine token passes,
        // every forgery fails on its algorithm.
        let pemFile = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-pem-\(UUID().uuidString).pem")
        try Data(pem.utf8).write(to: pemFile)
        defer { try? FileManager.default.removeItem(at: pemFile) }
        let verdicts = try TokenKit.pyJWTDecode([token] + forgeries.map(\.1), jwksPath: jwksFile.path, pemPath: pemFile.path)
        #expect(verdicts.first == ["accepted", "accepted"], "\(verdicts)")
        for (index, (label, _)) in forgeries.enumerated() {
            #expect(verdicts.dropFirst().dropFirst(index).first == ["InvalidAlgorithmError", "InvalidAlgorithmError"], "\(label): \(verdicts)")
        }

        // The genuine token was never consumed by the forgeries.
        let genuine = try await harness.post("/operations/sdk/verify-token", ["token": token], bearer: harness.liveKey)
        #expect(genuine.data?["valid"] as? Bool == true, "\(genuine)")
    }

    @Test("P5: rotation publishes the new kid before use; after a day new tokens use it, the old kid still verifies while published; unknown kid fails",
          arguments: Backend.allCases)
    func rotation(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let jwksURL = harness.base + "/.well-known/jwks.json"

        let first = try TokenParts(try await PartnerKit.verifiedRequest(harness, ref: "acct_1").token)
        let oldKid = try #require(first.header["kid"]?.stringValue)
        #expect(try await TokenKit.kids(harness) == [oldKid])

        let next = try harness.sesame.signingKeys.rotate(activateAfter: 86_400)
        #expect(next.kid != oldKid)
        #expect(try await TokenKit.kids(harness) == [oldKid, next.kid], "published before any token uses it")
        let beforeSwitch = try TokenParts(try await PartnerKit.verifiedRequest(harness, ref: "acct_1").token)
        #expect(beforeSwitch.header["kid"] == .string(oldKid), "tokens stay on the old key until activation")

        // Just before activation the old key still signs; just after, the new one does.
        harness.clock.advance(by: 86_400 - 120)
        let (oldRequest, oldToken) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        #expect(try TokenParts(oldToken).header["kid"] == .string(oldKid))
        harness.clock.advance(by: 240)
        let (newRequest, newToken) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        #expect(try TokenParts(newToken).header["kid"] == .string(next.kid), "after a day new tokens use the new kid")
        #expect(try await TokenKit.kids(harness) == [oldKid, next.kid], "the retired key stays published")

        let oldCheck = try await harness.post("/operations/sdk/verify-token", ["token": oldToken], bearer: harness.liveKey)
        #expect(oldCheck.data?["valid"] as? Bool == true, "old kid, still published: \(oldCheck)")
        #expect((oldCheck.data?["claims"] as? [String: Any])?["request_id"] as? String == oldRequest)
        let newCheck = try await harness.post("/operations/sdk/verify-token", ["token": newToken], bearer: harness.liveKey)
        #expect(newCheck.data?["valid"] as? Bool == true, "\(newCheck)")
        // A partner with a JWKS client (fetching the served set) accepts the new kid.
        let fetched = PyJWT.verify(token: newToken, jwks: .url(jwksURL), issuer: InlineHarness.apiURL, audience: harness.partner.id,
                                   claims: ["request_id": newRequest], now: harness.clock.now())
        #expect((try? fetched.get()) != nil, "\(fetched)")

        // An hour after the switch the old key leaves the set; tokens under it or under any unknown kid fail.
        harness.clock.advance(by: SigningKeyService.retention + 60)
        #expect(try await TokenKit.kids(harness) == [next.kid])
        let (_, latest) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")
        let latestParts = try TokenParts(latest)
        let stranger = try ES256JWS.sign(claims: latestParts.claims, key: PrivateKey.generate(.p256))
        let oldRecord = try #require(try harness.sesame.store.signingKeys.list().first { $0.id == oldKid })
        // The stored key is sealed: only with the master key does it become the retired private key.
        let oldPEM = try harness.sesame.secrets.open(Array(oldRecord.privateKey.utf8), for: .signingKey, row: oldKid)
        let retired = try ES256JWS.sign(claims: latestParts.claims, key: try PrivateKey(pemEncoded: String(decoding: oldPEM, as: UTF8.self)),
                                        kid: oldKid)
        let relabelled = TokenKit.part(#"{"alg":"ES256","typ":"JWT","kid":"not-a-published-kid"}"#) + "." + latestParts.payloadPart + "."
            + latestParts.signaturePart
        for (label, forged) in [("a stranger's key", stranger), ("the retired key", retired), ("an unknown kid label", relabelled)] {
            let check = try await harness.post("/operations/sdk/verify-token", ["token": forged], bearer: harness.liveKey)
            #expect(check.data?["valid"] as? Bool == false && check.data?["reason"] as? String == "invalid_signature", "\(label): \(check)")
            TokenKit.expectRejected(PyJWT.verify(token: forged, jwks: .url(jwksURL), issuer: InlineHarness.apiURL, audience: harness.partner.id,
                                                 now: harness.clock.now()), containing: "", label)
        }
        let latestCheck = try await harness.post("/operations/sdk/verify-token", ["token": latest], bearer: harness.liveKey)
        #expect(latestCheck.data?["valid"] as? Bool == true, "the same claims under the signing key: \(latestCheck)")
    }

    @Test("P6: verify-token is single use: the second call -> valid:false, reason already_used", arguments: Backend.allCases)
    func singleUse(backend: Backend) async throws {
        let harness = try InlineHarness(backend)
        let person = try harness.person()
        try harness.link("acct_1", to: person.id)
        let (requestID, token) = try await PartnerKit.verifiedRequest(harness, ref: "acct_1")

        let first = try await harness.post("/operations/sdk/verify-token", ["token": token], bearer: harness.liveKey)
        #expect(first.status == 200 && first.data?["valid"] as? Bool == true, "\(first)")
        #expect(first.data?["reason"] == nil)
        let claims = try #require(first.data?["claims"] as? [String: Any], "\(first)")
        #expect(claims["request_id"] as? String == requestID && claims["aud"] as? String == harness.partner.id)

        for attempt in 2...3 {
            let again = try await harness.post("/operations/sdk/verify-token", ["token": token], bearer: harness.liveKey)
            #expect(again.status == 200, "\(again)")
            #expect(again.data?["valid"] as? Bool == false && again.data?["reason"] as? String == "already_used", "call \(attempt): \(again)")
            #expect(Set(again.data?.keys.map { $0 } ?? []) == ["valid", "reason"], "no claims on a refusal: \(again)")
        }
        // The status token is the same one; it is not re-minted to dodge the replay check.
        #expect(try await harness.status(requestID).data?["verification_token"] as? String == token)
    }
}

/// A compact JWS split into its parts.
struct TokenParts {
    let headerPart: String
    let payloadPart: String
    let signaturePart: String
    let header: [String: JSONValue]
    let claims: [String: JSONValue]
    let signature: [UInt8]

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3, "\(token)")
        headerPart = parts[0]
        payloadPart = parts[1]
        signaturePart = parts[2]
        header = try #require(try JSONValue(jsonEncoded: try Base64URL.decode(parts[0])).objectValue)
        claims = try #require(try JSONValue(jsonEncoded: try Base64URL.decode(parts[1])).objectValue)
        signature = try Base64URL.decode(parts[2])
    }

    /// `header.payload`, the bytes the signature covers.
    var signingInput: [UInt8] { Array((headerPart + "." + payloadPart).utf8) }
}

/// A JWKS document in a temporary file, for PyJWT.
struct TemporaryJWKS {
    let path: String

    init(_ body: Data) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-jwks-\(UUID().uuidString).json")
        try body.write(to: url)
        path = url.path
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

enum TokenKit {
    /// base64url of a JSON text.
    static func part(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

    /// A SubjectPublicKeyInfo as PEM text.
    static func pem(_ der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN PUBLIC KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PUBLIC KEY-----\n"
    }

    /// The `kid`s of the served JWKS, in order.
    static func kids(_ harness: InlineHarness) async throws -> [String] {
        let reply = try await harness.send("GET", "/.well-known/jwks.json", body: nil)
        return try #require(reply.object["keys"] as? [[String: Any]], "\(reply)").compactMap { $0["kid"] as? String }
    }

    /// Records an issue unless the script ran and PyJWT refused the token (with `fragment` in its reason).
    static func expectRejected(_ result: Result<Data, PyJWT.Failure>, containing fragment: String, _ label: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        switch result {
        case .failure(.rejected(let reason)):
            #expect(fragment.isEmpty || reason.localizedCaseInsensitiveContains(fragment), "\(label): \(reason)", sourceLocation: sourceLocation)
        case .failure(.unavailable(let detail)):
            Issue.record("\(label): PyJWT did not run: \(detail)", sourceLocation: sourceLocation)
        case .success(let printed):
            Issue.record("\(label): PyJWT accepted \(String(decoding: printed, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    /// `jwt.decode(token, key, algorithms=["ES256"])` for each token, keyed once with the JWKS's first key and once with
    /// the PEM text; each verdict is `accepted` or the PyJWT exception's class name. Times and audience are not checked.
    static func pyJWTDecode(_ tokens: [String], jwksPath: String, pemPath: String) throws -> [[String]] {
        let python = try PyJWT.python.get()
        let script = """
            import json, sys, jwt
            key_set = jwt.PyJWKSet.from_json(open(sys.argv[1], encoding="utf-8").read())
            pem = open(sys.argv[2], "rb").read()
            options = {"verify_aud": False, "verify_exp": False, "verify_iat": False, "verify_iss": False}
            verdicts = []
            for token in sys.argv[3:]:
                row = []
                for key in (key_set.keys[0].key, pem):
                    try:
                        jwt.decode(token, key, algorithms=["ES256"], options=options)
                        row.append("accepted")
                    except jwt.PyJWTError as error:
                        row.append(type(error).__name__)
                verdicts.append(row)
            print(json.dumps(verdicts))
            """
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let output = try PythonEnvironment.run(python, ["-c", script, jwksPath, pemPath] + tokens, environment: environment)
        #expect(output.status == 0, "\(output.standardError)")
        return try #require(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [[String]], "\(output.standardOutput)")
    }
}
