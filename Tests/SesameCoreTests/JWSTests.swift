import Foundation
@testable import SesameCore
import SesameCrypto
import SesameTestSupport
import Testing
import WebAuthn

/// Builds tokens by hand, so a test can sign any header and payload or break one part.
private enum Forge {
    /// A token over these exact header and payload bytes, validly signed with `key` (raw `R ‖ S`).
    static func signed(header: String, payload: String, key: PrivateKey) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let raw = try ECDSASignature.rawRepresentation(derEncoded: key.signature(for: Array(input.utf8)), curve: .p256)
        return input + "." + Base64URL.encode(raw)
    }

    /// A token over these header and payload bytes with the given signature bytes.
    static func token(header: String, payload: String, signature: [UInt8]) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(signature)
    }

    /// An HS256 token whose HMAC secret is `secret` (the alg-confusion attack of RFC 8725 §2.1).
    static func hs256(kid: String, payload: String, secret: [UInt8]) -> String {
        let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT","kid":"\#(kid)"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        return input + "." + Base64URL.encode(HMAC.sha256(key: secret, message: Array(input.utf8)))
    }

    /// The PEM text of a public key (SubjectPublicKeyInfo), as a partner might paste it.
    static func pem(_ key: PublicKey) -> String {
        let body = Data(key.derEncodedSubjectPublicKeyInfo).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
    }

    /// The token's parts as strings.
    static func parts(_ token: String) -> [String] { token.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
}

/// The claims of a §2.4 verification token minted now.
private func verificationClaims(now: Date = Date(), audience: String = "org_1") -> [String: JSONValue] {
    let iat = Int(now.timeIntervalSince1970)
    return [
        "iss": "https://api.sesame.test", "aud": .string(audience), "iat": .integer(iat), "exp": .integer(iat + 300),
        "jti": "jti_01", "request_id": "req_01", "scope": "signup", "env": "test", "verified": true, "linked": true,
        "partner_user_ref": "user-42", "ver": 1,
    ]
}

/// Expects `invalid_jwt` and returns the detail, so a test can check which rule fired.
@discardableResult
private func expectInvalid(
    _ token: String, keys: [String: PublicKey], sourceLocation: SourceLocation = #_sourceLocation
) -> String {
    do {
        let claims = try ES256JWS.verify(token: token, keys: keys)
        Issue.record("accepted a bad token: \(claims)", sourceLocation: sourceLocation)
        return ""
    } catch {
        #expect(error.code == .invalidJWT, sourceLocation: sourceLocation)
        return error.detail
    }
}

@Suite struct ES256JWSTests {
    let key = PrivateKey.generate(.p256)
    var kid: String { try! JWK.thumbprint(of: key.publicKey) }
    var keys: [String: PublicKey] { [kid: key.publicKey] }

    @Test("a signed token verifies and gives back the same claims")
    func roundTrip() throws {
        var claims = verificationClaims()
        claims["nested"] = ["a": [1, 2.5, "x", nil, false], "é": "\u{1F600}\"\\\n"]
        let token = try ES256JWS.sign(claims: claims, key: key, kid: kid)
        #expect(try ES256JWS.verify(token: token, keys: keys) == claims)
        // Fresh randomness each time, both verify.
        let again = try ES256JWS.sign(claims: claims, key: key, kid: kid)
        #expect(again != token)
        #expect(try ES256JWS.verify(token: again, keys: keys) == claims)
    }

    @Test("the header is exactly alg, typ, kid and the claims are written with sorted names")
    func exactHeaderAndPayload() throws {
        let token = try ES256JWS.sign(claims: ["b": 1, "a": "x/y", "c": ["z": true, "y": nil]], key: key, kid: kid)
        let parts = Forge.parts(token)
        #expect(parts.count == 3)
        #expect(String(decoding: try Base64URL.decode(parts[0]), as: UTF8.self) == #"{"alg":"ES256","typ":"JWT","kid":"\#(kid)"}"#)
        #expect(String(decoding: try Base64URL.decode(parts[1]), as: UTF8.self) == #"{"a":"x/y","b":1,"c":{"y":null,"z":true}}"#)
        #expect(!token.contains("="))
    }

    @Test("the kid defaults to the key's thumbprint and is escaped as JSON")
    func kidDefaultAndEscaping() throws {
        let token = try ES256JWS.sign(claims: [:], key: key)
        let header = try Base64URL.decode(Forge.parts(token)[0])
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","typ":"JWT","kid":"\#(kid)"}"#)
        #expect(kid.count == 43)
        let odd = #"k"1\"#
        let escaped = try ES256JWS.sign(claims: [:], key: key, kid: odd)
        #expect(try JSONValue(jsonEncoded: Base64URL.decode(Forge.parts(escaped)[0])).objectValue?["kid"] == .string(odd))
        #expect(try ES256JWS.verify(token: escaped, keys: [odd: key.publicKey]) == [:])
    }

