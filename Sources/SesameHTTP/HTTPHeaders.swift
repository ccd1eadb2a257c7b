/// An ordered list of header fields with case-insensitive name lookup.
///
/// Names keep the spelling they were added with; lookups ignore ASCII case. Repeated names are kept as separate
/// fields in their original order.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, Equatable {
    /// One header field.
    public typealias Element = (name: String, value: String)

    private var fields: [Field] = []

    private struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// Creates an empty header list.
    public init() {}

    /// Creates a header list from name-value pairs, in order.
    /// - Parameter elements: The fields; repeated names are kept.
    public init(_ elements: [(String, String)]) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a header list from a literal such as `["Content-Type": "text/plain"]`.
    /// - Parameter elements: The fields, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name` (ASCII case-insensitive), or `nil` if there is none.
    public subscript(name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// All values for `name` (ASCII case-insensitive), in order.
    /// - Parameter name: The header name.
    /// - Returns: The values; empty if the header is absent.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether at least one field is named `name` (ASCII case-insensitive).
    /// - Parameter name: The header name.
    /// - Returns: `true` if the header is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesMatch($0.name, name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    /// - Parameters:
    ///   - name: The header name.
    ///   - value: The header value.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces all fields named `name` with one field, at the position of the first one (or at the end).
    /// - Parameters:
    ///   - name: The header name.
    ///   - value: The new value.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { Self.namesMatch($0.name, name) }) {
            fields[index] = Field(name: name, value: value)
            var next = fields.index(after: index)
            while next < fields.endIndex {
                if Self.namesMatch(fields[next].name, name) {
                    fields.remove(at: next)
                } else {
                    next = fields.index(after: next)
                }
            }
        } else {
            fields.append(Field(name: name, value: value))
        }
    }

    /// Removes every field named `name` (ASCII case-insensitive).
    /// - Parameter name: The header name.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Makes room for `capacity` fields in all, so that adding them allocates once.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates over the fields in order.
    /// - Returns: An iterator of `(name, value)` pairs.
    public func makeIterator() -> some IteratorProtocol<Element> {
        fields.lazy.map { (name: $0.name, value: $0.value) }.makeIterator()
    }

    /// Whether two header names are equal ignoring ASCII case.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        // Over the contiguous UTF-8 (every header is looked up several times per request; an iterator pair costs more).
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                for index in left.indices where asciiLowercase(left[index]) != asciiLowercase(right[index]) { return false }
                return true
            }
        }
    }

    /// `byte` with ASCII `A`-`Z` made lowercase.
    static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
