/// A strict, bounded CBOR decoder for the data items WebAuthn exchanges.
///
/// It rejects truncated input, reserved encodings, invalid UTF-8, duplicate map keys, a `break` outside an
/// indefinite-length item, and (unless ``Limits/allowsIndefiniteLengths`` is set) every indefinite length,
/// which CTAP2's canonical encoding never uses. Nesting depth, string lengths and the number of items are
/// bounded, so hostile input costs at most linear time and bounded memory.
/// Non-minimal integer and length encodings are accepted: they are unambiguous and some authenticators emit them.
///
/// - SeeAlso: [RFC 8949](https://www.rfc-editor.org/rfc/rfc8949), [CTAP2 canonical CBOR](https://fidoalliance.org/specs/fido-v2.1-ps-20210615/fido-client-to-authenticator-protocol-v2.1-ps-20210615.html#ctap2-canonical-cbor-encoding-form)
public struct CBORDecoder: Sendable {
    /// Bounds that every decode enforces.
    public struct Limits: Sendable {
        /// The deepest nesting of arrays, maps and tags.
        public var maximumDepth: Int
        /// The longest byte or text string, in bytes.
        public var maximumStringLength: Int
        /// The most data items in one decode, counting every nested item, key and value.
        public var maximumItemCount: Int
        /// Whether indefinite-length strings, arrays and maps are accepted.
        public var allowsIndefiniteLengths: Bool

        /// Creates a set of limits.
        public init(maximumDepth: Int = 16, maximumStringLength: Int = 65_536, maximumItemCount: Int = 2_048,
                    allowsIndefiniteLengths: Bool = false) {
            self.maximumDepth = maximumDepth
            self.maximumStringLength = maximumStringLength
            self.maximumItemCount = maximumItemCount
            self.allowsIndefiniteLengths = allowsIndefiniteLengths
        }

        /// The limits used for WebAuthn structures.
        public static let webAuthn = Limits()
    }

    public var limits: Limits

    /// Creates a decoder with the given limits.
    public init(limits: Limits = .webAuthn) { self.limits = limits }

    /// Decodes exactly one data item that must fill `bytes`.
    /// - Throws: ``WebAuthnError`` with a `cbor_*` code; `cbor_trailing_bytes` when bytes follow the item.
    public func decode(_ bytes: some Collection<UInt8>) throws(WebAuthnError) -> CBORValue {
        let array = Array(bytes)
        let (value, consumed) = try decodePrefix(array[...])
        guard consumed == array.count else {
            throw WebAuthnError(.cborTrailingBytes, "\(array.count - consumed) bytes after the CBOR item")
        }
        return value
    }

    /// Decodes the first data item of `bytes` and returns it with the number of bytes it took.
    /// - Throws: ``WebAuthnError`` with a `cbor_*` code.
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (value: CBORValue, byteCount: Int) {
        var reader = Reader(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 0)
        return (value, reader.index - bytes.startIndex)
    }
}

/// A cursor over the input; every read is bounds-checked.
private struct Reader {
    let bytes: ArraySlice<UInt8>
    let limits: CBORDecoder.Limits
    var index: Int
    var itemCount = 0

    init(bytes: ArraySlice<UInt8>, limits: CBORDecoder.Limits) {
        self.bytes = bytes
        self.limits = limits
        self.index = bytes.startIndex
    }

    mutating func byte() throws(WebAuthnError) -> UInt8 {
        guard index < bytes.endIndex else { throw WebAuthnError(.cborTruncated, "input ends inside an item") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func take(_ count: UInt64) throws(WebAuthnError) -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.endIndex - index) else {
            throw WebAuthnError(.cborTruncated, "string of \(count) bytes runs past the input")
        }
        let end = index + Int(count)
        defer { index = end }
        return bytes[index..<end]
    }

    mutating func bigEndian(_ count: Int) throws(WebAuthnError) -> UInt64 {
        var value: UInt64 = 0
        for byte in try take(UInt64(count)) { value = value << 8 | UInt64(byte) }
        return value
    }

    /// The argument of the head; nil means indefinite length (additional information 31).
    mutating func argument(_ info: UInt8) throws(WebAuthnError) -> UInt64? {
        switch info {
        case 0...23: return UInt64(info)
        case 24: return try bigEndian(1)
        case 25: return try bigEndian(2)
        case 26: return try bigEndian(4)
        case 27: return try bigEndian(8)
        case 31: return nil
        default: throw WebAuthnError(.cborMalformed, "reserved additional information \(info)")
        }
    }

    mutating func countItem() throws(WebAuthnError) {
        itemCount += 1
        guard itemCount <= limits.maximumItemCount else {
            throw WebAuthnError(.cborLimitExceeded, "more than \(limits.maximumItemCount) items")
        }
    }

    func checkLength(_ length: UInt64) throws(WebAuthnError) {
        guard length <= UInt64(limits.maximumStringLength) else {
            throw WebAuthnError(.cborLimitExceeded, "string of \(length) bytes exceeds the limit")
        }
    }

    func checkIndefinite() throws(WebAuthnError) {
        guard limits.allowsIndefiniteLengths else {
            throw WebAuthnError(.cborMalformed, "indefinite length is not allowed here")
        }
    }

