/// A strict RFC 8259 parser for the small JSON objects WebAuthn clients produce (`clientDataJSON`).
///
/// Only top-level string, boolean and number members and arrays of strings are kept; other values are validated
/// and skipped, as the spec requires unknown members to be ignored. Duplicate top-level member names are rejected, so no two parsers
/// can disagree about which `challenge` or `origin` counts. Nesting is bounded.
struct JSONObjectParser {
    /// A kept top-level member value.
    enum Value: Equatable {
        case string(String)
        case bool(Bool)
        /// A number, as its literal text (the caller converts it, checked).
        case number(String)
        /// An array whose items are all strings (the empty array included).
        case strings([String])
        /// Null, an object or another array: valid, but not kept.
        case other
    }

    struct Failure: Error {}

    private let bytes: [UInt8]
    private var index = 0
    private static let maximumDepth = 16

    /// Parses `bytes` as one JSON object and returns its top-level members.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> [String: Value] {
        var parser = JSONObjectParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else { throw Failure() }
        var members: [String: Value] = [:]
        try parser.object(depth: 0) { (name: String, value: Value) throws(Failure) in
            guard members.updateValue(value, forKey: name) == nil else { throw Failure() }
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Failure() }
        return members
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func next() throws(Failure) -> UInt8 {
        guard index < bytes.count else { throw Failure() }
        defer { index += 1 }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard try next() == byte else { throw Failure() }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// Parses an object, handing each member to `member` (values of nested objects are not reported).
    private mutating func object(depth: Int, _ member: (String, Value) throws(Failure) -> Void) throws(Failure) {
        guard depth < Self.maximumDepth else { throw Failure() }
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            let name = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            try member(name, try value(depth: depth))
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw Failure()
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> Value {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "{"):
            try object(depth: depth + 1) { (_: String, _: Value) throws(Failure) in }
        case UInt8(ascii: "["):
            guard depth + 1 < Self.maximumDepth else { throw Failure() }
            index += 1
            skipWhitespace()
            var strings: [String]? = []
            if peek() == UInt8(ascii: "]") {
                index += 1
            } else {
                repeat {
                    if case .string(let item) = try value(depth: depth + 1) { strings?.append(item) } else { strings = nil }
                    skipWhitespace()
                } while try next() == UInt8(ascii: ",")
                guard bytes[index - 1] == UInt8(ascii: "]") else { throw Failure() }
            }
            if let strings { return .strings(strings) }
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null")
        default:
            let start = index
            try number()
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }
        return .other
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        for byte in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) { try expect(byte) }
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    private mutating func number() throws(Failure) {
        func digits(_ parser: inout JSONObjectParser) throws(Failure) {
            let start = parser.index
            while let byte = parser.peek(), byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") { parser.index += 1 }
            guard parser.index > start else { throw Failure() }
        }
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") { index += 1 } else { try digits(&self) }
        if peek() == UInt8(ascii: ".") {
            index += 1
            try digits(&self)
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            try digits(&self)
        }
    }

    /// A string with its escapes resolved; the input must be valid UTF-8 and control characters escaped.
    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // Fast path: no escapes.
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw Failure() }
            index += 1
        }
        var utf8 = Array(bytes[start..<index])
        while true {
            switch try next() {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw Failure() }
                return text
            case UInt8(ascii: "\\"):
                let escape = try next()
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8 += try unicodeEscape()
                default: throw Failure()
                }
            case let byte:
                guard byte >= 0x20 else { throw Failure() }
                utf8.append(byte)
            }
        }
    }

    /// `\uXXXX`, with surrogate pairs joined; a lone surrogate is an error.
    private mutating func unicodeEscape() throws(Failure) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            try expect(UInt8(ascii: "\\"))
            try expect(UInt8(ascii: "u"))
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw Failure() }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw Failure() }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = try next()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Failure()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
