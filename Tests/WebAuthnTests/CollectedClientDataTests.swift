import Testing
@testable import WebAuthn

/// `clientDataJSON` parsing: strict JSON, the members WebAuthn defines, unknown members ignored.
@Suite struct CollectedClientDataTests {
    func parse(_ text: String) throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(jsonBytes: Array(text.utf8))
    }

    @Test("reads the members, resolves escapes, and ignores unknown members of any JSON type")
    func parses() throws {
        let data = try parse("""
             { "type" : "webauthn.get", "challenge":"YWJj", "origin":"https:\\/\\/ex\\u0061mple.org\\ud83d\\ude00",
              "crossOrigin":true, "topOrigin":"https://top.example", "other_keys_can_be_added_here":"do not compare",
              "tokenBinding":{"status":"present","id":[1,2.5e-3,-0,{"x":null}]}, "n":-12.75E+2, "f":false, "e":"\\"\\\\\\b\\f\\n\\r\\t" }
            """)
        #expect(data.type == "webauthn.get")
        #expect(data.challenge == "YWJj")
        #expect(data.origin == "https://example.org😀")
        #expect(data.crossOrigin == true)
        #expect(data.topOrigin == "https://top.example")
        #expect(try parse(#"{"type":"t","challenge":"c","origin":"o"}"#).crossOrigin == nil)
    }

    @Test("rejects input that is not exactly one valid JSON object", arguments: [
        "", "[]", "\"s\"", "{", "{}x", "{} {}", #"{"type":"t",}"#, #"{"type" "t"}"#, #"{'type':'t'}"#,
        #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":tru}"#, #"{"a":[1,]}"#, #"{"a":[1 2]}"#,
        "{\"a\":\"\u{01}\"}", #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#,
        String(repeating: "[", count: 20) + String(repeating: "]", count: 20),
    ])
    func rejectsMalformed(text: String) {
        let wrapped = text.hasPrefix("[[[") ? #"{"type":"t","challenge":"c","origin":"o","x":"# + text + "}" : text
        #expect(throws: WebAuthnError.code(.malformedClientData)) { try parse(wrapped) }
    }

    @Test("rejects invalid UTF-8, duplicate members, missing or mistyped members")
    func rejectsInvalid() {
        let cases: [[UInt8]] = [
            Array(#"{"type":"t","challenge":"c","origin":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8),
            Array(#"{"type":"t","challenge":"c","challenge":"d","origin":"o"}"#.utf8),
            Array(#"{"type":"t","origin":"o"}"#.utf8),
            Array(#"{"type":1,"challenge":"c","origin":"o"}"#.utf8),
            Array(#"{"type":"t","challenge":"c","origin":"o","crossOrigin":"true"}"#.utf8),
            Array(#"{"type":"t","challenge":"c","origin":"o","topOrigin":null}"#.utf8),
        ]
        for bytes in cases {
            #expect(throws: WebAuthnError.code(.malformedClientData)) { try CollectedClientData(jsonBytes: bytes) }
        }
    }

    @Test("the parser keeps top-level numbers as their text and arrays of strings, for the SafetyNet JWS")
    func numbersAndStringArrays() throws {
        let members = try #require(JSONObjectMembers(Array(#"{"n":1630703240057,"f":-1.5e3,"x5c":["a","b"],"e":[],"m":["a",1],"o":{"k":[1]}}"#.utf8)))
        #expect(members.number("n") == "1630703240057")
        #expect(members.number("f") == "-1.5e3")
        #expect(members.strings("x5c") == ["a", "b"])
        #expect(members.strings("e") == [])
        #expect(members.strings("m") == nil && members.number("m") == nil)
        #expect(members.strings("o") == nil && members.number("o") == nil && members.object("o") != nil)
        #expect(throws: JSONObjectParser.Failure.self) { try JSONObjectParser.parse(Array(#"{"n":01}"#.utf8)) }
        #expect(throws: JSONObjectParser.Failure.self) { try JSONObjectParser.parse(Array(#"{"a":["x",]}"#.utf8)) }
        // clientDataJSON still refuses a number or an array where it wants a string or a boolean.
        #expect(throws: WebAuthnError.code(.malformedClientData)) {
            try CollectedClientData(jsonBytes: Array(#"{"type":"t","challenge":["c"],"origin":"o"}"#.utf8))
        }
        #expect(throws: WebAuthnError.code(.malformedClientData)) {
            try CollectedClientData(jsonBytes: Array(#"{"type":"t","challenge":"c","origin":"o","crossOrigin":1}"#.utf8))
        }
    }
}
