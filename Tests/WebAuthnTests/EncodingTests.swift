import Foundation
import Testing
@testable import WebAuthn

/// Base64url as browsers and platform SDKs send it.
@Suite struct Base64URLTests {
    @Test("round-trips every length and encodes without padding")
    func roundTrip() throws {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(try Base64URL.decode(encoded) == bytes)
            // The same characters as Foundation's base64, in the URL alphabet and unpadded.
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            // A collection without contiguous storage, and a slice, encode the same.
            #expect(Base64URL.encode(bytes.lazy.map { $0 }) == encoded)
            #expect(Base64URL.encode(([0x00] + bytes)[1...]) == encoded)
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test("accepts padded, unpadded, and standard base64 (as iOS sends)")
    func accepts() throws {
        #expect(try Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(try Base64URL.decode("-_8=") == [0xFB, 0xFF])
        #expect(try Base64URL.decode("+/8=") == [0xFB, 0xFF])
        #expect(try Base64URL.decode("+/8") == [0xFB, 0xFF])
        #expect(try Base64URL.decode("YQ==") == [0x61])
        #expect(try Base64URL.decode("") == [])
    }

    @Test("rejects mixed alphabets, whitespace, bad padding, impossible lengths and non-zero trailing bits")
    func rejects() {
        for bad in ["-/8", "+_8", "YQ= ", " YQ", "Y Q", "YQ=", "YQ===", "Y=Q=", "=", "A", "AAAAA", "YR", "YQ*", "é"] {
            let error = #expect(throws: WebAuthnError.self) { try Base64URL.decode(bad) }
            #expect(error?.code == .invalidBase64URL, "\(bad)")
        }
    }

    @Test("every ASCII character but the two alphabets' is refused")
    func alphabet() {
        let accepted = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/".utf8)
        for byte in UInt8(0)..<128 {
            // The character, then "A" (zero bits), so that a character of either alphabet decodes to one byte.
            let decoded = try? Base64URL.decode(String(Unicode.Scalar(byte)) + "A")
            #expect((decoded != nil) == accepted.contains(byte), "\(byte)")
        }
    }
}

/// `AttestedCredentialData.aaguidString` and authenticator data flags.
@Suite struct AuthenticatorDataTests {
    @Test("formats the AAGUID as a lowercase UUID")
    func aaguid() {
        let data = AttestedCredentialData(aaguid: [0xAD, 0xCE, 0x00, 0x02, 0x35, 0xBC, 0xC6, 0x0A, 0x64, 0x8B, 0x0B, 0x25, 0xF1, 0xF0, 0x55, 0x03],
                                          credentialID: [], credentialPublicKey: [])
        #expect(data.aaguidString == "adce0002-35bc-c60a-648b-0b25f1f05503")
    }

    @Test("reads flags and the big-endian counter, and rejects ED without extensions or non-map extensions")
    func flagsAndExtensions() throws {
        let prefix = Array(repeating: UInt8(0), count: 32)
        let data = try AuthenticatorData(bytes: prefix + [0x1D, 0x01, 0x02, 0x03, 0x04])
        #expect(data.isUserPresent && data.isUserVerified && data.isBackupEligible && data.isBackedUp)
        #expect(data.signCount == 0x0102_0304)
        let withExtensions = try AuthenticatorData(bytes: prefix + [0x81, 0, 0, 0, 0, 0xA1, 0x61, 0x78, 0xF5])
        #expect(withExtensions.extensions?["x"] == .boolean(true))
        for bad: [UInt8] in [[0x81, 0, 0, 0, 0], [0x81, 0, 0, 0, 0, 0x01], [0x81, 0, 0, 0, 0, 0xA1, 0x61]] {
            #expect(throws: WebAuthnError.self) { try AuthenticatorData(bytes: prefix + bad) }
        }
    }
}

/// The strict reader of a JSON object's top-level members (credential JSON, ceremony request bodies).
@Suite struct JSONObjectMembersTests {
    static func read(_ text: String) -> JSONObjectMembers? { JSONObjectMembers(Array(text.utf8)) }

    @Test("strings, booleans, null, string arrays and objects (as their own text) by name")
    func members() throws {
        let members = try #require(Self.read(#" {"a":"x\u00e9\ud83d\ude00","b":true,"c":null,"d":["p","q"],"e":{"f":[1,{"g":2}]},"n":-1.5e3} "#))
        #expect(members.string("a") == "xé😀")
        #expect(members.bool("b") == true && members.string("b") == nil)
        #expect(members.isAbsentOrNull("c") && members.contains("c") && members.isAbsentOrNull("missing") && !members.contains("missing"))
        #expect(members.strings("d") == ["p", "q"])
        #expect(members.object("e").map { String(decoding: $0, as: UTF8.self) } == #"{"f":[1,{"g":2}]}"#)
        #expect(members.object("a") == nil && members.strings("e") == nil && members.contains("n") && !members.isAbsentOrNull("n"))
        #expect(Self.read(#"{"d":["p",1]}"#)?.strings("d") == nil, "an array with a non-string is no string array")
        // A nested object with escapes and non-ASCII text is kept as sent, and reads as an object of its own.
        let nested = #"{"h\u00e9":["\ud83d\ude00",{"k":"\n"}],"é":"x"}"#
        let outer = try #require(Self.read(#"{"o":"# + nested + "}"))
        let inner = try #require(outer.object("o").flatMap(JSONObjectMembers.init))
        #expect(outer.object("o").map { String(decoding: $0, as: UTF8.self) } == nested)
        #expect(inner.string("é") == "x" && inner.contains("hé"))
    }

