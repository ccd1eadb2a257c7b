/// A strict reader of DER (X.690) elements over a byte slice, for the structures attestation certificates carry.
///
/// It reads one level at a time and never recurses, so nesting costs the caller one reader per level. It refuses
/// indefinite lengths, non-minimal lengths and tag numbers, lengths beyond the input, and tag numbers above 2^28.
struct DERReader {
    /// An element's identifier octets.
    struct Tag: Hashable, CustomStringConvertible {
        /// 0 universal, 1 application, 2 context-specific, 3 private.
        let tagClass: UInt8
        let isConstructed: Bool
        let number: UInt32

        static let boolean = Tag(tagClass: 0, isConstructed: false, number: 1)
        static let integer = Tag(tagClass: 0, isConstructed: false, number: 2)
        static let octetString = Tag(tagClass: 0, isConstructed: false, number: 4)
        static let null = Tag(tagClass: 0, isConstructed: false, number: 5)
        static let objectIdentifier = Tag(tagClass: 0, isConstructed: false, number: 6)
        static let enumerated = Tag(tagClass: 0, isConstructed: false, number: 10)
        static let utf8String = Tag(tagClass: 0, isConstructed: false, number: 12)
        static let printableString = Tag(tagClass: 0, isConstructed: false, number: 19)
        static let ia5String = Tag(tagClass: 0, isConstructed: false, number: 22)
        static let sequence = Tag(tagClass: 0, isConstructed: true, number: 16)
        static let set = Tag(tagClass: 0, isConstructed: true, number: 17)

        /// A context-specific tag `[number]`; explicit tags are constructed.
        static func context(_ number: UInt32, constructed: Bool = true) -> Tag {
            Tag(tagClass: 2, isConstructed: constructed, number: number)
        }

        var description: String { "[class \(tagClass)\(isConstructed ? " constructed" : "") \(number)]" }
    }

    /// One element: its tag and the content octets.
    struct Element {
        let tag: Tag
        let content: ArraySlice<UInt8>
    }

    /// The input is not the DER expected; the reason is for logs only.
    struct Failure: Error {
        let reason: String
    }

    private var rest: ArraySlice<UInt8>

    /// Reads the elements of `bytes` in order.
    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    /// Reads the elements of `bytes` in order.
    init(_ bytes: [UInt8]) { rest = bytes[...] }

    /// True when every element has been read.
    var isAtEnd: Bool { rest.isEmpty }

    /// The tag of the next element, without reading it; nil at the end or when the tag is malformed.
    var nextTag: Tag? {
        var copy = self
        return try? copy.readTag()
    }

    /// Reads the next element, whatever its tag.
    mutating func read() throws(Failure) -> Element {
        let tag = try readTag()
        let length = try readLength()
        guard length <= rest.count else { throw Failure(reason: "element of \(length) bytes overruns its input") }
        let content = rest.prefix(length)
        rest = rest.dropFirst(length)
        return Element(tag: tag, content: content)
    }

    /// Reads the next element and returns its content; it must have `tag`.
    mutating func read(_ tag: Tag) throws(Failure) -> ArraySlice<UInt8> {
        let element = try read()
        guard element.tag == tag else { throw Failure(reason: "expected \(tag), found \(element.tag)") }
        return element.content
    }

    /// Reads the next element when it has `tag`; otherwise reads nothing and returns nil.
    mutating func readIfPresent(_ tag: Tag) throws(Failure) -> ArraySlice<UInt8>? {
        guard nextTag == tag else { return nil }
        return try read(tag)
    }

    /// Fails unless every element has been read.
    func finish() throws(Failure) {
        guard rest.isEmpty else { throw Failure(reason: "\(rest.count) bytes after the last element") }
    }

    /// The content of the single element with `tag` that fills `bytes`.
    static func single(_ tag: Tag, in bytes: ArraySlice<UInt8>) throws(Failure) -> ArraySlice<UInt8> {
        var reader = DERReader(bytes)
        let content = try reader.read(tag)
        try reader.finish()
        return content
    }