    /// True, consuming it, when the next byte is the `break` stop code.
    mutating func atBreak() throws(WebAuthnError) -> Bool {
        guard index < bytes.endIndex else { throw WebAuthnError(.cborTruncated, "input ends before break") }
        if bytes[index] == 0xFF {
            index += 1
            return true
        }
        return false
    }

    mutating func item(depth: Int) throws(WebAuthnError) -> CBORValue {
        guard depth <= limits.maximumDepth else {
            throw WebAuthnError(.cborLimitExceeded, "nesting deeper than \(limits.maximumDepth)")
        }
        try countItem()
        let head = try byte()
        let major = head >> 5
        let info = head & 0x1F
        if major == 7 { return try simpleOrFloat(info) }
        let argument = try argument(info)
        switch major {
        case 0:
            guard let n = argument else { throw WebAuthnError(.cborMalformed, "indefinite integer") }
            return .unsignedInteger(n)
        case 1:
            guard let n = argument else { throw WebAuthnError(.cborMalformed, "indefinite integer") }
            return .negativeInteger(n)
        case 2:
            return .byteString(try string(major: 2, length: argument))
        case 3:
            let utf8 = try string(major: 3, length: argument)
            guard let text = String(validating: utf8, as: UTF8.self) else {
                throw WebAuthnError(.cborMalformed, "text string is not valid UTF-8")
            }
            return .textString(text)
        case 4:
            var elements: [CBORValue] = []
            if let count = argument {
                try checkContainer(count)
                elements.reserveCapacity(Int(count))
                for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
            } else {
                try checkIndefinite()
                while try !atBreak() { elements.append(try item(depth: depth + 1)) }
            }
            return .array(elements)
        case 5:
            var entries: [CBORMapEntry] = []
            var keys = Set<CBORValue>()
            func add(_ entry: CBORMapEntry) throws(WebAuthnError) {
                guard keys.insert(entry.key).inserted else { throw WebAuthnError(.cborMalformed, "duplicate map key") }
                entries.append(entry)
            }
            if let count = argument {
                try checkContainer(count)
                for _ in 0..<count { try add(CBORMapEntry(try item(depth: depth + 1), try item(depth: depth + 1))) }
            } else {
                try checkIndefinite()
                while try !atBreak() { try add(CBORMapEntry(try item(depth: depth + 1), try item(depth: depth + 1))) }
            }
            return .map(entries)
        default:  // 6: tag
            guard let tag = argument else { throw WebAuthnError(.cborMalformed, "indefinite tag") }
            return .tagged(tag, try item(depth: depth + 1))
        }
    }

    /// An array or map cannot claim more elements than the input could hold (one byte each at least).
    func checkContainer(_ count: UInt64) throws(WebAuthnError) {
        guard count <= UInt64(limits.maximumItemCount) else {
            throw WebAuthnError(.cborLimitExceeded, "container of \(count) items exceeds the limit")
        }
        guard count <= UInt64(bytes.endIndex - index) else {
            throw WebAuthnError(.cborTruncated, "container of \(count) items runs past the input")
        }
    }

    mutating func string(major: UInt8, length: UInt64?) throws(WebAuthnError) -> [UInt8] {
        if let length {
            try checkLength(length)
            return Array(try take(length))
        }
        // An indefinite-length string is a sequence of definite chunks of the same major type.
        try checkIndefinite()
        var result: [UInt8] = []
        while try !atBreak() {
            try countItem()
            let head = try byte()
            guard head >> 5 == major, let chunkLength = try argument(head & 0x1F) else {
                throw WebAuthnError(.cborMalformed, "bad chunk in an indefinite-length string")
            }
            try checkLength(UInt64(result.count) + chunkLength)
            result += try take(chunkLength)
        }
        return result
    }

    mutating func simpleOrFloat(_ info: UInt8) throws(WebAuthnError) -> CBORValue {
        switch info {
        case 20: return .boolean(false)
        case 21: return .boolean(true)
        case 22: return .null
        case 23: return .undefined
        case 0...19: return .simple(info)
        case 24:
            let value = try byte()
            guard value >= 32 else { throw WebAuthnError(.cborMalformed, "two-byte simple value below 32") }
            return .simple(value)
        case 25: return .float(Double(Float16Bits(UInt16(try bigEndian(2))).value))
        case 26: return .float(Double(Float(bitPattern: UInt32(try bigEndian(4)))))
        case 27: return .float(Double(bitPattern: try bigEndian(8)))
        case 31: throw WebAuthnError(.cborMalformed, "break outside an indefinite-length item")
        default: throw WebAuthnError(.cborMalformed, "reserved simple value encoding \(info)")
        }
    }
}

/// IEEE 754 half precision, decoded by hand because `Float16` is unavailable on some platforms.
private struct Float16Bits {
    let bits: UInt16
    init(_ bits: UInt16) { self.bits = bits }

    var value: Float {
        let sign: Float = bits & 0x8000 == 0 ? 1 : -1
        let exponent = Int((bits >> 10) & 0x1F)
        let fraction = Float(bits & 0x3FF)
        switch exponent {
        case 0: return sign * fraction * 0x1p-24
        case 31: return fraction == 0 ? sign * .infinity : .nan
        default: return sign * (1 + fraction / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }
}