    @Test("refuses what is not one JSON object", arguments: [
        "", "[]", "\"s\"", "{", #"{"a":1,"a":2}"#, #"{"a":1}x"#, #"{"a":01}"#, #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, "{\"a\":\"\u{1}\"}",
        #"{'a':1}"#, #"{"a":[1,]}"#, #"{"a":tru}"#, String(repeating: "[", count: 20) + String(repeating: "]", count: 20),
        "{\"a\":" + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "}",
        // Nested objects are checked as strictly, though their members are only read when asked for.
        #"{"o":{"a":"\x"}}"#, #"{"o":{"a\x":1}}"#, #"{"o":{"a":["\ud800"]}}"#, "{\"o\":{\"a\":\"\u{1}\"}}", #"{"o":{"a":[1,]}}"#,
        #"{"o":{"a":01}}"#, #"{"o":{"a":tru}}"#, #"{"o":{"a" 1}}"#,
    ])
    func refuses(text: String) {
        #expect(Self.read(text) == nil, "\(text)")
    }

    @Test("refuses invalid UTF-8 in a string, in a nested object too")
    func invalidUTF8() {
        #expect(JSONObjectMembers([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]) == nil)
        // {"o":{"a":"<C3 28>"}} and {"o":{"<C3 28>":1}}
        #expect(JSONObjectMembers(Array(#"{"o":{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8)) == nil)
        #expect(JSONObjectMembers(Array(#"{"o":{""#.utf8) + [0xC3, 0x28] + Array(#"":1}}"#.utf8)) == nil)
        #expect(JSONObjectMembers(Array(#"{"o":{"a":""#.utf8) + [0xC3, 0xA9] + Array(#""}}"#.utf8)) != nil)
    }
}

/// The hand-written JSON of the hot path's wire types.
@Suite struct JSONWriterTests {
    struct Pair: JSONWritable {
        let name: String
        func write(to writer: inout JSONWriter) {
            writer.object { $0.member("name", name) }
        }
    }

    @Test("objects and arrays nest with commas only between members and elements")
    func nesting() {
        var writer = JSONWriter()
        writer.object { object in
            object.member("a", 1)
            object.member("b", [Pair(name: "x"), Pair(name: "y")])
            object.member("c", strings: [])
            object.key("d")
            object.array { array in
                array.integer(-5)
                array.bool(false)
                array.object { _ in }
            }
            object.member("e", true)
        }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":1,"b":[{"name":"x"},{"name":"y"}],"c":[],"d":[-5,false,{}],"e":true}"#)
    }

    @Test("strings escape quotes, backslashes and control characters, and read back as written")
    func escaping() throws {
        let text = "q\"b\\s/n\nr\rt\tnul\u{0}bell\u{7}é😀"
        var writer = JSONWriter()
        writer.object { $0.member("text", text) }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"text":"q\"b\\s/n\nr\rt\tnul\u0000bell\u0007é😀"}"#)
        #expect(JSONObjectMembers(writer.bytes)?.string("text") == text)
    }

    @Test("a dictionary of Swift values, parsed JSON and writable values comes out as JSONSerialization writes it")
    func dynamicValues() throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(#"{"t":true,"f":false,"one":1,"zero":0,"big":12345678901,"half":-0.5,"n":null,"s":"a/b"}"#.utf8))
        let value: [String: Any] = [
            "parsed": parsed, "bool": true, "int": -3, "int64": Int64(1) << 40, "double": 2.5, "whole": 3.0, "tiny": 1e-7,
            "text": "q\"é\n", "list": [1, "two", false, NSNull()] as [Any], "strings": ["x", "y"], "empty": [String: Any](),
            "b": 1, "B": 2, "a": 0, "map": ["k": "v"] as [String: String], "maps": [["k": ["n": 1]]] as [[String: [String: Int]]],
        ]
        let written = try #require(JSONWriter.encode(any: value))
        let expected = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        // The same JSON value (Booleans stay Booleans, numbers keep their value) with members in name order.
        #expect(try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary == JSONSerialization.jsonObject(with: expected) as? NSDictionary)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.hasPrefix(#"{"B":2,"a":0,"b":1,"bool":true,"double":2.5,"empty":{},"int":-3,"int64":1099511627776,"list":[1,"two",false,null],"#))
        #expect(text.contains(#""parsed":{"big":12345678901,"f":false,"half":-0.5,"n":null,"one":1,"s":"a/b","t":true,"zero":0}"#))
        #expect(text.contains(#""whole":3"#) && text.contains(#""tiny":1e-07"#))
        #expect(text.contains(#""map":{"k":"v"},"maps":[{"k":{"n":1}}]"#))
        // A writable value is written as it writes itself.
        #expect(JSONWriter.encode(any: ["pair": Pair(name: "x")]).map { String(decoding: $0, as: UTF8.self) } == #"{"pair":{"name":"x"}}"#)
    }

    @Test("a value of another type, or a number JSON cannot express, writes nothing")
    func dynamicRefusals() {
        #expect(JSONWriter.encode(any: ["date": Date()]) == nil)
        #expect(JSONWriter.encode(any: ["nested": ["x": Double.nan]]) == nil)
        #expect(JSONWriter.encode(any: [Double.infinity]) == nil)
        #expect(JSONWriter.encode(any: ["ok": 1]) != nil)
    }
}
