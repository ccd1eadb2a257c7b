import Foundation

/// Encodes and decodes the JSON text columns (string arrays, string-to-bool objects) with stable key order.
enum JSONColumn {
    static func encode<Value: Encodable>(_ value: Value) throws(StoreError) -> SQLValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            throw StoreError(.invalidData, "value cannot be encoded as JSON")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from row: SQLRow, _ column: String) throws(StoreError) -> Value {
        let text = try row.text(column)
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError(.invalidData, "column \(column) is not the expected JSON")
        }
    }

    /// A nullable JSON string-array column read as an empty array when null.
    static func decodeStrings(from row: SQLRow, _ column: String) throws(StoreError) -> [String] {
        guard try row.optionalText(column) != nil else { return [] }
        return try decode([String].self, from: row, column)
    }
}
