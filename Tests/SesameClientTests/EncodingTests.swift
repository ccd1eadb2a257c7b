import Testing
import WebAuthn

@testable import SesameClient

/// The SDK's own canonical CBOR encoder, base64url and client data serialization.
@Suite struct EncodingTests {
    @Test(
        "integers use the shortest head",
        arguments: [
            (Int64(0), [0x00]), (23, [0x17]), (24, [0x18, 0x18]), (255, [0x18, 0xFF]), (256, [0x19, 0x01, 0x00]),
            (65_535, [0x19, 0xFF, 0xFF]), (65_536, [0x1A, 0x00, 0x01, 0x00, 0x00]),
            (4_294_967_296, [0x1B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00]),
            (-1, [0x20]), (-7, [0x26]), (-24, [0x37]), (-25, [0x38, 0x18]), (-257, [0x39, 0x01, 0x00]),
            (Int64.min, [0x3B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ] as [(Int64, [UInt8])])
    func integers(value: Int64, expected: [UInt8]) {
        #expect(CBORItem.integer(value).encoded == expected)
    }

    @Test("strings carry their length; a 24-byte string takes a one-byte length")
    func strings() {
        #expect(CBORItem.text("fmt").encoded == [0x63, 0x66, 0x6D, 0x74])
        #expect(CBORItem.bytes([]).encoded == [0x40])
        #expect(
            CBORItem.bytes(Array(repeating: 1, count: 24)).encoded == [0x58, 0x18] + Array(repeating: 1, count: 24))
        #expect(CBORItem.text("é").encoded == [0x62, 0xC3, 0xA9])
    }

    @Test("map keys sort by major type, then length, then bytes (CTAP2 canonical)")
    func mapOrder() {
        let map = CBORItem.map([
            (.text("b"), .integer(0)), (.integer(-1), .integer(0)), (.text("aa"), .integer(0)),
            (.integer(1000), .integer(0)), (.integer(1), .integer(0)), (.text("a"), .integer(0)),
            (.integer(-25), .integer(0)), (.integer(3), .integer(0)),
        ])
        #expect(
            map.encoded == [
                0xA8,
                0x01, 0x00, 0x03, 0x00, 0x19, 0x03, 0xE8, 0x00,  // 1, 3, 1000
                0x20, 0x00, 0x38, 0x18, 0x00,  // -1, -25
                0x61, 0x61, 0x00, 0x61, 0x62, 0x00, 0x62, 0x61, 0x61, 0x00,  // "a", "b", "aa"
            ])
        // Text after integers even when the integer's head is longer (RFC 8949 length-first would differ).
        #expect(
            CBORItem.map([(.text("a"), .integer(0)), (.integer(1000), .integer(0))]).encoded
                == [0xA2, 0x19, 0x03, 0xE8, 0x00, 0x61, 0x61, 0x00])
    }

    @Test("CBOR the SDK writes decodes with the server's decoder to the same values")
    func agreesWithServerDecoder() throws {
        let item = CBORItem.map([
            (.integer(-3), .bytes(Array(0..<32))), (.integer(1), .integer(2)), (.text("sig"), .bytes([1, 2])),
            (.text("attStmt"), .map([])),
        ])
        let decoded = try CBORDecoder().decode(item.encoded)
        #expect(decoded[-3]?.bytes == Array(0..<32))
        #expect(decoded[1]?.integerValue == 2)
        #expect(decoded["attStmt"]?.mapEntries?.isEmpty == true)
    }

    @Test(
        "base64url matches RFC 4648 test vectors",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ])
    func base64URLVectors(plain: String, encoded: String) {
        #expect(SesameClient.Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(SesameClient.Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("base64url agrees with the server's codec on every length and byte")
    func base64URLAgreement() throws {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
            let encoded = SesameClient.Base64URL.encode(bytes)
            #expect(encoded == WebAuthn.Base64URL.encode(bytes))
            #expect(SesameClient.Base64URL.decode(encoded) == bytes)
        }
    }

    @Test(
        "base64url decoding ignores correct padding and rejects everything else",
        arguments: [
            ("Zg==", [0x66] as [UInt8]?), ("Zm8=", [0x66, 0x6F]), ("-_8", [0xFB, 0xFF]), ("Zg=", nil), ("Z", nil),
            ("Zg=a", nil), ("Zm9v+", nil), ("+/8", nil), ("Zm 9v", nil), ("Zg===", nil),
        ])
    func base64URLDecoding(input: String, expected: [UInt8]?) {
        #expect(SesameClient.Base64URL.decode(input) == expected)
    }

    @Test("client data escapes only quote, backslash and control characters, as CCDToString does")
    func clientDataEscaping() {
        let bytes = ClientDataEncoding.serialize(
            type: "webauthn.get", challenge: "abc", origin: "https://a\"b\\c\u{01}\u{1F}é", crossOrigin: true,
            topOrigin: "https://top.example")
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"type":"webauthn.get","challenge":"abc","origin":"https://a\"b\\c\u0001\u001fé","crossOrigin":true,"topOrigin":"https://top.example"}"#
        )
    }

    @Test(
        "the default RP ID is the origin's host, lowercased, without port or path",
        arguments: [
            ("https://example.org", "example.org"), ("https://Login.Example.ORG:8443", "login.example.org"),
            ("http://localhost:8080/path?q#f", "localhost"),
        ])
    func defaultRPID(origin: String, expected: String) throws {
        #expect(try SoftwareAuthenticator.rpID(nil, origin: origin) == expected)
        #expect(try SoftwareAuthenticator.rpID("given.example", origin: origin) == "given.example")
    }

    @Test(
        "origins without a usable host need an explicit RP ID",
        arguments: [
            "android:apk-key-hash:abc", "https://", "https://user@example.org", "https://[::1]:8443",
        ])
    func originWithoutHost(origin: String) {
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try SoftwareAuthenticator.rpID(nil, origin: origin)
        }
    }
}
