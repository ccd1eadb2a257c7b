import Foundation
import Testing
import SesameCore

/// Random identifiers keep their shapes: resource IDs are 20 lowercase hex digits, UUIDs are version 4 in lowercase.
@Suite struct IdentifierTests {
    @Test("resource IDs are 20 lowercase hex digits, all different")
    func unique() {
        let ids = (0..<1000).map { _ in Identifiers.unique() }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.utf8.count == 20 && $0.utf8.allSatisfy(Self.isLowerHex) })
    }

    @Test("UUIDs are RFC 9562 version 4 (variant 10) in lowercase, and parse as Foundation's UUID")
    func uuid() throws {
        for _ in 0..<1000 {
            let text = Identifiers.uuid()
            let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            #expect(groups.map(\.utf8.count) == [8, 4, 4, 4, 12], "\(text)")
            #expect(groups.joined().utf8.allSatisfy(Self.isLowerHex))
            #expect(groups[2].hasPrefix("4") && "89ab".contains(groups[3].first ?? "x"), "\(text)")
            #expect(UUID(uuidString: text)?.uuidString.lowercased() == text)
        }
    }

    static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
