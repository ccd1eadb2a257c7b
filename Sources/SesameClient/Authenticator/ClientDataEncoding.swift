/// Builds `clientDataJSON` byte for byte as browsers do, using the limited serialization of WebAuthn §5.8.1.1.
///
/// - SeeAlso: [WebAuthn §5.8.1.1](https://www.w3.org/TR/webauthn-3/#clientdatajson-serialization)
enum ClientDataEncoding {
    /// The serialized client data: `type`, `challenge`, `origin`, `crossOrigin`, then `topOrigin` if given.
    static func serialize(type: String, challenge: String, origin: String, crossOrigin: Bool, topOrigin: String?)
        -> [UInt8]
    {
        var out = Array(#"{"type":"#.utf8)
        appendString(type, to: &out)
        out += #","challenge":"#.utf8
        appendString(challenge, to: &out)
        out += #","origin":"#.utf8
        appendString(origin, to: &out)
        out += (crossOrigin ? #","crossOrigin":true"# : #","crossOrigin":false"#).utf8
        if let topOrigin {
            out += #","topOrigin":"#.utf8
            appendString(topOrigin, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// CCDToString: a JSON string in which only `"`, `\` and control characters are escaped, the latter as
    /// `\u` with four lowercase hex digits.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22: out += #"\""#.utf8
            case 0x5C: out += #"\\"#.utf8
            case 0x20...: out += String(scalar).utf8
            default:
                let hex = String(scalar.value, radix: 16)
                out += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
