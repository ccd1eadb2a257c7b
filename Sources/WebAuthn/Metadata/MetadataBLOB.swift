import Foundation
import SesameCrypto

/// A verified FIDO Metadata Service (MDS3) metadata BLOB: the signed list of authenticator models, their statements
/// and status reports, with lookups by AAGUID and by attestation certificate key identifier.
///
/// The only way to make one is ``init(jwsCompactSerialization:rootCertificates:at:)``, which follows the metadata
/// BLOB processing rules of MDS3 §3.2 for a BLOB the operator downloaded (offline: `x5u` is not fetched). Whether a
/// BLOB's `no` is newer than one stored before (step 5) is the caller's to judge.
///
/// - SeeAlso: [FIDO MDS3 §3.1.6, §3.2](https://fidoalliance.org/specs/mds/fido-metadata-service-v3.0-ps-20210518.html#metadata-blob)
public struct MetadataBLOB: Sendable {
    /// The largest BLOB read, in bytes (the FIDO Alliance's is a few megabytes).
    public static let maximumLength = 64 << 20

    /// The payload's `legalHeader`: the terms under which the metadata may be used.
    public let legalHeader: String
    /// The payload's serial number `no`; a later BLOB has a greater one.
    public let number: Int
    /// The day by which the next BLOB will be published (midnight UTC), from `nextUpdate`.
    public let nextUpdate: Date
    /// The entries, in BLOB order.
    public let entries: [MetadataEntry]

    private let entryByAAGUID: [String: Int]
    private let entryByKeyIdentifier: [String: Int]

