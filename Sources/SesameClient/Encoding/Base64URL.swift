/// Base64url as browsers use it for WebAuthn JSON (RFC 4648 §5).
///
/// Encoding produces unpadded base64url, as `toJSON()` does. Decoding follows Chrome's
/// `parseCreationOptionsFromJSON`: the base64url alphabet, with `=` padding ignored when it is present;
/// the standard alphabet (`+`, `/`), whitespace and impossible lengths are rejected.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes` as unpadded base64url.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = b1 == nil ? nil : iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 { out.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)]) }
            if let b2 { out.append(alphabet[Int(b2 & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url, padded or not; nil for anything else.
    static func decode(_ string: String) -> [UInt8]? {
        var chars = Array(string.utf8)
        // Padding: only at the end, at most two, and only where it completes the last quantum.
        if let firstPad = chars.firstIndex(of: UInt8(ascii: "=")) {
            let padding = chars.count - firstPad
            guard padding <= 2, chars.count % 4 == 0, chars[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }) else {
                return nil
            }
            chars.removeLast(padding)
        }
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            let value: UInt8
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = char - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = char - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = char - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return out
    }
}
