import Foundation
import Testing
import SesameCore

/// RFC 3339 timestamps written by hand (payloads and the request log), checked against Foundation's ISO 8601 formatters.
@Suite struct TimestampTests {
    /// What Foundation writes for the same time, milliseconds rounded down.
    static func foundation(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = Int(milliseconds - seconds * 1000)
        return "\(whole.dropLast()).\(String(fraction + 1000).dropFirst())Z"
    }

    @Test("known instants: the epoch, leap days, a century that is not a leap year, before 1970, the last millisecond of a day")
    func knownInstants() {
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: 4_107_542_399.999)) == "2100-02-28T23:59:59.999Z")
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: 4_107_542_400)) == "2100-03-01T00:00:00.000Z")
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(Timestamps.rfc3339(Date(timeIntervalSince1970: 1_795_021_745.25)) == "2026-11-18T17:09:05.250Z")
    }

    @Test("timestamps match Foundation's ISO 8601 formatter across centuries, leap days and before 1970")
    func formatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions.insert(.withFractionalSeconds)
        for seconds: Double in [0, 1, 951_782_400.5, 1_709_208_000.999, 4_107_542_399, -1, -86_400.25, 253_402_300_799, 1_764_417_600.123] {
            var out: [UInt8] = Array("x".utf8)
            Timestamps.appendRFC3339(Date(timeIntervalSince1970: seconds), to: &out)
            #expect(String(decoding: out, as: UTF8.self) == "x" + formatter.string(from: Date(timeIntervalSince1970: seconds)), "\(seconds)")
        }
    }

    @Test("decimals keep their minimum width and sign")
    func decimals() {
        for (value, width, text) in [
            (0, 1, "0"), (7, 3, "007"), (1234, 2, "1234"), (-42, 1, "-42"), (-5, 3, "-005"), (Int.max, 1, String(Int.max)),
            (Int.min, 1, String(Int.min)),
        ] {
            var out: [UInt8] = []
            Timestamps.appendDecimal(value, minimumDigits: width, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == text)
        }
    }

    @Test("ten thousand random instants from 1900 to 2200 read as Foundation writes them")
    func matchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            let millisecond = Double(Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator)) / 1000
            let date = Date(timeIntervalSince1970: millisecond)
            #expect(Timestamps.rfc3339(date) == Self.foundation(date), "\(millisecond)")
        }
    }
}
