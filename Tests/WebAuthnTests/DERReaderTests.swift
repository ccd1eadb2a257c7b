import SesameTestSupport
import Testing
@testable import WebAuthn

/// The DER reader the attestation formats parse certificate extensions with.
@Suite struct DERReaderTests {
    func read(_ bytes: [UInt8]) throws(DERReader.Failure) -> DERReader.Element {
        var reader = DERReader(bytes)
        let element = try reader.read()
        try reader.finish()
        return element
    }

    @Test("reads short and long lengths, high tag numbers and nested elements")
    func reads() throws {
        let long = DER.octetString([UInt8](repeating: 7, count: 300))
        #expect(Array(long.prefix(4)) == [0x04, 0x82, 0x01, 0x2C])
        #expect(try read(long).content.count == 300)
        let tagged = try read(DER.context(702, DER.integer(0)))
        #expect(tagged.tag == .context(702))
        #expect(try DERReader.integer(DERReader.single(.integer, in: tagged.content)) == 0)
        var sequence = DERReader(try DERReader.single(.sequence, in: DER.sequence(DER.null, DER.boolean(true))[...]))
        #expect(try sequence.read(.null).isEmpty)
        #expect(sequence.nextTag == .boolean)
        #expect(try sequence.readIfPresent(.integer) == nil)
        #expect(try sequence.read(.boolean) == [0xFF])
        #expect(sequence.isAtEnd)
    }

    @Test("refuses truncation, trailing bytes, indefinite and non-minimal lengths, and bad tag numbers")
    func refuses() {
        let bad: [[UInt8]] = [
            [], [0x30], [0x30, 0x02, 0x05], [0x05, 0x00, 0x00], [0x30, 0x80, 0x00, 0x00], [0x04, 0x81, 0x05, 1, 2, 3, 4, 5],
            [0x04, 0x82, 0x00, 0x90] + [UInt8](repeating: 0, count: 0x90), [0x04, 0x85, 1, 0, 0, 0, 0],
            [0xBF, 0x80, 0x01, 0x00], [0xBF, 0x1E, 0x00], [0xBF, 0x81, 0x82, 0x83, 0x84, 0x05, 0x00], [0xBF],
        ]
        for bytes in bad {
            #expect(throws: DERReader.Failure.self, "\(bytes.prefix(8))") { try read(bytes) }
        }
        #expect(throws: DERReader.Failure.self) { try DERReader.single(.sequence, in: DER.set([])[...]) }
    }

    @Test("decodes OBJECT IDENTIFIERs, refusing empty, unterminated and padded arcs")
    func objectIdentifiers() throws {
        for oid in ["1.3.6.1.4.1.11129.2.1.17", "2.23.133.8.3", "1.2.840.113635.100.8.2", "2.999.3", "0.9"] {
            #expect(try DERReader.objectIdentifier(DERReader.single(.objectIdentifier, in: DER.oid(oid)[...])) == oid)
        }
        for content: [UInt8] in [[], [0x2B, 0x86], [0x2B, 0x80, 0x01], [0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01]] {
            #expect(throws: DERReader.Failure.self) { try DERReader.objectIdentifier(content[...]) }
        }
    }

    @Test("decodes small INTEGERs, refusing empty, oversized and non-minimal ones")
    func integers() throws {
        for value: Int64 in [0, 1, 127, 128, 255, 256, -1, -128, -129, 300, Int64.max, Int64.min] {
            #expect(try DERReader.integer(DERReader.single(.integer, in: DER.integer(value)[...])) == value)
        }
        for content: [UInt8] in [[], [0x00, 0x01], [0xFF, 0x80], [UInt8](repeating: 1, count: 9)] {
            #expect(throws: DERReader.Failure.self) { try DERReader.integer(content[...]) }
        }
    }

    @Test("reads UTF8String, PrintableString and IA5String text only")
    func text() throws {
        #expect(try DERReader.text(read(DER.utf8String("id:FFFFF1D0"))) == "id:FFFFF1D0")
        #expect(try DERReader.text(read(DER.ia5String("attest.android.com"))) == "attest.android.com")
        #expect(throws: DERReader.Failure.self) { try DERReader.text(read([0x0C, 0x02, 0xC3, 0x28])) }
        #expect(throws: DERReader.Failure.self) { try DERReader.text(read([0x16, 0x01, 0xE9])) }
        #expect(throws: DERReader.Failure.self) { try DERReader.text(read(DER.octetString([0x41]))) }
    }
}
