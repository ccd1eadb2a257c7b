import Foundation

/// Encodes and decodes the JSON text columns (string arrays, string-to-bool objects) with stable key order.
enum JSONColumn {
    static func encode<Value: Encodable>(_ value: Value) throws(StoreError) -> SQLValue {
        try encodedByFoundation(value)
    }

    private static func encodedByFoundation<Value: Encodable>(_ value: Value) throws(StoreError) -> SQLValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            throw StoreError(.invalidData, "value cannot be encoded as JSON")
        }
    }

    /// A JSON string-array column. Strings without a quote, a backslash or a control character (all this store writes
    /// in practice: factors, transports, scopes, origins) are written directly, as `JSONEncoder` writes them; anything
    /// else goes to `JSONEncoder`.
    static func encode(_ strings: [String]) throws(StoreError) -> SQLValue {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (position, string) in strings.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            for byte in string.utf8 {
                guard byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return try encodedByFoundation(strings) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "]"))
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from row: SQLRow, _ column: String) throws(StoreError) -> Value {
        try decoded(type, try row.text(column), column)
    }

    private static func decoded<Value: Decodable>(_ type: Value.Type, _ text: String, _ column: String) throws(StoreError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError(.invalidData, "column \(column) is not the expected JSON")
        }
    }

    /// A JSON string-array column. The arrays this store writes (no escapes) are read directly; anything else goes to
    /// `JSONDecoder`, which decides.
    static func decode(_ type: [String].Type, from row: SQLRow, _ column: String) throws(StoreError) -> [String] {
        let text = try row.text(column)
        if let strings = plainStrings(text) { return strings }
        return try decoded(type, text, column)
    }

    /// The strings of a JSON array of strings without escapes or control characters (`["usb","nfc"]`, spaces allowed
    /// between tokens), or `nil` when `text` is anything else.
    static func plainStrings(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var index = 0
            func skipSpace() {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                    index += 1
                }
            }
            /// Skips JSON whitespace, then takes `byte` if it is next.
            func take(_ byte: UInt8) -> Bool {
                skipSpace()
                guard index < bytes.count, bytes[index] == byte else { return false }
                index += 1
                return true
            }
            guard take(UInt8(ascii: "[")) else { return nil }
            var strings: [String] = []
            if !take(UInt8(ascii: "]")) {
                repeat {
                    guard take(UInt8(ascii: "\"")) else { return nil }
                    let start = index
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                        guard bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\\") else { return nil }
                        index += 1
                    }
                    guard index < bytes.count else { return nil }
                    strings.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                    index += 1
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")) else { return nil }
            }
            skipSpace()
            return index == bytes.count ? strings : nil
        }
    }

    /// A nullable JSON string-array column read as an empty array when null.
    static func decodeStrings(from row: SQLRow, _ column: String) throws(StoreError) -> [String] {
        guard try row.optionalText(column) != nil else { return [] }
        return try decode([String].self, from: row, column)
    }
}
