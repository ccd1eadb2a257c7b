// libFuzzer target `metadata`: `MetadataEntry(jsonEncoded:)` of module WebAuthn, the strict reader of one FIDO MDS3
// metadata BLOB entry, differentially.
//
// Checks, for every input: parsing never crashes; whatever Sesame accepts, Foundation's JSONSerialization accepts
// too, as an object whose aaguid (lowercased), key identifiers (lowercased), status strings and statement
// description and userVerificationDetails methods are the ones Sesame read; and the latest status report and the
// certification level at any time come from the entry's reports.
import Foundation
import WebAuthn

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadataEntry(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let entry = try? MetadataEntry(jsonEncoded: bytes) else { return 0 }
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        fatalError("Sesame accepted an entry that Foundation refuses")
    }
    guard (object["aaguid"] as? String)?.lowercased() == entry.aaguid else { fatalError("aaguid reads differently") }
    let identifiers = (object["attestationCertificateKeyIdentifiers"] as? [String])?.map { $0.lowercased() } ?? []
    guard identifiers == entry.attestationCertificateKeyIdentifiers else { fatalError("key identifiers read differently") }
    let statuses = (object["statusReports"] as? [[String: Any]])?.compactMap { $0["status"] as? String }
    guard statuses == entry.statusReports.map(\.status.rawValue) else { fatalError("statuses read differently") }
    let statement = object["metadataStatement"] as? [String: Any]
    guard statement?["description"] as? String == entry.metadataStatement?.description else {
        fatalError("description reads differently")
    }
    let details = (statement?["userVerificationDetails"] as? [[[String: Any]]])?.map { $0.compactMap { $0["userVerificationMethod"] as? String } }
    guard details == entry.metadataStatement?.userVerificationDetails else { fatalError("userVerificationDetails read differently") }
    for time in [Date.distantPast, Date(timeIntervalSince1970: 1_800_000_000), Date.distantFuture] {
        if let latest = entry.latestStatusReport(at: time), !entry.statusReports.contains(latest) {
            fatalError("the latest status report is not one of the entry's")
        }
        // The certification level in force is granted by one of the entry's reports.
        if let level = entry.certificationLevel(at: time), !entry.statusReports.contains(where: { CertificationLevel($0.status) == level }) {
            fatalError("a certification level no report grants")
        }
    }
    return 0
}
