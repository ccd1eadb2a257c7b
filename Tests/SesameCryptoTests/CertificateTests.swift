import Foundation
import SesameCrypto
import Testing

@Suite struct CertificateTests {
    @Test func theLeafFieldsAreParsed() throws {
        let leaf = try Fixture.certificate("leaf.pem")
        #expect(leaf.version == 3)
        #expect(leaf.subject.countryName == "SE")
        #expect(leaf.subject.organizationName == "Sesame Authenticator")
        #expect(leaf.subject.organizationalUnitName == "Authenticator Attestation")
        #expect(leaf.subject.commonName == "Sesame Leaf")
        #expect(leaf.subject.attributes.map(\.oid) == ["2.5.4.6", "2.5.4.10", "2.5.4.11", "2.5.4.3"])
        #expect(leaf.subject.values(oid: "2.5.4.3") == ["Sesame Leaf"])
        #expect(leaf.subject.values(oid: "2.5.4.7").isEmpty)
        #expect(leaf.issuer.commonName == "Sesame Test Intermediate")
        #expect(leaf.issuer == (try Fixture.certificate("intermediate.pem")).subject)
        #expect(leaf.notBefore == utc(2021, 1, 1))
        #expect(leaf.notAfter == utc(2031, 1, 1))
        #expect(leaf.isCertificateAuthority == false)
        #expect(try leaf.publicKey().kind == .ellipticCurve(.p256))
    }

    @Test func theCustomExtensionValueIsTheInnerDER() throws {
        let leaf = try Fixture.certificate("leaf.pem")
        let ext = try #require(leaf.extensionValue(oid: "1.3.6.1.4.1.45724.1.1.4"))
        #expect(!ext.critical)
        #expect(ext.value == [0x04, 0x10] + [UInt8](hex: "00112233445566778899aabbccddeeff"))
        #expect(leaf.extensionValue(oid: "1.3.6.1.4.1.45724.2.1.1") == nil)
        #expect(leaf.extensionValue(oid: "not an oid") == nil)
        #expect(leaf.extensionValue(oid: "") == nil)
        let keyUsage = try #require(leaf.extensionValue(oid: "2.5.29.15"))
        #expect(keyUsage.critical)
    }

    @Test func caFlagsAndVersionsAreReported() throws {
        let root = try Fixture.certificate("root.pem")
        #expect(root.version == 3)
        #expect(root.isCertificateAuthority == true)
        #expect(root.subject == root.issuer)
        #expect(root.extensionValue(oid: "2.5.29.19")?.critical == true)
        #expect(try Fixture.certificate("intermediate.pem").isCertificateAuthority == true)
        let v1 = try Fixture.certificate("v1.pem")
        #expect(v1.version == 1)
        #expect(v1.isCertificateAuthority == nil)
        #expect(v1.extensionValue(oid: "2.5.29.19") == nil)
        #expect(v1.subject.commonName == "Sesame V1")
        #expect(v1.subject.countryName == nil)
    }

    @Test func derAndPEMGiveTheSameCertificate() throws {
        let der = try Fixture.bytes("leaf.der")
        let fromDER = try Certificate(derEncoded: der)
        let fromPEM = try Fixture.certificate("leaf.pem")
        #expect(fromDER == fromPEM)
        #expect(fromDER.hashValue == fromPEM.hashValue)
        #expect(fromPEM.derRepresentation == der)
        #expect(Set([fromDER, fromPEM, try Fixture.certificate("root.pem")]).count == 2)
    }

