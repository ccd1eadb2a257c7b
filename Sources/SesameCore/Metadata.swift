import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// A summary of the loaded FIDO metadata BLOB.
public struct MetadataSummary: Sendable, Hashable {
    /// The BLOB's serial number `no`.
    public let number: Int64
    /// The day by which the FIDO Alliance publishes the next BLOB.
    public let nextUpdate: Date
    public let legalHeader: String
    /// How many entries the BLOB had.
    public let entryCount: Int64
    /// How many AAGUIDs and attestation certificate key identifiers find an entry.
    public let lookupKeyCount: Int64
    public let loadedAt: Date
}

/// The FIDO Metadata Service (MDS3) data of this deployment, loaded offline from a BLOB the operator downloaded.
///
/// Loading verifies the BLOB (``MetadataBLOB``) to the given roots at the clock's time and keeps it only when its `no`
/// is greater than the loaded one's (MDS3 §3.2 step 5). Entries are stored by AAGUID and by attestation certificate
/// key identifier; entries found by neither (UAF `aaid` only) are not kept.
public struct MetadataService: Sendable {
    let store: Store
    let clock: any SesameClock

    /// Verifies and stores a metadata BLOB, replacing the loaded one.
    /// - Parameters:
    ///   - blob: the BLOB as downloaded.
    ///   - rootCertificates: the trusted roots (normally ``FIDOMetadataRoot/certificate``).
    /// - Returns: the new summary.
    /// - Throws: `verification_failed` whose ``SesameError/reason`` is the WebAuthn core's code (`metadata_invalid_signature`,
    ///   `metadata_untrusted_chain`, `metadata_expired`, …); `conflict` (reason `metadata_not_newer`) when the loaded
    ///   BLOB's `no` is not lower.
    @discardableResult
    public func load(_ blob: [UInt8], rootCertificates: [Certificate]) throws(SesameError) -> MetadataSummary {
        let now = clock.now()
        let verified: MetadataBLOB
        do { verified = try MetadataBLOB(jwsCompactSerialization: blob, rootCertificates: rootCertificates, at: now) } catch {
            throw SesameError.verification(error)
        }
        var entries: [(key: String, json: String)] = []
        for entry in verified.entries {
            let json = String(decoding: entry.jsonText, as: UTF8.self)
            if let aaguid = entry.aaguid { entries.append(("aaguid:\(aaguid)", json)) }
            for identifier in entry.attestationCertificateKeyIdentifiers { entries.append(("key:\(identifier)", json)) }
        }
        let record = StoredMetadataBLOB(serial: Int64(verified.number), nextUpdate: verified.nextUpdate,  // trap-safe: Int is 64-bit here
                                        legalHeader: verified.legalHeader, entryCount: Int64(verified.entries.count),
                                        loadedAt: now)
        let replaced = try StoreErrors.map { () throws(StoreError) -> Bool in
            try store.metadata.replace(with: record, entries: entries, ifSerialBelow: record.serial)
        }
        guard replaced else {
            let loaded = (try? status())?.number ?? 0
            throw SesameError(.conflict, "BLOB no \(verified.number) is not newer than the loaded no \(loaded)", reason: "metadata_not_newer")
        }
        return MetadataSummary(number: record.serial, nextUpdate: record.nextUpdate, legalHeader: record.legalHeader,
                               entryCount: record.entryCount, lookupKeyCount: Int64(entries.count), loadedAt: now)
    }

    /// The loaded BLOB's summary, or nil when none is loaded.
    public func status() throws(SesameError) -> MetadataSummary? {
        try StoreErrors.map { () throws(StoreError) -> MetadataSummary? in
            guard let blob = try store.metadata.current() else { return nil }
            return MetadataSummary(number: blob.serial, nextUpdate: blob.nextUpdate, legalHeader: blob.legalHeader,
                                   entryCount: blob.entryCount, lookupKeyCount: try store.metadata.lookupKeyCount(),
                                   loadedAt: blob.loadedAt)
        }
    }

    /// The stored entry for an authenticator.
    /// - Parameter identifier: its AAGUID or attestation certificate key identifier.
    /// - Returns: the entry, or nil when none is stored.
    /// - Throws: `internal_failure` when the stored JSON no longer parses (it was verified when loaded).
    public func entry(_ identifier: MetadataIdentifier) throws(SesameError) -> MetadataEntry? {
        let key: String
        switch identifier {
        case .aaguid(let aaguid): key = "aaguid:\(aaguid.lowercased())"
        case .attestationCertificateKeyIdentifier(let identifier): key = "key:\(identifier.lowercased())"
        }
        guard let json = try StoreErrors.map({ () throws(StoreError) in try store.metadata.entryJSON(lookupKey: key) }) else {
            return nil
        }
        do { return try MetadataEntry(jsonEncoded: Array(json.utf8)) } catch {
            throw SesameError(.internalFailure, "stored metadata entry does not parse: \(error.debugDescription)")
        }
    }
}

extension Sesame {
    /// The loaded FIDO metadata.
    public var metadata: MetadataService { MetadataService(store: store, clock: clock) }
}
