import Foundation
@testable import SesameStore
import Testing

/// The JSON string-array columns' direct reading agrees with `JSONDecoder` wherever it answers, and answers for what
/// the store writes.
@Suite("JSON string-array columns")
struct JSONColumnTests {
    @Test("what the store writes is read directly, and the same as JSONDecoder reads it")
    func writtenArraysReadDirectly() throws {
        for strings in [[], ["usb"], ["usb", "nfc", "hybrid", "internal"], ["passkey", "userVerification"], ["é 🔑", "a b"], [""]] {
            guard case .text(let text) = try JSONColumn.encode(strings) else { Issue.record("not text"); continue }
            #expect(JSONColumn.plainStrings(text) == strings, "\(text)")
        }
    }

    @Test("string arrays are written byte for byte as JSONEncoder writes them, escapes included")
    func writtenAsJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let arrays: [[String]] = [[], [""], ["passkey"], ["usb", "nfc", "hybrid"], ["é 🔑", "a/b", "a\u{7F}b"], ["a\"b"], ["a\\b", "c"],
                                  ["line\nbreak"], ["tab\t", "nul\u{0}"], ["plain", "\u{1F}"]]
        for strings in arrays {
            let expected = String(decoding: try encoder.encode(strings), as: UTF8.self)
            guard case .text(let text) = try JSONColumn.encode(strings) else { Issue.record("not text"); continue }
            #expect(text == expected)
            #expect(try JSONDecoder().decode([String].self, from: Data(text.utf8)) == strings)
        }
    }

    @Test("anything else is left to JSONDecoder; where it answers, JSONDecoder agrees")
    func otherTextDeferred() throws {
        let deferred = [#"["a\"b"]"#, #"["a\\b"]"#, #"["\u0041"]"#, "[\"a\u{01}\"]", #"["a",]"#, #"["a""b"]"#, #"["a"] x"#, "[1]",
                        #"{"a":1}"#, "", "[", #"["a"#, #"[,"a"]"#, "null"]
        for text in deferred { #expect(JSONColumn.plainStrings(text) == nil, "\(text)") }
        for text in [" [ ] ", "[]", "\t[ \"a\" ,\n\"b\" ]\r\n", #"["a/b"]"#] {
            let direct = try #require(JSONColumn.plainStrings(text), "\(text)")
            #expect(direct == (try JSONDecoder().decode([String].self, from: Data(text.utf8))), "\(text)")
        }
        // Through a row: an escaped array still reads, through JSONDecoder; a broken one is invalid data.
        let row = SQLRow(columns: ["t", "u"], values: [.text(#"["a\"b","c"]"#), .text(#"["a""#)])
        #expect(try JSONColumn.decode([String].self, from: row, "t") == ["a\"b", "c"])
        #expect(throws: StoreError.self) { try JSONColumn.decode([String].self, from: row, "u") }
    }
}