    @Test func trailingOrMissingBytesAreRejected() throws {
        let der = try Fixture.bytes("leaf.der")
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(derEncoded: der + [0]) }
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(derEncoded: der + der) }
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(derEncoded: Array(der.dropLast())) }
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(derEncoded: []) }
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(derEncoded: Array(repeating: 0x30, count: 40)) }
    }

    @Test func pemBundlesParseInOrder() throws {
        let bundle = try Fixture.text("leaf.pem") + "\n# comment between blocks\n" + Fixture.text("intermediate.pem") + Fixture.text("root.pem")
        let certificates = try Certificate.certificates(pemBundle: bundle)
        #expect(certificates.map(\.subject.commonName) == ["Sesame Leaf", "Sesame Test Intermediate", "Sesame Test Root"])
    }

    @Test func badPEMIsRejected() throws {
        let two = try Fixture.text("leaf.pem") + Fixture.text("root.pem")
        #expect(throws: CryptoError.invalidInput) { try Certificate(pemEncoded: two) }
        #expect(throws: CryptoError.invalidInput) { try Certificate(pemEncoded: "") }
        #expect(throws: CryptoError.invalidInput) { try Certificate.certificates(pemBundle: "no pem here") }
        #expect(throws: CryptoError.invalidInput) { try Certificate.certificates(pemBundle: Fixture.text("root.pem") + Fixture.text("es384-key.pem")) }
        let broken = try Fixture.text("leaf.pem").replacingOccurrences(of: "-----END CERTIFICATE-----", with: "")
        #expect(throws: CryptoError.invalidInput) { try Certificate(pemEncoded: broken) }
        let garbage = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"
        #expect(throws: CryptoError.invalidCertificate) { try Certificate(pemEncoded: garbage) }
    }
}

@Suite struct CertificateChainTests {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let inside = utc(2025, 6, 1)

    init() throws {
        root = try Fixture.certificate("root.pem")
        intermediate = try Fixture.certificate("intermediate.pem")
        leaf = try Fixture.certificate("leaf.pem")
    }

    @Test func aCompleteChainIsValidInsideTheValidityPeriod() throws {
        try CertificateChain.validate(leaf: leaf, intermediates: [intermediate], trustAnchors: [root], at: inside)
        try CertificateChain.validate(leaf: leaf, intermediates: [root, intermediate], trustAnchors: [root], at: utc(2030, 12, 31))
    }

    @Test func theChainIsInvalidOutsideTheLeafsValidity() {
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [intermediate], trustAnchors: [root], at: utc(2032, 1, 1))
        }
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [intermediate], trustAnchors: [root], at: utc(2020, 6, 1))
        }
    }

    @Test func anExpiredLeafIsRejectedWithTheOpenSSLReason() throws {
        let expired = try Fixture.certificate("expired-leaf.pem")
        do {
            try CertificateChain.validate(leaf: expired, intermediates: [intermediate], trustAnchors: [root], at: inside)
            Issue.record("expected a failure")
        } catch {
            #expect(error == .untrustedCertificateChain)
            #expect(error.debugDescription.contains("expired"))
            #expect(!error.description.contains("expired"))
        }
        try CertificateChain.validate(leaf: expired, intermediates: [intermediate], trustAnchors: [root], at: utc(2020, 6, 1))
    }

    @Test func aWrongAnchorIsRejected() throws {
        let other = try Fixture.certificate("other-root.pem")
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [intermediate], trustAnchors: [other], at: inside)
        }
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [intermediate], trustAnchors: [], at: inside)
        }
    }

    @Test func aMissingIntermediateIsRejected() {
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [], trustAnchors: [root], at: inside)
        }
    }

    @Test func anIntermediateMayBeTheTrustAnchor() throws {
        try CertificateChain.validate(leaf: leaf, intermediates: [], trustAnchors: [intermediate], at: inside)
        // ...but the partial chain still checks the leaf's own validity period.
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: leaf, intermediates: [], trustAnchors: [intermediate], at: utc(2031, 6, 1))
        }
    }

    @Test func aSelfSignedRootValidatesAgainstItself() throws {
        try CertificateChain.validate(leaf: root, intermediates: [], trustAnchors: [root], at: inside)
        #expect(throws: CryptoError.untrustedCertificateChain) {
            try CertificateChain.validate(leaf: root, intermediates: [], trustAnchors: [Fixture.certificate("other-root.pem")], at: inside)
        }
    }
}

@Suite struct CryptoErrorTests {
    @Test func equalityComparesTheCodeOnly() {
        #expect(CryptoError.invalidKey == CryptoError.invalidKey)
        #expect(CryptoError.invalidKey != CryptoError.invalidInput)
        #expect(CryptoError.invalidKey.code == .invalidKey)
        #expect(CryptoError.invalidKey.description == "CryptoError(invalidKey)")
    }

    @Test func theDetailAppearsOnlyInTheDebugDescription() {
        do {
            _ = try PublicKey(ed25519RawRepresentation: [1, 2, 3])
            Issue.record("expected a failure")
        } catch {
            #expect(error.description == "CryptoError(invalidKey)")
            #expect(error.debugDescription.contains("32 bytes"))
        }
    }
}
