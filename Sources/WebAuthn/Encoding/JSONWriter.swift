import Foundation

/// Compact JSON written by hand, for the wire types a ceremony answers with (WebAuthn's options, a face's models), so
/// the hot path needs no Foundation coder. Members come out in the order they are written; strings are escaped as
/// RFC 8259 requires (`"`, `\`, and control characters), and nothing else (`/` stays as it is).
public struct JSONWriter {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next member or element is the first of its object or array.
    private var first = true

    /// An empty writer.
    public init() {
        bytes.reserveCapacity(512)
    }

    /// Writes an object whose members `body` writes.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        container(UInt8(ascii: "{"), UInt8(ascii: "}"), body)
    }

    /// Writes an array whose elements `body` writes.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        container(UInt8(ascii: "["), UInt8(ascii: "]"), body)
    }

    /// Writes a member name; its value follows.
    public mutating func key(_ name: String) {
        separate()
        quoted(name)
        bytes.append(UInt8(ascii: ":"))
        first = true  // the value needs no comma of its own
    }

    /// Writes a string value (or array element).
    public mutating func string(_ value: String) {
        separate()
        quoted(value)
    }

    private mutating func quoted(_ value: String) {
        Self.appendQuoted(value, to: &bytes)
    }

    /// Appends `string` as a JSON string to `out`: `"`, `\` and control characters escaped, everything else as UTF-8.
    /// The one string escaper of the project (token claims use it too).
    public static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Nearly every string needs no escape: copied as it is.
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                out.append(contentsOf: utf8)
                return
            }
            appendEscaped(utf8, to: &out)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The bytes of a string with JSON's escapes.
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
    }

    /// Writes an integer value.
    public mutating func integer(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes one JSON value given as its text, which the caller has checked is one (a stored canonical object, say):
    /// copied as it is.
    public mutating func json(_ text: some Collection<UInt8>) {
        separate()
        bytes.append(contentsOf: text)
    }

    /// Writes a value that writes itself (one JSON value).
    public mutating func value(_ value: some JSONWritable) {
        value.write(to: &self)
    }

    /// Member shorthands.
    public mutating func member(_ name: String, _ value: String) { key(name); string(value) }
    public mutating func member(_ name: String, _ value: Int) { key(name); integer(value) }
    public mutating func member(_ name: String, _ value: Bool) { key(name); bool(value) }
    public mutating func member(_ name: String, _ value: some JSONWritable) { key(name); self.value(value) }
    public mutating func member(_ name: String, json text: some Collection<UInt8>) { key(name); json(text) }
    public mutating func member(_ name: String, strings: [String]) {
        key(name)
        array { writer in strings.forEach { writer.string($0) } }
    }
    public mutating func member(_ name: String, _ values: [some JSONWritable]) {
        key(name)
        array { writer in values.forEach { writer.value($0) } }
    }

    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    private mutating func container(_ open: UInt8, _ close: UInt8, _ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(open)
        first = true
        body(&self)
        bytes.append(close)
        first = false
    }
}

/// A value that writes itself as JSON through ``JSONWriter``.
public protocol JSONWritable {
    /// Writes the value (one JSON value) to `writer`.
    func write(to writer: inout JSONWriter)
}

extension JSONWritable {
    /// The value as compact JSON.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }
}

extension JSONWriter {
    /// `value` as compact JSON, written as `JSONSerialization` would with `.sortedKeys` and `.withoutEscapingSlashes`
    /// but without its cost: strings, `Bool`, integers, `Double`, `NSNumber`, `NSNull`, arrays, `[String: Any]`
    /// (members in name order) and ``JSONWritable`` values (written as they write themselves).
    /// - Returns: `nil` when a value is of none of these types or a number is not finite.
    public static func encode(any value: Any) -> [UInt8]? {
        var writer = JSONWriter()
        return writer.any(value) ? writer.bytes : nil
    }

    private mutating func any(_ value: Any) -> Bool {
        // The common types first, by their exact type (a comparison), since a cast that fails costs far more.
        let type = Swift.type(of: value)
        if type == String.self, let string = value as? String {
            self.string(string)
        } else if type == [String: Any].self, let object = value as? [String: Any] {
            return self.object(object)
        } else if type == Bool.self, let bool = value as? Bool {
            self.bool(bool)
        } else if type == Int.self, let integer = value as? Int {
            self.integer(integer)
        } else if type == [String].self, let strings = value as? [String] {
            array { writer in strings.forEach { writer.string($0) } }
        } else if type is NSNumber.Type, let number = value as? NSNumber {
            // A parsed JSON number or Boolean (Foundation's Boolean reports the type code "c"); checked before the
            // casts below, through which an NSNumber would bridge to a Swift number.
            let kind = String(cString: number.objCType)
            if kind == "c" {
                self.bool(number.boolValue)
            } else if kind == "d" || kind == "f" {
                return double(number.doubleValue)
            } else {
                separate()
                bytes += Array(number.stringValue.utf8)
            }
        } else if type == Double.self, let number = value as? Double {
            return double(number)
        } else if type is NSNull.Type {
            // By the metatype: `value is NSNull` would bridge a Swift dictionary or array to Foundation to find out.
            null()
        } else if let writable = value as? any JSONWritable {
            self.value(writable)
        } else if let object = value as? [String: Any] {
            return self.object(object)
        } else if let array = value as? [Any] {
            var written = true
            self.array { writer in
                for element in array where written { written = writer.any(element) }
            }
            return written
        } else if let string = value as? String {
            self.string(string)
        } else if let integer = value as? any BinaryInteger {
            separate()
            bytes += Array(String(integer).utf8)
        } else {
            return false
        }
        return true
    }

    /// An object's members in name order.
    private mutating func object(_ object: [String: Any]) -> Bool {
        var written = true
        self.object { writer in
            for (name, member) in object.sorted(by: { $0.key < $1.key }) where written {
                writer.key(name)
                written = writer.any(member)
            }
        }
        return written
    }

    /// A finite number; whole numbers within 2^53 without a fraction, as `JSONSerialization` writes them.
    private mutating func double(_ number: Double) -> Bool {
        guard number.isFinite else { return false }
        separate()
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 {
            bytes += Array(String(Int64(number)).utf8)  // trap-safe: whole and below 2^53
        } else {
            bytes += Array(String(number).utf8)
        }
        return true
    }
}