    @Test("the signature is the raw 64-byte R‖S, valid once converted to DER")
    func signatureIsRaw() throws {
        for _ in 0..<20 {
            let token = try ES256JWS.sign(claims: ["n": 1], key: key, kid: kid)
            let parts = Forge.parts(token)
            let raw = try Base64URL.decode(parts[2])
            #expect(raw.count == 64 && parts[2].count == 86)
            let der = try ECDSASignature.derRepresentation(raw: raw, curve: .p256)
            #expect(key.publicKey.isValidSignature(der, for: Array("\(parts[0]).\(parts[1])".utf8), algorithm: .ecdsaSHA256))
        }
    }

    @Test("signing refuses an Ed25519 key, an empty kid and a non-finite number")
    func signingRefusals() {
        #expect(throws: SesameError.code(.invalidArgument)) { try ES256JWS.sign(claims: [:], key: PrivateKey.generate(.ed25519), kid: "k") }
        #expect(throws: SesameError.code(.invalidArgument)) { try ES256JWS.sign(claims: [:], key: key, kid: "") }
        #expect(throws: SesameError.code(.invalidArgument)) { try ES256JWS.sign(claims: ["x": .number(.infinity)], key: key, kid: kid) }
    }

    @Test("P4: an HS256 token keyed with the public key (PEM, SPKI DER, raw point, x, JWKS) is rejected")
    func hs256WithPublicKeyBytes() throws {
        let payload = String(decoding: try JSONValue.object(verificationClaims()).jsonEncoded(), as: UTF8.self)
        let point = try #require(key.publicKey.ellipticCurvePoint)
        let secrets: [[UInt8]] = [
            Array(Forge.pem(key.publicKey).utf8), key.publicKey.derEncodedSubjectPublicKeyInfo, [0x04] + point.x + point.y,
            point.x, try JWKSet(publicKeys: [key.publicKey]).jsonEncoded(), Array(kid.utf8),
        ]
        for secret in secrets {
            let detail = expectInvalid(Forge.hs256(kid: kid, payload: payload, secret: secret), keys: keys)
            #expect(detail == "alg must be ES256")
        }
        // The HMAC under an ES256 header: 32 bytes, not 64, and no valid ECDSA signature.
        let input = Forge.parts(try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)).prefix(2).joined(separator: ".")
        let mac = HMAC.sha256(key: Array(Forge.pem(key.publicKey).utf8), message: Array(input.utf8))
        expectInvalid(input + "." + Base64URL.encode(mac), keys: keys)
        expectInvalid(input + "." + Base64URL.encode(mac + mac), keys: keys)
    }

    @Test("P4: alg none, other algorithms, and alg spellings that are not exactly ES256 are rejected", arguments: [
        #""none""#, #""None""#, #""NONE""#, #""HS256""#, #""RS256""#, #""PS256""#, #""ES384""#, #""ES512""#, #""EdDSA""#,
        #""es256""#, #""ES256 ""#, #"["ES256"]"#, "null", "256",
    ])
    func otherAlgorithms(alg: String) throws {
        let header = #"{"alg":\#(alg),"typ":"JWT","kid":"\#(kid)"}"#
        let payload = #"{"iss":"https://api.sesame.test"}"#
        // An empty signature (alg none), and a valid ES256 signature under the wrong header: both refused.
        expectInvalid(Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".", keys: keys)
        #expect(expectInvalid(try Forge.signed(header: header, payload: payload, key: key), keys: keys) == "alg must be ES256")
    }

    @Test("a DER signature in place of R‖S is rejected")
    func derSignature() throws {
        let token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        let parts = Forge.parts(token)
        let der = try ECDSASignature.derRepresentation(raw: Base64URL.decode(parts[2]), curve: .p256)
        #expect(key.publicKey.isValidSignature(der, for: Array("\(parts[0]).\(parts[1])".utf8), algorithm: .ecdsaSHA256))
        let detail = expectInvalid("\(parts[0]).\(parts[1]).\(Base64URL.encode(der))", keys: keys)
        #expect(detail.hasPrefix("the signature must be 64 bytes"))
        // A 64-byte slice of something else, and zeroes.
        expectInvalid("\(parts[0]).\(parts[1]).\(Base64URL.encode(der.prefix(64)))", keys: keys)
        expectInvalid("\(parts[0]).\(parts[1]).\(Base64URL.encode([UInt8](repeating: 0, count: 64)))", keys: keys)
    }

    @Test("an unknown, missing, empty or non-string kid is rejected, and a kid whose key is not P-256")
    func kidRules() throws {
        let token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        #expect(expectInvalid(token, keys: [:]) == "unknown kid")
        #expect(expectInvalid(token, keys: ["other": key.publicKey]) == "unknown kid")
        let payload = #"{"ver":1}"#
        for header in [#"{"alg":"ES256","typ":"JWT"}"#, #"{"alg":"ES256","kid":""}"#, #"{"alg":"ES256","kid":7}"#] {
            #expect(expectInvalid(try Forge.signed(header: header, payload: payload, key: key), keys: keys) == "kid is missing")
        }
        let edwards = PrivateKey.generate(.ed25519).publicKey
        #expect(expectInvalid(token, keys: [kid: edwards]) == "the key for this kid is not P-256")
        // Another P-256 key under the same kid: the signature does not verify.
        #expect(expectInvalid(token, keys: [kid: PrivateKey.generate(.p256).publicKey]) == "bad signature")
    }

    @Test("P5: with two published keys, tokens of either verify; a retired key's tokens fail once it is withdrawn")
    func rotation() throws {
        let old = key, new = PrivateKey.generate(.p256)
        let set = try JWKSet(publicKeys: [old.publicKey, new.publicKey])
        let published = try set.publicKeys()
        #expect(published.count == 2)
        let claims = verificationClaims()
        let oldToken = try ES256JWS.sign(claims: claims, key: old)
        let newToken = try ES256JWS.sign(claims: claims, key: new)
        #expect(try ES256JWS.verify(token: oldToken, keys: published) == claims)
        #expect(try ES256JWS.verify(token: newToken, keys: published) == claims)
        let withdrawn = try JWKSet(publicKeys: [new.publicKey]).publicKeys()
        #expect(expectInvalid(oldToken, keys: withdrawn) == "unknown kid")
        _ = try ES256JWS.verify(token: newToken, keys: withdrawn)
    }

    @Test("a changed payload, header or signature is rejected")
    func tampering() throws {
        let token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        let parts = Forge.parts(token)
        var claims = verificationClaims()
        claims["aud"] = "org_2"
        let otherPayload = Base64URL.encode(try JSONValue.object(claims).jsonEncoded())
        #expect(expectInvalid("\(parts[0]).\(otherPayload).\(parts[2])", keys: keys) == "bad signature")
        let otherHeader = Base64URL.encode(Array(#"{"kid":"\#(kid)","alg":"ES256","typ":"JWT"}"#.utf8))
        #expect(expectInvalid("\(otherHeader).\(parts[1]).\(parts[2])", keys: keys) == "bad signature")
        var signature = try Base64URL.decode(parts[2])
        signature[10] ^= 0x01
        #expect(expectInvalid("\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))", keys: keys) == "bad signature")
        // The same token signed over by another key.
        let stranger = try ES256JWS.sign(claims: verificationClaims(), key: PrivateKey.generate(.p256), kid: kid)
        #expect(expectInvalid(stranger, keys: keys) == "bad signature")
    }

    @Test("anything but three parts is rejected")
    func partCounts() throws {
        let token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        let parts = Forge.parts(token)
        for bad in ["", ".", "..", "...", parts[0], parts.prefix(2).joined(separator: "."), token + ".", token + "." + parts[2],
                    token + "..", parts.joined(separator: ".."), "." + token] {
            expectInvalid(bad, keys: keys)
        }
        #expect(expectInvalid(token + "." + parts[1] + "." + parts[2], keys: keys) == "a compact JWS has 3 parts, this has 5")
        // A JWE-style five-part token and a JSON serialization are not compact JWS.
        expectInvalid(#"{"payload":"\#(parts[1])","protected":"\#(parts[0])","signature":"\#(parts[2])"}"#, keys: keys)
    }

    @Test("padding, the standard base64 alphabet, whitespace and non-zero trailing bits are rejected")
    func nonCanonicalBase64URL() throws {
        // A signature containing - or _ (almost every one does), so there is something to translate.
        var token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        while !Forge.parts(token)[2].contains(where: { $0 == "-" || $0 == "_" }) {
            token = try ES256JWS.sign(claims: verificationClaims(), key: key, kid: kid)
        }
        let parts = Forge.parts(token)
        _ = try ES256JWS.verify(token: token, keys: keys)
        let standard = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        // WebAuthn's lenient decoder reads each of these as the same bytes; the strict one must not.
        #expect(try Base64URL.decode(standard) == Base64URL.decode(parts[2]))
        #expect(try Base64URL.decode(parts[2] + "==") == Base64URL.decode(parts[2]))
        let variants = [
            "\(parts[0]).\(parts[1]).\(standard)",
            "\(parts[0]).\(parts[1]).\(parts[2])==",
            "\(parts[0]).\(parts[1]).\(parts[2])=",
            "\(parts[0]) .\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2])\n",
            "\(parts[0]).\(parts[1]).\(parts[2].prefix(40))\n\(parts[2].dropFirst(40))",
            "\(parts[0]).\(parts[1]).\(parts[2].dropLast())",
        ]
        for variant in variants { #expect(expectInvalid(variant, keys: keys) == "a part is not unpadded base64url") }
        // 86 characters carry 64 bytes plus 4 spare bits, which must be zero.
        let last = parts[2].last!
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let bumped = alphabet[(alphabet.firstIndex(of: last)! & ~0x0F) | 0x01]
        #expect(expectInvalid("\(parts[0]).\(parts[1]).\(parts[2].dropLast())\(bumped)", keys: keys) == "a part is not unpadded base64url")
        // Padding on the header or payload too.
        let paddedHeader = Data(try Base64URL.decode(parts[0])).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        if paddedHeader.hasSuffix("=") { expectInvalid("\(paddedHeader).\(parts[1]).\(parts[2])", keys: keys) }
    }

    @Test("header rules: an object, typ JWT when present, no crit, no duplicate names; the payload is an object")
    func headerAndPayloadShape() throws {
        let claims = #"{"ver":1}"#
        func header(_ extra: String) -> String { #"{"alg":"ES256","kid":"\#(kid)"\#(extra)}"# }
        /// Why a validly signed token with this header and payload is refused.
        func refusal(header: String, payload: String = claims, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            expectInvalid(try Forge.signed(header: header, payload: payload, key: key), keys: keys, sourceLocation: sourceLocation)
        }
        for accepted in [header(""), header(#","typ":"JWT","x5u":"https://x""#)] {
            #expect(try ES256JWS.verify(token: Forge.signed(header: accepted, payload: claims, key: key), keys: keys) == ["ver": 1])
        }
        #expect(try refusal(header: header(#","typ":"at+jwt""#)) == "typ must be JWT")
        #expect(try refusal(header: header(#","crit":["exp"]"#)) == "crit is not supported")
        // Duplicate names: one parser would read the first, another the last.
        #expect(try refusal(header: header(#","alg":"none""#)) == "the header is not a JSON object")
        #expect(try refusal(header: header(#","kid":"x""#)) == "the header is not a JSON object")
        for bad in [#"["ES256"]"#, "null", "", #"{"alg":"ES256","kid":"\#(kid)""#, header("") + " x"] {
            #expect(try refusal(header: bad) == "the header is not a JSON object")
        }
        for bad in ["[]", "1", #""x""#, "", #"{"ver":1,"ver":2}"#, #"{"ver":1"#, "null"] {
            #expect(try refusal(header: header(""), payload: bad) == "the payload is not a JSON object")
        }
    }

    @Test("a token longer than the limit is rejected before any parsing")
    func lengthLimit() throws {
        let big = try ES256JWS.sign(claims: ["pad": .string(String(repeating: "x", count: 7000))], key: key, kid: kid)
        #expect(big.utf8.count > ES256JWS.maximumTokenLength)
        #expect(expectInvalid(big, keys: keys).hasPrefix("token longer than"))
    }

    @Test("the partner check: issuer, audience (string or array), exp and iat with 60 s leeway")
    func partnerChecks() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = try ES256JWS.sign(claims: verificationClaims(now: now), key: key)
        func check(_ token: String, issuer: String = "https://api.sesame.test", audience: String = "org_1", at offset: TimeInterval)
            throws(SesameError) -> [String: JSONValue]
        {
            try ES256JWS.verify(token: token, keys: keys, issuer: issuer, audience: audience, now: now.addingTimeInterval(offset))
        }
        #expect(try check(token, at: 0)["request_id"] == "req_01")
        #expect(try check(token, at: -60)["ver"] == 1)
        #expect(try check(token, at: 359)["ver"] == 1)
        #expect(throws: SesameError.code(.invalidJWT)) { try check(token, at: 360) }
        #expect(throws: SesameError.code(.invalidJWT)) { try check(token, at: -61) }
        #expect(throws: SesameError.code(.invalidJWT)) { try check(token, issuer: "https://api.sesame.test/", at: 0) }
        #expect(throws: SesameError.code(.invalidJWT)) { try check(token, audience: "org_2", at: 0) }
        #expect(throws: SesameError.code(.invalidJWT)) { try check(token, audience: "org_", at: 0) }
        var claims = verificationClaims(now: now)
        claims["aud"] = ["org_9", "org_1"]
        #expect(try check(ES256JWS.sign(claims: claims, key: key), at: 0)["aud"] == ["org_9", "org_1"])
        claims["exp"] = "1800000300"
        #expect(throws: SesameError.code(.invalidJWT)) { try check(ES256JWS.sign(claims: claims, key: key), at: 0) }
        claims.removeValue(forKey: "exp")
        #expect(throws: SesameError.code(.invalidJWT)) { try check(ES256JWS.sign(claims: claims, key: key), at: 0) }
    }

    @Test("a token PyJWT signed (RFC 7515 A.3 key) verifies here: the format is interoperable both ways")
    func pyJWTSignedToken() throws {
        let set = try JWKSet(jsonEncoded: Array(RFCKeys.rfc7515A3JWKS.utf8))
        let claims = try ES256JWS.verify(token: RFCKeys.pyJWTToken, keys: set.publicKeys(), issuer: "https://api.example",
                                         audience: "org_1", now: Date(timeIntervalSince1970: 1_800_000_100))
        #expect(claims == ["iss": "https://api.example", "aud": "org_1", "iat": 1_800_000_000, "exp": 1_800_000_300, "ver": 1, "verified": true])
        // PyJWT orders the header alg, kid, typ; that is fine, only the values count.
        var tampered = Forge.parts(RFCKeys.pyJWTToken)
        let otherAudience = #"{"iss":"https://api.example","aud":"org_2","iat":1800000000,"exp":1800000300,"ver":1,"verified":true}"#
        tampered[1] = Base64URL.encode(Array(otherAudience.utf8))
        expectInvalid(tampered.joined(separator: "."), keys: try set.publicKeys())
    }
}

/// Published example keys and a token made with them by PyJWT 2.10.1.
private enum RFCKeys {
    /// RFC 7517 Appendix A.1, the EC P-256 public key (`kid` "1" there).
    static let rfc7517A1 = (x: "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4", y: "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM")
    /// Its RFC 7638 thumbprint, computed with Python's hashlib over `{"crv":"P-256","kty":"EC","x":…,"y":…}`.
    static let rfc7517A1Thumbprint = "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s"
    /// RFC 7515 Appendix A.3, the ES256 example key (public part).
    static let rfc7515A3 = (x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
    /// Its RFC 7638 thumbprint, computed the same way.
    static let rfc7515A3Thumbprint = "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"
    /// A JWKS holding the RFC 7515 A.3 key.
    static let rfc7515A3JWKS = #"{"keys":[{"kty":"EC","crv":"P-256","x":"\#(rfc7515A3.x)","y":"\#(rfc7515A3.y)","#
        + #""kid":"\#(rfc7515A3Thumbprint)","use":"sig","alg":"ES256"}]}"#
    /// `jwt.encode({"iss":"https://api.example","aud":"org_1","iat":1800000000,"exp":1800000300,"ver":1,"verified":True},
    /// <RFC 7515 A.3 private key>, algorithm="ES256", headers={"kid": rfc7515A3Thumbprint})` with PyJWT 2.10.1.
    static let pyJWTToken = "eyJhbGciOiJFUzI1NiIsImtpZCI6Im9LSXl3dkdVcFRWVHl4TVEzYndJSWVRVXVkZnJfQ2tMTWpDRTE5RUNELVUiLCJ0eXAiOiJKV1QifQ"
        + ".eyJpc3MiOiJodHRwczovL2FwaS5leGFtcGxlIiwiYXVkIjoib3JnXzEiLCJpYXQiOjE4MDAwMDAwMDAsImV4cCI6MTgwMDAwMDMwMCwidmVyIjoxLCJ2ZXJpZmllZCI6dHJ1ZX0"
        + ".LppWJRuv6F9pIplcD1efq4C9Vlem1y7kqzxISBiEo1JfVomZWVJmCEdiHvgDHvYVE3vGumTQ2IyHVqGhvLSpNg"
}

@Suite struct JWKTests {
    @Test("RFC 7638 thumbprints of the RFC 7517 A.1 and RFC 7515 A.3 P-256 keys")
    func thumbprintVectors() throws {
        for (point, expected) in [(RFCKeys.rfc7517A1, RFCKeys.rfc7517A1Thumbprint), (RFCKeys.rfc7515A3, RFCKeys.rfc7515A3Thumbprint)] {
            let key = try PublicKey(ellipticCurve: .p256, x: Base64URL.decode(point.x), y: Base64URL.decode(point.y))
            #expect(try JWK.thumbprint(of: key) == expected)
            let jwk = try JWK(publicKey: key)
            #expect(jwk.kid == expected && jwk.x == point.x && jwk.y == point.y)
        }
    }

    @Test("a key's JWK has kty EC, crv P-256, 43-character x and y, kid = thumbprint, use sig, alg ES256, and reads back")
    func members() throws {
        let key = PrivateKey.generate(.p256).publicKey
        let jwk = try JWK(publicKey: key)
        #expect(jwk.kty == "EC" && jwk.crv == "P-256" && jwk.use == "sig" && jwk.alg == "ES256")
        #expect(jwk.x.count == 43 && jwk.y.count == 43)
        #expect(try jwk.kid == JWK.thumbprint(of: key))
        #expect(try jwk.publicKey().derEncodedSubjectPublicKeyInfo == key.derEncodedSubjectPublicKeyInfo)
    }

    @Test("the JWKS document is exact, sorted JSON and parses back to the same set")
    func keySetJSON() throws {
        let key = try PublicKey(ellipticCurve: .p256, x: Base64URL.decode(RFCKeys.rfc7515A3.x), y: Base64URL.decode(RFCKeys.rfc7515A3.y))
        let set = try JWKSet(publicKeys: [key])
        let json = String(decoding: set.jsonEncoded(), as: UTF8.self)
        #expect(json == #"{"keys":[{"alg":"ES256","crv":"P-256","kid":"\#(RFCKeys.rfc7515A3Thumbprint)","kty":"EC","use":"sig","#
            + #""x":"\#(RFCKeys.rfc7515A3.x)","y":"\#(RFCKeys.rfc7515A3.y)"}]}"#)
        #expect(try JWKSet(jsonEncoded: set.jsonEncoded()) == set)
        #expect(try JWKSet(jsonEncoded: Array(RFCKeys.rfc7515A3JWKS.utf8)) == set)
        #expect(try Array(set.publicKeys().keys) == [RFCKeys.rfc7515A3Thumbprint])
        // Codable gives the same members.
        let decoded = try JSONDecoder().decode(JWKSet.self, from: Data(set.jsonEncoded()))
        #expect(decoded == set)
    }

    @Test("thumbprints and JWKs are for P-256 keys only")
    func otherKeys() throws {
        let edwards = PrivateKey.generate(.ed25519).publicKey
        #expect(throws: SesameError.code(.invalidArgument)) { try JWK.thumbprint(of: edwards) }
        #expect(throws: SesameError.code(.invalidArgument)) { try JWK(publicKey: edwards) }
        #expect(throws: SesameError.code(.invalidArgument)) { try JWKSet(publicKeys: [edwards]) }
    }

    @Test("unusable JWKs are refused when read", arguments: [
        (#""kty":"RSA""#, "kty"), (#""crv":"P-384""#, "crv"), (#""use":"enc""#, "use"), (#""alg":"HS256""#, "alg"),
        (#""x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU=""#, "padded x"), (#""x":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA""#, "off the curve"),
        (#""y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a""#, "short y"), (#""x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU+""#, "bad x"),
    ])
    func unusableKeys(replacement: String, why: String) throws {
        let name = String(replacement.split(separator: ":")[0])
        var members = #""kty":"EC","crv":"P-256","x":"\#(RFCKeys.rfc7515A3.x)","y":"\#(RFCKeys.rfc7515A3.y)","kid":"k","use":"sig","alg":"ES256""#
            .split(separator: ",").map(String.init)
        members = members.map { $0.hasPrefix(name + ":") ? replacement : $0 }
        let set = try JWKSet(jsonEncoded: Array("{\"keys\":[{\(members.joined(separator: ","))}]}".utf8))
        #expect(throws: SesameError.code(.invalidArgument), "\(why)") { try set.publicKeys() }
    }

    @Test("malformed JWK Sets and duplicate kids are refused")
    func malformedSets() throws {
        for bad in [#"[]"#, #"{"keys":{}}"#, #"{"keys":[1]}"#, #"{"keys":[{"kty":"EC"}]}"#, #"{}"#, "", #"{"keys":[],"keys":[]}"#] {
            #expect(throws: SesameError.code(.invalidArgument), "\(bad)") { try JWKSet(jsonEncoded: Array(bad.utf8)) }
        }
        let jwk = try JWK(publicKey: PrivateKey.generate(.p256).publicKey)
        #expect(throws: SesameError.code(.invalidArgument)) { try JWKSet(keys: [jwk, jwk]).publicKeys() }
        #expect(try JWKSet(jsonEncoded: Array(#"{"keys":[]}"#.utf8)).keys.isEmpty)
    }
}

@Suite struct JSONValueTests {
    @Test("parses every kind of value and writes it back compact and sorted")
    func roundTrip() throws {
        let text = #" { "b" : [1, -0, 2.5, -1e3, 1E+2, true, false, null, "s\u00e9\ud83d\ude00\n\"\\\/"], "a" : {"y":{},"x":[]} } "#
        let value = try JSONValue(jsonEncoded: Array(text.utf8))
        #expect(value == ["a": ["y": [:], "x": []], "b": [1, 0, 2.5, -1000.0, 100.0, true, false, nil, "sé\u{1F600}\n\"\\/"]])
        #expect(String(decoding: try value.jsonEncoded(), as: UTF8.self) == #"{"a":{"x":[],"y":{}},"b":[1,0,2.5,-1000.0,100.0,true,false,null,"sé😀\n\"\\/"]}"#)
        #expect(try JSONValue(jsonEncoded: value.jsonEncoded()) == value)
        #expect(try JSONValue(jsonEncoded: Array("9223372036854775807".utf8)) == .integer(Int.max))
        #expect(try JSONValue(jsonEncoded: Array("9223372036854775808".utf8)) == .number(9_223_372_036_854_775_808))
        #expect(String(decoding: try JSONValue.string("\u{0}\u{1F}\t\r").jsonEncoded(), as: UTF8.self) == #""\u0000\u001f\t\r""#)
    }

    @Test("rejects malformed JSON, duplicate names, lone surrogates, huge numbers and deep nesting", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity",
        "tru", "nul", "\"a", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\u{1}\"", "1e400", "[1] 2",
        "{\"a\":1,\"a\":1}", "{\"a\":{\"b\":1,\"b\":2}}", String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func rejects(text: String) {
        #expect(throws: SesameError.code(.invalidArgument)) { try JSONValue(jsonEncoded: Array(text.utf8)) }
    }

    @Test("invalid UTF-8 inside a string is rejected")
    func invalidUTF8() {
        #expect(throws: SesameError.code(.invalidArgument)) { try JSONValue(jsonEncoded: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: SesameError.code(.invalidArgument)) { try JSONValue(jsonEncoded: [0x22, 0xFF, 0x22]) }
    }

    @Test("Codable reads and writes the same values")
    func codable() throws {
        let value: JSONValue = ["n": 1, "d": 1.5, "s": "x", "b": true, "z": nil, "a": [1, "2"]]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try JSONDecoder().decode(JSONValue.self, from: encoder.encode(value)) == value)
    }
}

/// The offline partner check with PyJWT from PyPI (Tests/Python/verify_token.py): an off-the-shelf JOSE library
/// accepts what Sesame signs and refuses the same attacks.
@Suite struct PyJWTInteropTests {
    let key = PrivateKey.generate(.p256)
    let issuer = "https://api.sesame.test"

    /// Writes the JWKS for `keys` to a temporary file and returns its path.
    func jwksFile(_ keys: [PublicKey]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-jwks-\(UUID().uuidString).json")
        try Data(JWKSet(publicKeys: keys).jsonEncoded()).write(to: path)
        return path.path
    }

    /// Expects PyJWT to refuse the token (not to fail to run) and returns its reason.
    @discardableResult
    func expectRejected(_ result: Result<Data, PyJWT.Failure>, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        switch result {
        case .success(let claims):
            Issue.record("PyJWT accepted: \(String(decoding: claims, as: UTF8.self))", sourceLocation: sourceLocation)
        case .failure(.unavailable(let detail)):
            Issue.record("PyJWT did not run: \(detail)", sourceLocation: sourceLocation)
        case .failure(.rejected(let reason)):
            return reason
        }
        return ""
    }

    @Test("PyJWT accepts a Sesame token with only ES256, the issuer and the audience configured, and sees the same claims")
    func accepts() throws {
        let file = try jwksFile([key.publicKey])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let claims = verificationClaims()
        let token = try ES256JWS.sign(claims: claims, key: key)
        let result = PyJWT.verify(token: token, jwks: .file(file), issuer: issuer, audience: "org_1",
                                  claims: ["request_id": "req_01", "scope": "signup", "env": "test", "partner_user_ref": "user-42",
                                           "verified": "true", "linked": "true", "ver": "1"])
        let printed = try result.get()
        #expect(try JSONValue(jsonEncoded: printed) == .object(claims))
    }

    @Test("PyJWT rejects a tampered token, a wrong audience, a wrong issuer, an unknown kid and an expired token")
    func rejects() throws {
        let file = try jwksFile([key.publicKey])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let token = try ES256JWS.sign(claims: verificationClaims(), key: key)
        let parts = Forge.parts(token)
        var changed = verificationClaims()
        changed["request_id"] = "req_02"
        let tampered = "\(parts[0]).\(Base64URL.encode(try JSONValue.object(changed).jsonEncoded())).\(parts[2])"
        #expect(expectRejected(PyJWT.verify(token: tampered, jwks: .file(file), issuer: issuer, audience: "org_1")).contains("InvalidSignatureError"))
        #expect(expectRejected(PyJWT.verify(token: token, jwks: .file(file), issuer: issuer, audience: "org_2")).contains("InvalidAudienceError"))
        #expect(expectRejected(PyJWT.verify(token: token, jwks: .file(file), issuer: issuer + "/", audience: "org_1")).contains("InvalidIssuerError"))
        #expect(expectRejected(PyJWT.verify(token: token, jwks: .file(file), issuer: issuer, audience: "org_1", claims: ["request_id": "req_02"]))
            .contains("claim request_id"))
        let stranger = try ES256JWS.sign(claims: verificationClaims(), key: PrivateKey.generate(.p256))
        #expect(expectRejected(PyJWT.verify(token: stranger, jwks: .file(file), issuer: issuer, audience: "org_1")).contains("kid"))
        let old = try ES256JWS.sign(claims: verificationClaims(now: Date().addingTimeInterval(-361)), key: key)
        #expect(expectRejected(PyJWT.verify(token: old, jwks: .file(file), issuer: issuer, audience: "org_1")).contains("ExpiredSignatureError"))
    }

    @Test("P4: PyJWT rejects HS256 re-signed with the public key's PEM or raw bytes, and alg none")
    func algorithmConfusion() throws {
        let file = try jwksFile([key.publicKey])
        defer { try? FileManager.default.removeItem(atPath: file) }
        let kid = try JWK.thumbprint(of: key.publicKey)
        let payload = String(decoding: try JSONValue.object(verificationClaims()).jsonEncoded(), as: UTF8.self)
        let point = try #require(key.publicKey.ellipticCurvePoint)
        for secret in [Array(Forge.pem(key.publicKey).utf8), [0x04] + point.x + point.y, key.publicKey.derEncodedSubjectPublicKeyInfo] {
            let reason = expectRejected(PyJWT.verify(token: Forge.hs256(kid: kid, payload: payload, secret: secret), jwks: .file(file),
                                                     issuer: issuer, audience: "org_1"))
            #expect(reason.contains("alg must be ES256"))
            #expect(expectInvalid(Forge.hs256(kid: kid, payload: payload, secret: secret), keys: [kid: key.publicKey]) == "alg must be ES256")
        }
        let none = Forge.token(header: #"{"alg":"none","typ":"JWT","kid":"\#(kid)"}"#, payload: payload, signature: [])
        #expect(expectRejected(PyJWT.verify(token: none, jwks: .file(file), issuer: issuer, audience: "org_1")).contains("alg must be ES256"))
    }

    @Test("P5: PyJWT verifies tokens of both published keys during a rotation")
    func rotation() throws {
        let new = PrivateKey.generate(.p256)
        let file = try jwksFile([key.publicKey, new.publicKey])
        defer { try? FileManager.default.removeItem(atPath: file) }
        for signer in [key, new] {
            let token = try ES256JWS.sign(claims: verificationClaims(), key: signer)
            _ = try PyJWT.verify(token: token, jwks: .file(file), issuer: issuer, audience: "org_1").get()
        }
    }
}

/// The verification token's claims object is what their `Codable` form writes.
@Suite struct VerificationTokenClaimsTests {
    @Test("the claims object equals the JSONEncoder form, with partner_user_ref only when set", arguments: [nil, "user-42"])
    func claimsObject(partnerUserRef: String?) throws {
        let claims = VerificationTokenClaims(iss: "https://api.example", aud: "org_1", iat: 1_800_000_000, exp: 1_800_000_300, jti: "j\"1",
                                             requestID: "req_1", scope: "login", env: "live", verified: true, linked: false,
                                             partnerUserRef: partnerUserRef, ver: 1)
        let encoded = try JSONValue(jsonEncoded: Array(try JSONEncoder().encode(claims)))
        #expect(JSONValue.object(claims.jsonObject) == encoded)
        #expect((claims.jsonObject["partner_user_ref"] != nil) == (partnerUserRef != nil))
    }
}
