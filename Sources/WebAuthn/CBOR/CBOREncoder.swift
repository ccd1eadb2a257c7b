/// Encodes CBOR data items in CTAP2 canonical form: shortest heads, definite lengths, map keys sorted by
/// their encoded bytes (length first, then bytewise), as RFC 8949 §4.2.3 length-first ordering requires.
public enum CBOREncoder {
    /// The canonical encoding of `value`.
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24...0xFF: out += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF: out.append(type | 25); bigEndian(argument, byteCount: 2, to: &out)
        case 0x1_0000...0xFFFF_FFFF: out.append(type | 26); bigEndian(argument, byteCount: 4, to: &out)
        default: out.append(type | 27); bigEndian(argument, byteCount: 8, to: &out)
        }
    }

    private static func bigEndian(_ value: UInt64, byteCount: Int, to out: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func append(_ value: CBORValue, to out: inout [UInt8]) {
        switch value {
        case .unsignedInteger(let n): head(0, n, to: &out)
        case .negativeInteger(let n): head(1, n, to: &out)
        case .byteString(let bytes): head(2, UInt64(bytes.count), to: &out); out += bytes
        case .textString(let text): head(3, UInt64(text.utf8.count), to: &out); out += text.utf8
        case .array(let elements):
            head(4, UInt64(elements.count), to: &out)
            for element in elements { append(element, to: &out) }
        case .map(let entries):
            head(5, UInt64(entries.count), to: &out)
            let encoded = entries.map { (key: encode($0.key), value: $0.value) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for entry in encoded {
                out += entry.key
                append(entry.value, to: &out)
            }
        case .tagged(let tag, let inner): head(6, tag, to: &out); append(inner, to: &out)
        case .boolean(let flag): out.append(flag ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .simple(let n): if n < 24 { out.append(0xE0 | n) } else { out += [0xF8, n] }
        case .float(let d): out.append(0xFB); bigEndian(d.bitPattern, byteCount: 8, to: &out)
        }
    }
}
