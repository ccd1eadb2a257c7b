/// Base64url as WebAuthn clients send it.
///
/// Decoding accepts the base64url alphabet with or without `=` padding, and also standard base64 (`+`, `/`),
/// which some iOS code paths put in `clientDataJSON` and other fields. It rejects a mix of the two alphabets,
/// whitespace, misplaced or wrong padding, impossible lengths and non-zero trailing bits, so every accepted
/// string has exactly one meaning. Encoding always produces unpadded base64url.
///
/// - SeeAlso: [RFC 4648 §5](https://www.rfc-editor.org/rfc/rfc4648#section-5)
public enum Base64URL {
    /// The base64url alphabet, by 6-bit value.
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, marked ``urlAlphabet`` for `-` and `_` and ``standardAlphabet`` for `+` and `/`;
    /// ``notInAlphabet`` for every byte of neither alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: notInAlphabet, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62 | urlAlphabet
        table[Int(UInt8(ascii: "_"))] = 63 | urlAlphabet
        table[Int(UInt8(ascii: "+"))] = 62 | standardAlphabet
        table[Int(UInt8(ascii: "/"))] = 63 | standardAlphabet
        return table
    }()
    private static let urlAlphabet: UInt8 = 0x40
    private static let standardAlphabet: UInt8 = 0x80
    private static let notInAlphabet: UInt8 = 0xFF

    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        // Called from other modules, where this function is not specialized: one call reaches the bytes, and the
        // loop runs over a buffer rather than through a generic iterator.
        if let string = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return string }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        let length = (bytes.count * 4 + 2) / 3
        guard length > 0 else { return "" }
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { out in
                var written = 0
                var index = 0
                // Whole 3-byte groups, then the 1 or 2 bytes left (2 or 3 characters, no padding).
                while index + 3 <= bytes.count {
                    let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                    out[written] = alphabet[Int(group >> 18)]
                    out[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    out[written + 2] = alphabet[Int(group >> 6 & 0x3F)]
                    out[written + 3] = alphabet[Int(group & 0x3F)]
                    written += 4
                    index += 3
                }
                let left = bytes.count - index
                if left > 0 {
                    let group = UInt32(bytes[index]) << 16 | (left == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                    out[written] = alphabet[Int(group >> 18)]
                    out[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                    written += 2
                    if left == 2 {
                        out[written] = alphabet[Int(group >> 6 & 0x3F)]
                        written += 1
                    }
                }
                return written
            }
        }
    }

    /// Decodes base64url or standard base64, padded or not.
    /// - Throws: ``WebAuthnError`` `invalid_base64url` for anything else.
    public static func decode(_ string: String) throws(WebAuthnError) -> [UInt8] {
        var string = string
        return try string.withUTF8 { decode($0) }.get()
    }

    private static func decode(_ text: UnsafeBufferPointer<UInt8>) -> Result<[UInt8], WebAuthnError> {
        var chars = text[...]
        // Padding: only at the end, and only as much as completes the last quantum.
        if let firstPad = chars.firstIndex(of: UInt8(ascii: "=")) {
            let padding = chars.count - firstPad
            guard chars[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }), chars.count % 4 == 0, padding <= 2 else {
                return .failure(WebAuthnError(.invalidBase64URL, "misplaced or wrong padding"))
            }
            chars = chars[..<firstPad]
        }
        guard chars.count % 4 != 1 else { return .failure(WebAuthnError(.invalidBase64URL, "impossible length")) }

        let values = Self.values
        var alphabets: UInt8 = 0
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0, bits = 0
        for char in chars {
            let entry = values[Int(char)]
            guard entry != notInAlphabet else {
                return .failure(WebAuthnError(.invalidBase64URL, "character outside the base64 alphabets"))
            }
            alphabets |= entry
            accumulator = accumulator << 6 | UInt32(entry & 0x3F)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard alphabets & (urlAlphabet | standardAlphabet) != urlAlphabet | standardAlphabet else {
            return .failure(WebAuthnError(.invalidBase64URL, "mixes the base64url and base64 alphabets"))
        }
        guard accumulator == 0 else { return .failure(WebAuthnError(.invalidBase64URL, "non-zero trailing bits")) }
        return .success(out)
    }
}
