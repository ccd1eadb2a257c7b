internal import SesameCrypto

extension HTTPRequest {
    /// Makes a fresh request identifier: 16 bytes from the system's secure random source, as 32 lowercase hex digits.
    /// - Returns: The identifier.
    public static func makeID() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in SecureRandom.bytes(count: 16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