    private mutating func readTag() throws(Failure) -> Tag {
        guard let first = rest.first else { throw Failure(reason: "truncated: no tag") }
        rest = rest.dropFirst()
        let tagClass = first >> 6
        let constructed = first & 0x20 != 0
        guard first & 0x1F == 0x1F else {
            return Tag(tagClass: tagClass, isConstructed: constructed, number: UInt32(first & 0x1F))
        }
        // High tag number form: base-128 digits, most significant first, no leading zero digit, at least 31.
        var number: UInt32 = 0
        for index in 0..<4 {
            guard let byte = rest.first else { throw Failure(reason: "truncated tag number") }
            rest = rest.dropFirst()
            guard !(index == 0 && byte == 0x80) else { throw Failure(reason: "tag number has a leading zero digit") }
            number = number << 7 | UInt32(byte & 0x7F)
            if byte & 0x80 == 0 {
                guard number >= 31 else { throw Failure(reason: "low tag number in the high form") }
                return Tag(tagClass: tagClass, isConstructed: constructed, number: number)
            }
        }
        throw Failure(reason: "tag number too large")
    }

    private mutating func readLength() throws(Failure) -> Int {
        guard let first = rest.first else { throw Failure(reason: "truncated: no length") }
        rest = rest.dropFirst()
        if first < 0x80 { return Int(first) }
        let count = Int(first & 0x7F)
        guard count >= 1 else { throw Failure(reason: "indefinite length") }
        guard count <= 4 else { throw Failure(reason: "length of \(count) bytes") }
        guard count <= rest.count else { throw Failure(reason: "truncated length") }
        var length = 0
        for byte in rest.prefix(count) { length = length << 8 | Int(byte) }
        rest = rest.dropFirst(count)
        // DER: the short form below 128, and no leading zero byte in the long form.
        guard length >= 0x80, length >> (8 * (count - 1)) != 0 else { throw Failure(reason: "non-minimal length") }
        return length
    }

    // MARK: Content decoders

    /// The dotted form of an OBJECT IDENTIFIER's content, such as `1.3.6.1.4.1.11129.2.1.17`.
    static func objectIdentifier(_ content: ArraySlice<UInt8>) throws(Failure) -> String {
        guard let last = content.last, last & 0x80 == 0 else { throw Failure(reason: "empty or unterminated OID") }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var digits = 0
        for byte in content {
            guard !(digits == 0 && byte == 0x80) else { throw Failure(reason: "OID arc has a leading zero digit") }
            digits += 1
            guard digits <= 9 else { throw Failure(reason: "OID arc too large") }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 {
                arcs.append(value)
                value = 0
                digits = 0
            }
        }
        // The first subidentifier packs two arcs: 40 * X + Y, with X in 0...2.
        guard let first = arcs.first else { throw Failure(reason: "empty OID") }
        let head: [UInt64] = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }

    /// The value of an INTEGER or ENUMERATED content of at most 8 bytes, minimally encoded.
    static func integer(_ content: ArraySlice<UInt8>) throws(Failure) -> Int64 {
        guard let first = content.first, content.count <= 8 else { throw Failure(reason: "empty or oversized integer") }
        if content.count > 1, let second = content.dropFirst().first {
            guard !(first == 0x00 && second & 0x80 == 0) && !(first == 0xFF && second & 0x80 != 0) else {
                throw Failure(reason: "non-minimal integer")
            }
        }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for byte in content { value = value << 8 | Int64(byte) }
        return value
    }

    /// The text of a UTF8String, PrintableString or IA5String element.
    static func text(_ element: Element) throws(Failure) -> String {
        switch element.tag {
        case .utf8String:
            guard let text = String(validating: element.content, as: UTF8.self) else {
                throw Failure(reason: "UTF8String is not UTF-8")
            }
            return text
        case .printableString, .ia5String:
            guard element.content.allSatisfy({ $0 < 0x80 }) else { throw Failure(reason: "non-ASCII string") }
            return String(decoding: element.content, as: UTF8.self)
        default:
            throw Failure(reason: "expected a string, found \(element.tag)")
        }
    }
}
