import Foundation
import SesameCrypto

/// Loads the files under `Data/` (see Data/README.md), relative to this source file.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Data")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(pemEncoded: text(name))
    }
}

/// Hex helpers for test vectors.
extension Array where Element == UInt8 {
    init(hex: String) {
        let digits = Array(hex.filter { !$0.isWhitespace }.utf8)
        precondition(digits.count % 2 == 0, "odd hex length")
        self = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// A UTC date from components.
func utc(_ year: Int, _ month: Int, _ day: Int) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar.date(from: DateComponents(year: year, month: month, day: day))!
}
