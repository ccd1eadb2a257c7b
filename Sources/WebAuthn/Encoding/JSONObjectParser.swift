/// A strict RFC 8259 parser for the small JSON objects WebAuthn clients produce (`clientDataJSON`, the
/// `PublicKeyCredential` JSON forms, the request bodies that carry them).
///
/// Top-level strings, booleans, nulls, numbers (as their literal text) and arrays are kept, objects as the byte range
/// of their text (to be read again as an object of their own); unknown members are ignored, as the spec requires.
/// Duplicate top-level member names are rejected, so no two parsers can disagree about which `challenge` or `origin`
/// counts. Nesting is bounded.
struct JSONObjectParser {
    /// A kept member value.
    enum Value: Equatable {
        case string(String)
        case bool(Bool)
        case null
        /// An object: where its text is in the parsed bytes.
        case object(Range<Int>)
        case array([Value])
        /// A number, as its literal text (the caller converts it, checked).
        case number(String)
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
        // Room for the members a ceremony's bodies have (an assertion's response has six), so the table is built once.
        var members: [String: Value] = Dictionary(minimumCapacity: 8)
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

    /// Parses an object, handing each member to `member`. A nested object is checked as strictly but kept as its
    /// range only (`keeping` false below the top): nothing of it is built until it is read as an object of its own.
    private mutating func object(depth: Int, keeping: Bool = true, _ member: (String, Value) throws(Failure) -> Void) throws(Failure) {
        guard depth < Self.maximumDepth else { throw Failure() }
        try expect(UInt8(ascii: "{"))
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            var name = ""
            if keeping { name = try string() } else { try skipString() }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            try member(name, try value(depth: depth, keeping: keeping))
            skipWhitespace()
            switch try next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw Failure()
            }
        }
    }

    /// A value; when not `keeping`, it is checked the same way but `.null` stands for a string, array or number.
    private mutating func value(depth: Int, keeping: Bool = true) throws(Failure) -> Value {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\""):
            if keeping { return .string(try string()) }
            try skipString()
            return .null
        case UInt8(ascii: "{"):
            let start = index
            try object(depth: depth + 1, keeping: false) { (_: String, _: Value) throws(Failure) in }
            return .object(start..<index)
        case UInt8(ascii: "["):
            guard depth + 1 < Self.maximumDepth else { throw Failure() }
            index += 1
            skipWhitespace()
            var elements: [Value] = []
            if peek() == UInt8(ascii: "]") {
                index += 1
            } else {
                repeat {
                    let element = try value(depth: depth + 1, keeping: keeping)
                    if keeping { elements.append(element) }
                    skipWhitespace()
                } while try next() == UInt8(ascii: ",")
                guard bytes[index - 1] == UInt8(ascii: "]") else { throw Failure() }
            }
            return keeping ? .array(elements) : .null
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            let start = index
            try number()
            return keeping ? .number(String(decoding: bytes[start..<index], as: UTF8.self)) : .null
        }
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
        // Plain ASCII without escapes is valid UTF-8 as it stands.
        if try plainRun(), peek() == UInt8(ascii: "\"") {
            defer { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
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

    /// A string checked as ``string()`` checks it, without building it: plain ASCII is only scanned; a string with an
    /// escape or a byte over 0x7F is read by ``string()``.
    private mutating func skipString() throws(Failure) {
        let quote = index
        try expect(UInt8(ascii: "\""))
        guard try plainRun(), peek() == UInt8(ascii: "\"") else {
            index = quote
            _ = try string()
            return
        }
        index += 1
    }

    /// Moves past the characters of a string up to its first quote or backslash (a control character is an error);
    /// whether they were all ASCII.
    private mutating func plainRun() throws(Failure) -> Bool {
        var ascii = true
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw Failure() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return ascii
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

/// The top-level members of one JSON object, read strictly (RFC 8259; a member name given twice, invalid UTF-8 or
/// nesting deeper than 16 refuse the whole text): what a face reads a ceremony's request body with, and the WebAuthn
/// core the `PublicKeyCredential` JSON forms, without Foundation's coders.
public struct JSONObjectMembers: Sendable {
    private let bytes: [UInt8]
    private let members: [String: JSONObjectParser.Value]

    /// Reads `bytes` as one JSON object; `nil` when it is not one.
    public init?(_ bytes: [UInt8]) {
        guard let members = try? JSONObjectParser.parse(bytes) else { return nil }
        self.bytes = bytes
        self.members = members
    }

    /// Whether the object has a member `name` (of any type, `null` included).
    public func contains(_ name: String) -> Bool { members[name] != nil }

    /// Whether member `name` is absent or `null`.
    public func isAbsentOrNull(_ name: String) -> Bool {
        switch members[name] {
        case nil, .null?: true
        default: false
        }
    }

    /// Member `name` when it is a string.
    public func string(_ name: String) -> String? {
        if case .string(let value)? = members[name] { return value }
        return nil
    }

    /// Member `name` when it is a boolean.
    public func bool(_ name: String) -> Bool? {
        if case .bool(let value)? = members[name] { return value }
        return nil
    }

    /// Member `name` when it is an object: its JSON text, as sent.
    public func object(_ name: String) -> [UInt8]? {
        if case .object(let range)? = members[name] { return Array(bytes[range]) }
        return nil
    }

    /// Member `name` when it is a number: its literal text, for the caller to convert, checked.
    public func number(_ name: String) -> String? {
        if case .number(let value)? = members[name] { return value }
        return nil
    }

    /// Member `name` when it is an array of objects: each one's JSON text, as sent.
    public func objects(_ name: String) -> [[UInt8]]? {
        guard case .array(let elements)? = members[name] else { return nil }
        var objects: [[UInt8]] = []
        for element in elements {
            guard case .object(let range) = element else { return nil }
            objects.append(Array(bytes[range]))
        }
        return objects
    }

    /// The names of the object's top-level members, to refuse ones a strict reader does not know.
    public var names: Set<String> { Set(members.keys) }

    /// Member `name` when it is an array of arrays of objects: each object's JSON text, as sent, in place.
    public func objectArrays(_ name: String) -> [[[UInt8]]]? {
        guard case .array(let elements)? = members[name] else { return nil }
        var arrays: [[[UInt8]]] = []
        for element in elements {
            guard case .array(let inner) = element else { return nil }
            var objects: [[UInt8]] = []
            for value in inner {
                guard case .object(let range) = value else { return nil }
                objects.append(Array(bytes[range]))
            }
            arrays.append(objects)
        }
        return arrays
    }

    /// Member `name` when it is an array of strings.
    public func strings(_ name: String) -> [String]? {
        guard case .array(let elements)? = members[name] else { return nil }
        var strings: [String] = []
        for element in elements {
            guard case .string(let value) = element else { return nil }
            strings.append(value)
        }
        return strings
    }
}
