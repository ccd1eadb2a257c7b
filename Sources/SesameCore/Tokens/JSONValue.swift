import Foundation
import WebAuthn

/// A JSON value, as token claims and headers carry it.
///
/// Integers and other numbers are kept apart so `iat`/`exp` stay whole numbers on the wire. ``init(jsonEncoded:)`` is a
/// strict RFC 8259 parser that rejects duplicate member names (RFC 7515 §5.2 step 4), lone surrogates and numbers
/// that do not fit a `Double`; ``jsonEncoded()`` writes compact JSON with object members sorted by name, so the same
/// value always gives the same bytes.
///
/// - SeeAlso: [RFC 8259](https://www.rfc-editor.org/rfc/rfc8259)
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits an `Int`.
    case integer(Int)
    /// Any other finite number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member order carries no meaning.
    case object([String: JSONValue])

    /// The deepest nesting ``init(jsonEncoded:)`` accepts.
    public static let maximumDepth = 32

    /// Parses one JSON text.
    /// - Parameter bytes: UTF-8 JSON; surrounding whitespace is allowed, anything else after the value is not.
    /// - Throws: `invalid_argument` for malformed JSON, duplicate member names, nesting deeper than
    ///   ``maximumDepth``, or a number outside the `Double` range.
    public init(jsonEncoded bytes: some Collection<UInt8>) throws(SesameError) {
        var parser = Parser(bytes: Array(bytes))
        do throws(Parser.Failure) {
            parser.skipWhitespace()
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == parser.bytes.count else { throw Parser.Failure(reason: "trailing bytes") }
            self = value
        } catch {
            throw SesameError(.invalidArgument, "malformed JSON at byte \(parser.index): \(error.reason)")
        }
    }

    /// The value as compact JSON, object members sorted by name (UTF-8 byte order).
    /// - Throws: `invalid_argument` when a ``number(_:)`` is not finite (JSON cannot express it).
    public func jsonEncoded() throws(SesameError) -> [UInt8] {
        var out: [UInt8] = []
        try write(into: &out)
        return out
    }

    /// The string, when this is ``string(_:)``.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this is ``integer(_:)``.
    public var integerValue: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, when this is ``integer(_:)`` or ``number(_:)``.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// The Boolean, when this is ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The members, when this is ``object(_:)``.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    // MARK: Writing

    private func write(into out: inout [UInt8]) throws(SesameError) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .integer(let value): out += Array(String(value).utf8)
        case .number(let value):
            guard value.isFinite else { throw SesameError(.invalidArgument, "JSON cannot express \(value)") }
            // Swift's shortest round-trip form ("1.5", "1e+21", "-0.0") is always valid JSON.
            out += Array(value.description.utf8)
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (offset, value) in values.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                try value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (offset, member) in sorted.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                try member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a JSON string: `"` and `\` and control characters escaped, everything else as UTF-8.
    static func writeString(_ string: String, into out: inout [UInt8]) {
        JSONWriter.appendQuoted(string, to: &out)
    }

    // MARK: Parsing

    /// A strict recursive-descent parser over UTF-8 bytes.
    private struct Parser {
        struct Failure: Error {
            let reason: String
        }

        let bytes: [UInt8]
        var index = 0

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func next() throws(Failure) -> UInt8 {
            guard index < bytes.count else { throw Failure(reason: "unexpected end") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func expect(_ literal: String) throws(Failure) {
            for byte in literal.utf8 {
                guard try next() == byte else { throw Failure(reason: "expected \(literal)") }
            }
        }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard let byte = peek() else { throw Failure(reason: "unexpected end") }
            switch byte {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try expect("true"); return .bool(true)
            case UInt8(ascii: "f"): try expect("false"); return .bool(false)
            case UInt8(ascii: "n"): try expect("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw Failure(reason: "unexpected character")
            }
        }

        mutating func object(depth: Int) throws(Failure) -> JSONValue {
            guard depth <= JSONValue.maximumDepth else { throw Failure(reason: "nested too deeply") }
            try expect("{")
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw Failure(reason: "expected a member name") }
                let name = try string()
                skipWhitespace()
                try expect(":")
                skipWhitespace()
                let value = try value(depth: depth)
                guard members.updateValue(value, forKey: name) == nil else { throw Failure(reason: "duplicate member name") }
                skipWhitespace()
                switch try next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "}"): return .object(members)
                default: throw Failure(reason: "expected , or }")
                }
            }
        }

        mutating func array(depth: Int) throws(Failure) -> JSONValue {
            guard depth <= JSONValue.maximumDepth else { throw Failure(reason: "nested too deeply") }
            try expect("[")
            var values: [JSONValue] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            }
            while true {
                skipWhitespace()
                values.append(try value(depth: depth))
                skipWhitespace()
                switch try next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): return .array(values)
                default: throw Failure(reason: "expected , or ]")
                }
            }
        }

        mutating func string() throws(Failure) -> String {
            try expect("\"")
            var out: [UInt8] = []
            while true {
                let byte = try next()
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: out, as: UTF8.self) else { throw Failure(reason: "invalid UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    switch try next() {
                    case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                    case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                    case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = UInt32(try hex4())
                        if (0xD800..<0xDC00).contains(scalar) {
                            try expect("\\u")
                            let low = UInt32(try hex4())
                            guard (0xDC00..<0xE000).contains(low) else { throw Failure(reason: "lone surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw Failure(reason: "lone surrogate") }
                        out += Array(String(Character(unicode)).utf8)
                    default: throw Failure(reason: "bad escape")
                    }
                case 0x00..<0x20: throw Failure(reason: "control character in a string")
                default: out.append(byte)
                }
            }
        }

        mutating func hex4() throws(Failure) -> UInt16 {
            var value: UInt16 = 0
            for _ in 0..<4 {
                let byte = try next()
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Failure(reason: "bad \\u escape")
                }
                value = value << 4 | UInt16(digit)
            }
            return value
        }

        mutating func number() throws(Failure) -> JSONValue {
            let start = index
            var isInteger = true
            if peek() == UInt8(ascii: "-") { index += 1 }
            switch try next() {
            case UInt8(ascii: "0"): break
            case UInt8(ascii: "1")...UInt8(ascii: "9"): skipDigits()
            default: throw Failure(reason: "bad number")
            }
            if peek() == UInt8(ascii: ".") {
                index += 1
                isInteger = false
                guard skipDigits() > 0 else { throw Failure(reason: "bad fraction") }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                index += 1
                isInteger = false
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
                guard skipDigits() > 0 else { throw Failure(reason: "bad exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int(text) { return .integer(integer) }
            guard let double = Double(text), double.isFinite else { throw Failure(reason: "number out of range") }
            return .number(double)
        }

        @discardableResult
        mutating func skipDigits() -> Int {
            let start = index
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - start
        }
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value through a `Decoder` (for embedding claims in `Codable` types).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value through an `Encoder`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated name keeps the last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
