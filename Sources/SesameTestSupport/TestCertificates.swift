import Foundation
import SesameCrypto

/// DER (X.690) encoders for building certificates and extensions in tests; every helper returns a whole element.
public enum DER {
    /// An element with the given identifier octet(s) and content.
    public static func element(_ identifier: [UInt8], _ content: [UInt8]) -> [UInt8] {
        identifier + length(content.count) + content
    }

    /// The definite length octets of `count`.
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    public static func sequence(_ items: [UInt8]...) -> [UInt8] { element([0x30], items.flatMap { $0 }) }
    public static func sequence(_ items: [[UInt8]]) -> [UInt8] { element([0x30], items.flatMap { $0 }) }
    public static func set(_ items: [[UInt8]]) -> [UInt8] { element([0x31], items.flatMap { $0 }) }
    public static func octetString(_ bytes: [UInt8]) -> [UInt8] { element([0x04], bytes) }
    public static func utf8String(_ text: String) -> [UInt8] { element([0x0C], Array(text.utf8)) }
    public static func ia5String(_ text: String) -> [UInt8] { element([0x16], Array(text.utf8)) }
    public static func boolean(_ value: Bool) -> [UInt8] { element([0x01], [value ? 0xFF : 0x00]) }
    public static let null: [UInt8] = [0x05, 0x00]

    /// A minimally encoded INTEGER (tag 0x02) or ENUMERATED (tag 0x0A).
    public static func integer(_ value: Int64, tag: UInt8 = 0x02) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0) {
            bytes.removeFirst()
        }
        return element([tag], bytes)
    }

    /// An OBJECT IDENTIFIER from its dotted form.
    public static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").compactMap { UInt64($0) }
        precondition(arcs.count >= 2, "OID \(dotted)")
        var content: [UInt8] = []
        for arc in [arcs[0] * 40 + arcs[1]] + arcs.dropFirst(2) {
            var digits = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                digits.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            content += digits
        }
        return element([0x06], content)
    }

    /// A context-specific tag `[number]`, explicit (constructed) by default; numbers up to 16383.
    public static func context(_ number: Int, constructed: Bool = true, _ content: [UInt8]) -> [UInt8] {
        let head: UInt8 = 0x80 | (constructed ? 0x20 : 0)
        if number < 31 { return element([head | UInt8(number)], content) }
        let identifier = number < 128 ? [head | 0x1F, UInt8(number)] : [head | 0x1F, 0x80 | UInt8(number >> 7), UInt8(number & 0x7F)]
        return element(identifier, content)
    }

    /// A Name (RDNSequence): each inner list is one RDN, its attributes as UTF8String values.
    public static func name(_ rdns: [[(oid: String, value: String)]]) -> [UInt8] {
        sequence(rdns.map { rdn in set(rdn.map { sequence(oid($0.oid), utf8String($0.value)) }) })
    }

    /// A Name of one attribute per RDN.
    public static func name(_ attributes: [(oid: String, value: String)]) -> [UInt8] { name(attributes.map { [$0] }) }

    /// UTCTime before 2050, GeneralizedTime from then on.
    static func time(_ date: Date) -> [UInt8] {
        let utc = TimeZone(secondsFromGMT: 0) ?? .current
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let year = calendar.component(.year, from: date)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = utc
        formatter.dateFormat = year < 2050 ? "yyMMddHHmmss'Z'" : "yyyyMMddHHmmss'Z'"
        return element([year < 2050 ? 0x17 : 0x18], Array(formatter.string(from: date).utf8))
    }
}

/// One X.509 v3 extension for ``TestCertificateAuthority/issue(subject:key:extensions:version:notBefore:notAfter:)``.
public struct TestCertificateExtension: Sendable {
    public var oid: String
    public var critical: Bool
    /// The DER placed inside extnValue's OCTET STRING.
    public var value: [UInt8]

    public init(oid: String, critical: Bool = false, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }

    public static func basicConstraints(ca: Bool) -> TestCertificateExtension {
        TestCertificateExtension(oid: "2.5.29.19", critical: true, value: ca ? DER.sequence(DER.boolean(true)) : DER.sequence())
    }

    /// keyUsage: keyCertSign and cRLSign for a CA, digitalSignature otherwise.
    public static func keyUsage(ca: Bool) -> TestCertificateExtension {
        TestCertificateExtension(oid: "2.5.29.15", critical: true, value: ca ? [0x03, 0x02, 0x01, 0x06] : [0x03, 0x02, 0x07, 0x80])
    }

    /// id-fido-gen-ce-aaguid: the AAGUID as an OCTET STRING.
    public static func aaguid(_ aaguid: [UInt8]) -> TestCertificateExtension {
        TestCertificateExtension(oid: "1.3.6.1.4.1.45724.1.1.4", value: DER.octetString(aaguid))
    }

