import Foundation
import SesameHTTP
import Testing

@Suite struct ClientNumberTests {
    static func decode(_ json: String) throws -> ClientNumber {
        try JSONDecoder().decode(ClientNumber.self, from: Data(json.utf8))
    }

    @Test("whole numbers inside the range come out; fractions, huge and out-of-range values are nil, never a trap",
          arguments: [
              ("6", 4...128, 6), ("4", 4...128, 4), ("128", 4...128, 128), ("129", 4...128, nil), ("3", 4...128, nil),
              ("6.5", 4...128, nil), ("1e300", 4...128, nil), ("-1e300", 4...128, nil),
              ("123456789012345678901234567890123456789", 4...128, nil), ("-0", 0...1, 0), ("6.0", 4...128, 6),
          ] as [(String, ClosedRange<Int>, Int?)])
    func integer(json: String, range: ClosedRange<Int>, expected: Int?) throws {
        #expect(try Self.decode(json).integer(in: range) == expected)
    }

    @Test("without a range any Int passes and anything beyond Int is nil; seconds follow the same rule")
    func defaults() throws {
        #expect(try Self.decode("9007199254740992").integer() == 9_007_199_254_740_992)
        #expect(try Self.decode("1e19").integer() == nil)
        #expect(try Self.decode("-1e19").integer() == nil)
        #expect(try Self.decode("900").seconds() == 900)
        #expect(try Self.decode("0.5").seconds() == nil)
    }

    @Test("other JSON types are a decoding error; the text form writes whole numbers without a fraction")
    func typesAndText() throws {
        for json in [#""6""#, "true", "null", "[6]"] {
            #expect(throws: DecodingError.self) { try Self.decode(json) }
        }
        #expect(try Self.decode("5").description == "5")
        #expect(try Self.decode("1e300").description == "1e+300")
        #expect(try Self.decode("2.5").description == "2.5")
    }
}
