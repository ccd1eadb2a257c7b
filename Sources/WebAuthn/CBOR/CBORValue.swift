/// One decoded CBOR data item (RFC 8949).
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0.
    case unsignedInteger(UInt64)
    /// Major type 1: the value is `-1 - n`, stored as `n` so the full range fits.
    case negativeInteger(UInt64)
    case byteString([UInt8])
    case textString(String)
    case array([CBORValue])
    /// A map, its entries in the order they were decoded or built; keys are unique.
    case map([CBORMapEntry])
    case tagged(UInt64, CBORValue)
    case boolean(Bool)
    case null
    case undefined
    /// A simple value other than false, true, null and undefined.
    case simple(UInt8)
    case float(Double)

    /// The value as a signed integer, when it is an integer that fits in `Int64`.
    public var integerValue: Int64? {
        switch self {
        case .unsignedInteger(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negativeInteger(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    /// Creates an integer item of the right major type.
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsignedInteger(UInt64(value)) : .negativeInteger(UInt64(-1 - value))
    }

    /// The bytes of a byte string, else nil.
    public var bytes: [UInt8]? {
        if case .byteString(let b) = self { return b }
        return nil
    }

    /// The string of a text string, else nil.
    public var text: String? {
        if case .textString(let s) = self { return s }
        return nil
    }

    /// The entries of a map, else nil.
    public var mapEntries: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// The value stored under `key` when this is a map, else nil.
    public subscript(key: CBORValue) -> CBORValue? {
        mapEntries?.first { $0.key == key }?.value
    }

    /// The value stored under the text key `key` when this is a map.
    public subscript(key: String) -> CBORValue? { self[.textString(key)] }

    /// The value stored under the integer key `key` when this is a map.
    public subscript(key: Int64) -> CBORValue? { self[.integer(key)] }
}

/// A key and value of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    public var key: CBORValue
    public var value: CBORValue

    /// Creates a map entry.
    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}