    /// extKeyUsage with these key purposes.
    public static func extendedKeyUsage(_ oids: [String]) -> TestCertificateExtension {
        TestCertificateExtension(oid: "2.5.29.37", value: DER.sequence(oids.map(DER.oid)))
    }

    /// subjectAltName with dNSName, directoryName and iPAddress (4 or 16 bytes) entries.
    public static func subjectAlternativeName(critical: Bool = false, dnsNames: [String] = [],
                                              directoryNames: [[[(oid: String, value: String)]]] = [],
                                              ipAddresses: [[UInt8]] = []) -> TestCertificateExtension {
        let names = dnsNames.map { DER.context(2, constructed: false, Array($0.utf8)) }
            + directoryNames.map { DER.context(4, DER.name($0)) }
            + ipAddresses.map { DER.context(7, constructed: false, $0) }
        return TestCertificateExtension(oid: "2.5.29.17", critical: critical, value: DER.sequence(names))
    }
}

/// A certificate authority for tests: a P-256 key and its certificate, issuing ECDSA-SHA-256 certificates.
public struct TestCertificateAuthority: Sendable {
    public let key: PrivateKey
    public let certificate: Certificate
    /// The DER subject name, the issuer of what this authority signs.
    public let name: [UInt8]

    /// 2025-01-01 and 2045-01-01, the default validity of every test certificate.
    public static let defaultNotBefore = Date(timeIntervalSince1970: 1_735_689_600)
    public static let defaultNotAfter = Date(timeIntervalSince1970: 2_366_841_600)

    /// A self-signed root.
    public static func root(commonName: String = "Sesame Test Root") -> TestCertificateAuthority {
        let key = PrivateKey.generate(.p256)
        let name = DER.name([("2.5.4.6", "US"), ("2.5.4.10", "Sesame Test"), ("2.5.4.3", commonName)])
        let certificate = sign(subject: name, key: key.publicKey, issuer: name, issuerKey: key,
                               extensions: [.basicConstraints(ca: true), .keyUsage(ca: true)], version: 3,
                               notBefore: defaultNotBefore, notAfter: defaultNotAfter, serial: 1)
        return TestCertificateAuthority(key: key, certificate: certificate, name: name)
    }

    /// An intermediate CA under this one.
    public func intermediate(commonName: String = "Sesame Test Intermediate") -> TestCertificateAuthority {
        let key = PrivateKey.generate(.p256)
        let name = DER.name([("2.5.4.6", "US"), ("2.5.4.10", "Sesame Test"), ("2.5.4.3", commonName)])
        let certificate = issue(subject: name, key: key.publicKey, extensions: [.basicConstraints(ca: true), .keyUsage(ca: true)])
        return TestCertificateAuthority(key: key, certificate: certificate, name: name)
    }

    /// A certificate for `key` signed by this authority.
    /// - Parameters:
    ///   - subject: the DER subject Name (`DER.sequence()` for an empty one).
    ///   - version: 3, or 1 for a certificate without a version field and extensions.
    public func issue(subject: [UInt8], key: PublicKey, extensions: [TestCertificateExtension], version: Int = 3,
                      notBefore: Date = defaultNotBefore, notAfter: Date = defaultNotAfter) -> Certificate {
        Self.sign(subject: subject, key: key, issuer: name, issuerKey: self.key, extensions: extensions, version: version,
                  notBefore: notBefore, notAfter: notAfter, serial: Int64.random(in: 2...Int64(Int32.max)))
    }

    private static func sign(subject: [UInt8], key: PublicKey, issuer: [UInt8], issuerKey: PrivateKey,
                             extensions: [TestCertificateExtension], version: Int, notBefore: Date, notAfter: Date,
                             serial: Int64) -> Certificate {
        let algorithm = DER.sequence(DER.oid("1.2.840.10045.4.3.2"))  // ecdsa-with-SHA256
        var tbs: [[UInt8]] = []
        if version != 1 { tbs.append(DER.context(0, DER.integer(Int64(version - 1)))) }
        tbs += [DER.integer(serial), algorithm, issuer, DER.sequence(DER.time(notBefore), DER.time(notAfter)), subject,
                key.derEncodedSubjectPublicKeyInfo]
        if version == 3, !extensions.isEmpty {
            let encoded = extensions.map { ext in
                DER.sequence([DER.oid(ext.oid)] + (ext.critical ? [DER.boolean(true)] : []) + [DER.octetString(ext.value)])
            }
            tbs.append(DER.context(3, DER.sequence(encoded)))
        }
        let tbsCertificate = DER.sequence(tbs)
        let signature = issuerKey.signature(for: tbsCertificate)
        let der = DER.sequence(tbsCertificate, algorithm, DER.element([0x03], [0x00] + signature))
        do { return try Certificate(derEncoded: der) } catch {
            preconditionFailure("test certificate does not parse: \(error.debugDescription)")
        }
    }
}
