import Testing
@testable import WebAuthn

/// The strict decoder and canonical encoder.
@Suite struct CBORTests {
    func decode(_ bytes: [UInt8], limits: CBORDecoder.Limits = .webAuthn) throws(WebAuthnError) -> CBORValue {
        try CBORDecoder(limits: limits).decode(bytes)
    }

    func expectCode(_ code: WebAuthnError.Code, _ bytes: [UInt8], limits: CBORDecoder.Limits = .webAuthn,
                    sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: WebAuthnError.self, sourceLocation: sourceLocation) { try decode(bytes, limits: limits) }
        #expect(error?.code == code, "\(bytes)", sourceLocation: sourceLocation)
    }

    @Test("decodes RFC 8949 Appendix A examples")
    func appendixA() throws {
        let cases: [([UInt8], CBORValue)] = [
            ([0x00], .unsignedInteger(0)), ([0x17], .unsignedInteger(23)), ([0x18, 0x18], .unsignedInteger(24)),
            ([0x19, 0x03, 0xE8], .unsignedInteger(1000)),
            ([0x1B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .unsignedInteger(.max)),
            ([0x20], .integer(-1)), ([0x38, 0x63], .integer(-100)), ([0x39, 0x03, 0xE7], .integer(-1000)),
            ([0x40], .byteString([])), ([0x44, 1, 2, 3, 4], .byteString([1, 2, 3, 4])),
            ([0x60], .textString("")), ([0x62, 0xC3, 0xBC], .textString("ü")),
            ([0x83, 0x01, 0x02, 0x03], .array([.unsignedInteger(1), .unsignedInteger(2), .unsignedInteger(3)])),
            ([0xA2, 0x01, 0x02, 0x03, 0x04], .map([CBORMapEntry(.unsignedInteger(1), .unsignedInteger(2)),
                                                  CBORMapEntry(.unsignedInteger(3), .unsignedInteger(4))])),
            ([0xF4], .boolean(false)), ([0xF5], .boolean(true)), ([0xF6], .null), ([0xF7], .undefined),
            ([0xF0], .simple(16)), ([0xF8, 0xFF], .simple(255)),
            ([0xC1, 0x1A, 0x51, 0x4B, 0x67, 0xB0], .tagged(1, .unsignedInteger(1_363_896_240))),
            ([0xF9, 0x3C, 0x00], .float(1.0)), ([0xF9, 0xC4, 0x00], .float(-4.0)), ([0xF9, 0x00, 0x01], .float(5.960464477539063e-8)),
            ([0xFA, 0x47, 0xC3, 0x50, 0x00], .float(100_000.0)), ([0xFB, 0x3F, 0xF1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A], .float(1.1)),
        ]
        for (bytes, expected) in cases {
            #expect(try decode(bytes) == expected, "\(bytes)")
        }
        #expect(try decode([0x3B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]).integerValue == .min)
    }

    @Test("encodes canonically and round-trips, sorting map keys length-first")
    func roundTrip() throws {
        let value = CBORValue.map([
            CBORMapEntry(.textString("fmt"), .textString("none")), CBORMapEntry(.integer(-1), .integer(1)),
            CBORMapEntry(.integer(3), .integer(-7)), CBORMapEntry(.integer(1), .integer(2)),
            CBORMapEntry(.textString("a"), .array([.byteString(Array(repeating: 1, count: 300)), .boolean(true), .null])),
        ])
        let encoded = CBOREncoder.encode(value)
        #expect(Array(encoded.prefix(4)) == [0xA5, 0x01, 0x02, 0x03])   // 1, then 3, then -1 (0x20), ...
        let decoded = try decode(encoded)
        #expect(Set(decoded.mapEntries!) == Set(value.mapEntries!))
        #expect(CBOREncoder.encode(decoded) == encoded)
        for n: UInt64 in [0, 23, 24, 255, 256, 65_535, 65_536, 0xFFFF_FFFF, 0x1_0000_0000, .max] {
            #expect(try decode(CBOREncoder.encode(.unsignedInteger(n))) == .unsignedInteger(n))
        }
    }

    @Test("rejects truncated input at every length")
    func truncated() {
        let full = CBOREncoder.encode(.map([CBORMapEntry(.textString("k"), .array([.byteString([1, 2, 3]), .integer(-500)]))]))
        for length in 0..<full.count { expectCode(.cborTruncated, Array(full.prefix(length))) }
        expectCode(.cborLimitExceeded, [0x5B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])   // huge declared length
        expectCode(.cborTruncated, [0x59, 0x01, 0x00, 0x00])                                   // 256 bytes, one present
        expectCode(.cborTruncated, [0x9A, 0x00, 0x00, 0x01, 0x00])                          // 256 items, none present
    }

    @Test("rejects trailing bytes when a single item is expected, and reports the prefix length")
    func trailing() throws {
        expectCode(.cborTrailingBytes, [0x01, 0x02])
        let (value, used) = try CBORDecoder().decodePrefix([0x42, 9, 9, 0xFF][...])
        #expect(value == .byteString([9, 9]) && used == 3)
    }

    @Test("rejects indefinite lengths unless allowed, and decodes them when allowed")
    func indefinite() throws {
        let bytes: [UInt8] = [0x5F, 0x42, 1, 2, 0x41, 3, 0xFF]
        expectCode(.cborMalformed, bytes)
        expectCode(.cborMalformed, [0x9F, 0x01, 0xFF])
        expectCode(.cborMalformed, [0xBF, 0x01, 0x02, 0xFF])
        var lenient = CBORDecoder.Limits.webAuthn
        lenient.allowsIndefiniteLengths = true
        #expect(try decode(bytes, limits: lenient) == .byteString([1, 2, 3]))
        #expect(try decode([0x9F, 0x01, 0x9F, 0xFF, 0xFF], limits: lenient) == .array([.unsignedInteger(1), .array([])]))
        #expect(try decode([0x7F, 0x61, 0x61, 0xFF], limits: lenient) == .textString("a"))
        expectCode(.cborMalformed, [0x5F, 0x61, 0x61, 0xFF], limits: lenient)                   // text chunk in bytes
        expectCode(.cborMalformed, [0x5F, 0x5F, 0xFF, 0xFF], limits: lenient)                   // nested indefinite chunk
    }

    @Test("rejects reserved encodings, stray break, invalid UTF-8, duplicate keys, bad simple values")
    func malformed() {
        for bytes: [UInt8] in [[0x1C], [0x1D], [0x1E], [0x1F], [0x3F], [0xDF, 0x00], [0xFF], [0x62, 0xC3, 0x28],
                               [0xA2, 0x01, 0x02, 0x01, 0x03], [0xF8, 0x10], [0xFC], [0x5F, 0xFF][...].map { $0 }] {
            expectCode(.cborMalformed, bytes)
        }
    }

    @Test("enforces depth, string length and item count limits")
    func limits() {
        expectCode(.cborLimitExceeded, Array(repeating: 0x81, count: 17) + [0x00])
        expectCode(.cborLimitExceeded, [0x5A, 0x00, 0x01, 0x00, 0x01] + Array(repeating: 0, count: 65_537))
        expectCode(.cborLimitExceeded, [0x99, 0x08, 0x01] + Array(repeating: 0, count: 2_049))
        let flat: [UInt8] = [0x99, 0x07, 0xFF] + Array(repeating: 0, count: 2_047)   // 2,048 items with the array
        #expect(throws: Never.self) { try decode(flat) }
        expectCode(.cborLimitExceeded, [0x99, 0x07, 0xFF] + Array(repeating: 0x80, count: 2_047).enumerated().map { $0.offset == 0 ? 0x81 : $0.element } + [0x00])
    }
}
