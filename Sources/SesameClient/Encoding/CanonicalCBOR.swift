/// The few CBOR data items an authenticator writes: integers, byte and text strings, and maps.
///
/// - SeeAlso: [RFC 8949](https://www.rfc-editor.org/rfc/rfc8949)
enum CBORItem: Sendable {
    case integer(Int64)
    case bytes([UInt8])
    case text(String)
    /// A map; the encoder sorts its keys, so the order given here does not matter.
    case map([(key: CBORItem, value: CBORItem)])

    /// The item in CTAP2 canonical form: shortest heads, definite lengths, and map keys sorted by major type,
    /// then by encoded length, then bytewise.
    ///
    /// - SeeAlso: [CTAP 2.1 §8 canonical CBOR](https://fidoalliance.org/specs/fido-v2.1-ps-20210615/fido-client-to-authenticator-protocol-v2.1-ps-20210615.html#ctap2-canonical-cbor-encoding-form)
    var encoded: [UInt8] {
        var out: [UInt8] = []
        append(to: &out)
        return out
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .integer(let n):
            // Major type 1 carries -1 - n, which for a negative Int64 is its bitwise complement.
            if n >= 0 { Self.head(0, UInt64(n), to: &out) } else { Self.head(1, UInt64(~n), to: &out) }
        case .bytes(let bytes):
            Self.head(2, UInt64(bytes.count), to: &out)
            out += bytes
        case .text(let text):
            Self.head(3, UInt64(text.utf8.count), to: &out)
            out += text.utf8
        case .map(let entries):
            Self.head(5, UInt64(entries.count), to: &out)
            let sorted = entries.map { (key: $0.key.encoded, value: $0.value) }.sorted { a, b in
                let (typeA, typeB) = (a.key[0] >> 5, b.key[0] >> 5)
                if typeA != typeB { return typeA < typeB }
                if a.key.count != b.key.count { return a.key.count < b.key.count }
                return a.key.lexicographicallyPrecedes(b.key)
            }
            for (index, entry) in sorted.enumerated() {
                precondition(index == 0 || sorted[index - 1].key != entry.key, "CBOR map with a duplicate key")
                out += entry.key
                entry.value.append(to: &out)
            }
        }
    }

    /// Writes a head with the shortest argument encoding.
    private static func head(_ major: UInt8, _ argument: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        let byteCount: Int
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
            return
        case 24...0xFF:
            out.append(type | 24)
            byteCount = 1
        case 0x100...0xFFFF:
            out.append(type | 25)
            byteCount = 2
        case 0x1_0000...0xFFFF_FFFF:
            out.append(type | 26)
            byteCount = 4
        default:
            out.append(type | 27)
            byteCount = 8
        }
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: argument >> UInt64(shift)))
        }
    }
}
