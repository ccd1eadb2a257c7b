/// Base64url as WebAuthn clients send it.
///
/// Decoding accepts the base64url alphabet with or without `=` padding, and also standard base64 (`+`, `/`),
/// which some iOS code paths put in `clientDataJSON` and other fields. It rejects a mix of the two alphabets,
/// whitespace, misplaced or wrong padding, impossible lengths and non-zero trailing bits, so every accepted
/// string has exactly one meaning. Encoding always produces unpadded base64url.
///
/// - SeeAlso: [RFC 4648 §5](https://www.rfc-editor.org/rfc/rfc4648#section-5)
public enum Base64URL {
    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next(), b2 = iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 { out.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)]) }
            if let b2 { out.append(alphabet[Int(b2 & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url or standard base64, padded or not.
    /// - Throws: ``WebAuthnError`` `invalid_base64url` for anything else.
    public static func decode(_ string: String) throws(WebAuthnError) -> [UInt8] {
        var chars = Array(string.utf8)
        // Padding: only at the end, and only as much as completes the last quantum.
        if let firstPad = chars.firstIndex(of: UInt8(ascii: "=")) {
            let padding = chars.count - firstPad
            guard chars[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }), chars.count % 4 == 0, padding <= 2 else {
                throw WebAuthnError(.invalidBase64URL, "misplaced or wrong padding")
            }
            chars.removeLast(padding)
        }
        guard chars.count % 4 != 1 else { throw WebAuthnError(.invalidBase64URL, "impossible length") }

        var sawURLAlphabet = false, sawStandardAlphabet = false
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0, bits = 0
        for char in chars {
            let value: UInt8
            switch char {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = char - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = char - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = char - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62; sawURLAlphabet = true
            case UInt8(ascii: "_"): value = 63; sawURLAlphabet = true
            case UInt8(ascii: "+"): value = 62; sawStandardAlphabet = true
            case UInt8(ascii: "/"): value = 63; sawStandardAlphabet = true
            default: throw WebAuthnError(.invalidBase64URL, "character outside the base64 alphabets")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard !(sawURLAlphabet && sawStandardAlphabet) else {
            throw WebAuthnError(.invalidBase64URL, "mixes the base64url and base64 alphabets")
        }
        guard accumulator == 0 else { throw WebAuthnError(.invalidBase64URL, "non-zero trailing bits") }
        return out
    }
}
