import Foundation
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn
@testable import SesameCore

@Suite struct MetadataServiceTests {
    static let service = TestMetadataService()
    static let aaguid = "5e5a4e30-0000-4000-8000-000000000001"
    static let keyID = String(repeating: "0f", count: 20)

    static func blob(number: Int, nextUpdate: String = "2030-02-01", description: String = "Key") -> [UInt8] {
        let roots = [service.intermediate.certificate]
        let entries = [
            TestMetadataService.entry(aaguid: aaguid, description: description, roots: roots),
            TestMetadataService.entry(keyIdentifiers: [keyID, String(repeating: "1e", count: 20)], description: "U2F", roots: roots),
            #"{"aaid":"ABCD#0001","statusReports":[],"timeOfLastStatusChange":"2025-01-01"}"#,
        ]
        return Array(service.blob(payload: TestMetadataService.payload(number: number, nextUpdate: nextUpdate, entries: entries)).utf8)
    }

    @Test("loads a verified BLOB, reports it, finds its entries, and keeps it against a BLOB that is not newer", arguments: Backend.allCases)
    func load(backend: Backend) throws {
        let sesame = try backend.makeSesame()
        #expect(try sesame.metadata.status() == nil)
        #expect(try sesame.metadata.entry(.aaguid(Self.aaguid)) == nil)
        let summary = try sesame.metadata.load(Self.blob(number: 5), rootCertificates: [Self.service.root.certificate])
        #expect(summary.number == 5 && summary.entryCount == 3 && summary.lookupKeyCount == 3)
        #expect(try sesame.metadata.status() == summary)
        #expect(try sesame.metadata.entry(.aaguid(Self.aaguid.uppercased()))?.metadataStatement?.description == "Key")
        #expect(try sesame.metadata.entry(.attestationCertificateKeyIdentifier(Self.keyID.uppercased()))?.metadataStatement?.description == "U2F")
        #expect(try sesame.metadata.entry(.attestationCertificateKeyIdentifier(String(repeating: "1e", count: 20)))?.metadataStatement?.description == "U2F")
        #expect(try sesame.metadata.entry(.aaguid("00000000-0000-0000-0000-000000000001")) == nil)

        for number in [5, 4] {
            let error = #expect(throws: SesameError.self) {
                try sesame.metadata.load(Self.blob(number: number, description: "Other"), rootCertificates: [Self.service.root.certificate])
            }
            #expect(error?.code == .conflict && error?.reason == "metadata_not_newer")
        }
        #expect(try sesame.metadata.entry(.aaguid(Self.aaguid))?.metadataStatement?.description == "Key")

        try sesame.metadata.load(Self.blob(number: 6, description: "Newer"), rootCertificates: [Self.service.root.certificate])
        #expect(try sesame.metadata.status()?.number == 6)
        #expect(try sesame.metadata.entry(.aaguid(Self.aaguid))?.metadataStatement?.description == "Newer")
    }

    @Test("refuses a BLOB that does not verify, with the check's code as the reason, and stores nothing")
    func refuses() throws {
        let sesame = try Backend.sqlite.makeSesame()
        let cases: [([UInt8], String)] = [
            (Self.blob(number: 1), "metadata_untrusted_chain"),
            (Self.blob(number: 1, nextUpdate: "2026-01-01"), "metadata_expired"),
            (Array("not a blob".utf8), "metadata_malformed"),
        ]
        for (index, (blob, reason)) in cases.enumerated() {
            let roots = index == 0 ? [TestCertificateAuthority.root().certificate] : [Self.service.root.certificate]
            let error = #expect(throws: SesameError.self) { try sesame.metadata.load(blob, rootCertificates: roots) }
            #expect(error?.code == .verificationFailed && error?.reason == reason, "\(String(describing: error))")
        }
        #expect(try sesame.metadata.status() == nil)
    }
}