    /// Verifies and parses a metadata BLOB.
    ///
    /// In order: the text is a JWS compact serialization whose header has `alg` and an `x5c` chain (no `crit`); the
    /// chain validates at `time` to one of `rootCertificates`; the signature verifies with the chain's first
    /// certificate (RS256 or ES256); the payload has a string `legalHeader`, a non-negative integer `no`, a
    /// `yyyy-mm-dd` `nextUpdate` and an array `entries` of valid entries (see ``MetadataEntry/init(jsonEncoded:)``),
    /// no two with the same AAGUID or key identifier; and the `nextUpdate` day (UTC) has not ended at `time`.
    /// - Parameters:
    ///   - bytes: the BLOB as downloaded (UTF-8; surrounding whitespace is allowed).
    ///   - rootCertificates: the trusted roots; the FIDO Alliance's is ``FIDOMetadataRoot/certificate``.
    ///   - time: the moment to judge the chain and `nextUpdate` at, normally now.
    /// - Throws: `metadata_malformed`, `metadata_untrusted_chain`, `metadata_invalid_signature`,
    ///   `metadata_unknown_status` or `metadata_expired`, for the first check that fails.
    public init(jwsCompactSerialization bytes: [UInt8], rootCertificates: [Certificate], at time: Date) throws(WebAuthnError) {
        guard bytes.count <= Self.maximumLength else {
            throw WebAuthnError(.metadataMalformed, "MDS3 §3.2 step 1: BLOB is \(bytes.count) bytes, more than \(Self.maximumLength)")
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let start = bytes.firstIndex(where: { !isSpace($0) }) ?? bytes.endIndex
        let end = bytes.lastIndex(where: { !isSpace($0) }).map { $0 + 1 } ?? start
        let text = start < end ? Array(bytes[start..<end]) : []
        // §3.2 step 1: the BLOB is a JWS in compact serialization (a JWT).
        let jws: X5CJWS
        do { jws = try X5CJWS(compactSerialization: text) } catch {
            throw WebAuthnError(.metadataMalformed, "MDS3 §3.2 step 1: \(error.reason)")
        }
        // RFC 7515 §4.1.11: no extension is understood, so any crit must fail.
        guard !jws.header.contains("crit") else {
            throw WebAuthnError(.metadataMalformed, "MDS3 §3.2 step 1: JWS header has crit, which is not supported")
        }
        // §3.2 steps 2-3: offline, the chain is the header's x5c (x5u is never fetched).
        // §3.2 step 4: the chain validates to the root; then the signature verifies with its first certificate.
        do {
            try CertificateChain.validate(leaf: jws.certificates[0], intermediates: Array(jws.certificates.dropFirst()),
                                          trustAnchors: rootCertificates, at: time)
        } catch {
            throw WebAuthnError(.metadataUntrustedChain, "MDS3 §3.2 step 4: x5c chain: \(error.debugDescription)")
        }
        guard jws.algorithm == "RS256" || jws.algorithm == "ES256" else {
            throw WebAuthnError(.metadataInvalidSignature, "MDS3 §3.1.7: alg \(jws.algorithm.prefix(16)) is not RS256 or ES256")
        }
        guard jws.isSignatureValid() else {
            throw WebAuthnError(.metadataInvalidSignature, "MDS3 §3.2 step 4: the BLOB signature does not verify (\(jws.algorithm))")
        }
        // §3.1.6: the payload, a MetadataBLOBPayload.
        func malformed(_ detail: String) -> WebAuthnError { WebAuthnError(.metadataMalformed, "MDS3 §3.1.6: payload \(detail)") }
        guard let payload = JSONObjectMembers(jws.payload) else { throw malformed("is not one JSON object") }
        guard let legalHeader = payload.string("legalHeader") else { throw malformed("legalHeader is not a string") }
        guard let numberText = payload.number("no"), let number = Int(numberText), number >= 0 else {
            throw malformed("no is not a non-negative integer")
        }
        guard let nextUpdateText = payload.string("nextUpdate"), let nextUpdate = MetadataDate.parse(nextUpdateText) else {
            throw malformed("nextUpdate is not a yyyy-mm-dd date")
        }
        guard let entryTexts = payload.objects("entries") else { throw malformed("entries is not an array of objects") }
        var entries: [MetadataEntry] = []
        var byAAGUID: [String: Int] = [:]
        var byKeyIdentifier: [String: Int] = [:]
        entries.reserveCapacity(entryTexts.count)
        for (index, entryText) in entryTexts.enumerated() {
            let entry = try MetadataEntry(jsonEncoded: entryText)
            if let aaguid = entry.aaguid, byAAGUID.updateValue(index, forKey: aaguid) != nil {
                throw malformed("has two entries for AAGUID \(aaguid)")
            }
            for identifier in entry.attestationCertificateKeyIdentifiers where byKeyIdentifier.updateValue(index, forKey: identifier) != nil {
                throw malformed("has two entries for attestation certificate key identifier \(identifier)")
            }
            entries.append(entry)
        }
        // A BLOB past its nextUpdate day is stale: a newer one, perhaps with revocations, should exist.
        guard time < nextUpdate.addingTimeInterval(86_400) else {
            throw WebAuthnError(.metadataExpired, "MDS3 §3.1.6: nextUpdate \(nextUpdateText) has passed")
        }
        self.legalHeader = legalHeader
        self.number = number
        self.nextUpdate = nextUpdate
        self.entries = entries
        entryByAAGUID = byAAGUID
        entryByKeyIdentifier = byKeyIdentifier
    }

    /// The entry for an AAGUID.
    /// - Parameter aaguid: a UUID string, in either case.
    /// - Returns: the entry, or nil when the BLOB has none (or `aaguid` is not a UUID).
    public func entry(aaguid: String) -> MetadataEntry? {
        MetadataEntry.normalizedAAGUID(aaguid).flatMap { entryByAAGUID[$0] }.map { entries[$0] }
    }

    /// The entry for an attestation certificate key identifier.
    /// - Parameter attestationCertificateKeyIdentifier: hex SHA-1 of the certificate's subjectPublicKey, either case.
    /// - Returns: the entry, or nil when the BLOB has none.
    public func entry(attestationCertificateKeyIdentifier: String) -> MetadataEntry? {
        entryByKeyIdentifier[attestationCertificateKeyIdentifier.lowercased()].map { entries[$0] }
    }

    /// The entry for the authenticator of a verified registration (see ``MetadataIdentifier/init(_:)``).
    /// - Parameter registration: the verified registration.
    /// - Returns: the entry, or nil when the BLOB has none.
    public func entry(for registration: VerifiedRegistration) -> MetadataEntry? {
        switch MetadataIdentifier(registration) {
        case .aaguid(let aaguid)?: entry(aaguid: aaguid)
        case .attestationCertificateKeyIdentifier(let identifier)?: entry(attestationCertificateKeyIdentifier: identifier)
        case nil: nil
        }
    }
}
