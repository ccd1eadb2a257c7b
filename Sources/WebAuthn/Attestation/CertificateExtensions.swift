import SesameCrypto

/// The Subject Alternative Name entries attestation formats look at (RFC 5280 §4.2.1.6).
struct SubjectAlternativeName {
    /// One attribute of a directoryName entry.
    struct Attribute: Equatable {
        let oid: String
        let value: String
    }

    /// Whether the extension is marked critical.
    let isCritical: Bool
    /// The dNSName entries.
    let dnsNames: [String]
    /// The directoryName entries, each flattened to its attributes in order.
    let directoryNames: [[Attribute]]
}

extension Certificate {
    /// The subjectAltName extension's OID.
    static let subjectAlternativeNameOID = "2.5.29.17"
    /// The extKeyUsage extension's OID.
    static let extendedKeyUsageOID = "2.5.29.37"

    /// The parsed subjectAltName extension, or nil when the certificate has none.
    /// - Throws: ``DERReader/Failure`` when the extension is not valid DER of its syntax.
    func subjectAlternativeName() throws(DERReader.Failure) -> SubjectAlternativeName? {
        guard let ext = extensionValue(oid: Self.subjectAlternativeNameOID) else { return nil }
        var names = DERReader(try DERReader.single(.sequence, in: ext.value[...]))
        var dnsNames: [String] = []
        var directoryNames: [[SubjectAlternativeName.Attribute]] = []
        while !names.isAtEnd {
            let name = try names.read()
            switch name.tag {
            case .context(2, constructed: false):
                dnsNames.append(try DERReader.text(DERReader.Element(tag: .ia5String, content: name.content)))
            case .context(4):
                directoryNames.append(try Self.attributes(ofName: DERReader.single(.sequence, in: name.content)))
            default:
                continue  // other GeneralName forms are not used by any attestation format
            }
        }
        return SubjectAlternativeName(isCritical: ext.critical, dnsNames: dnsNames, directoryNames: directoryNames)
    }

    /// The key purposes of the extKeyUsage extension, or nil when the certificate has none.
    /// - Throws: ``DERReader/Failure`` when the extension is not a SEQUENCE OF OBJECT IDENTIFIER.
    func extendedKeyUsages() throws(DERReader.Failure) -> [String]? {
        guard let ext = extensionValue(oid: Self.extendedKeyUsageOID) else { return nil }
        var purposes = DERReader(try DERReader.single(.sequence, in: ext.value[...]))
        var oids: [String] = []
        while !purposes.isAtEnd { oids.append(try DERReader.objectIdentifier(purposes.read(.objectIdentifier))) }
        return oids
    }

    /// The attributes of an RDNSequence's content (SET OF AttributeTypeAndValue per RDN), flattened in order.
    private static func attributes(ofName content: ArraySlice<UInt8>) throws(DERReader.Failure) -> [SubjectAlternativeName.Attribute] {
        var rdns = DERReader(content)
        var attributes: [SubjectAlternativeName.Attribute] = []
        while !rdns.isAtEnd {
            var set = DERReader(try rdns.read(.set))
            while !set.isAtEnd {
                var pair = DERReader(try set.read(.sequence))
                let oid = try DERReader.objectIdentifier(pair.read(.objectIdentifier))
                let value = try DERReader.text(pair.read())
                try pair.finish()
                attributes.append(SubjectAlternativeName.Attribute(oid: oid, value: value))
            }
        }
        return attributes
    }
}
