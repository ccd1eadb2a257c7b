import Foundation
import SesameCrypto
import Testing
import WebAuthn
@testable import SesameCore

/// Compact HS256 tokens: only a genuine three-part token of bounded length under the right key gives its payload.
@Suite struct HS256JWTTests {
    static let key = Array(repeating: UInt8(7), count: 32)
    static let payload = Array(#"{"sub":"u1","exp":1}"#.utf8)

    @Test("a signed token gives back its payload; its parts are found byte by byte")
    func roundTrip() throws {
        let token = HS256JWT.sign(payload: Self.payload, key: Self.key)
        #expect(HS256JWT.verifiedPayload(token, key: Self.key) == Self.payload)
        let parts = try #require(HS256JWT.segments(token))
        #expect(try Base64URL.decode(String(parts.payload)) == Self.payload)
        #expect(parts.signingInput == "\(parts.header).\(parts.payload)")
        #expect("\(parts.signingInput).\(parts.signature)" == token)
    }

    @Test("refused: another key, a changed part, too few or too many parts, empty parts, a token over the length limit, another alg")
    func refusals() throws {
        let token = HS256JWT.sign(payload: Self.payload, key: Self.key)
        let parts = try #require(HS256JWT.segments(token))
        #expect(HS256JWT.verifiedPayload(token, key: Array(repeating: 8, count: 32)) == nil)
        let otherPayload = Base64URL.encode(Array(#"{"sub":"u2","exp":1}"#.utf8))
        for bad in ["\(parts.header).\(otherPayload).\(parts.signature)", "\(parts.header).\(parts.payload)", "\(token).\(parts.signature)",
                    "..", "\(parts.header)..\(parts.signature)", "", token + "A", String(token.dropLast()), token.replacingOccurrences(of: ".", with: "\u{2024}")] {
            #expect(HS256JWT.verifiedPayload(bad, key: Self.key) == nil, "\(bad.prefix(40))")
        }
        #expect(HS256JWT.segments("a.b.c.d") == nil && HS256JWT.segments("a.b") == nil && HS256JWT.segments("abc") == nil)
        // A genuine signature over a header that names another algorithm.
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let input = "\(noneHeader).\(parts.payload)"
        let signed = input + "." + Base64URL.encode(HMAC.sha256(key: Self.key, message: Array(input.utf8)))
        #expect(HS256JWT.verifiedPayload(signed, key: Self.key) == nil)
        // Over the length limit, however genuine.
        let long = HS256JWT.sign(payload: Array(repeating: UInt8(ascii: "a"), count: HS256JWT.maximumLength), key: Self.key)
        #expect(HS256JWT.segments(long) == nil && HS256JWT.verifiedPayload(long, key: Self.key) == nil)
    }
}
