import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// Builds a `tpm` attestation: pubArea for the credential key, certInfo certifying it, signed by an AIK whose
/// certificate meets §8.3.1. Every field can be changed to break one check.
struct TPMBuilder: Sendable {
    /// The AIK: a P-256 key signing with ES256, or the RSA test key with RS256.
    enum AIK: Sendable {
        case p256(PrivateKey)
        case rsa(TestRSAKey)
    }

    var aik: AIK = .p256(PrivateKey.generate(.p256))
    var alg: Int64 = -7
    var ver: CBORValue = .textString("2.0")
    var magic: UInt32 = 0xFF54_4347
    var type: UInt16 = 0x8017
    var nameAlg: UInt16 = 0x000B
    /// The hash extraData carries; nil: the one of alg.
    var extraDataHash: (@Sendable ([UInt8]) -> [UInt8])? = nil
    /// Replaces the pubArea; nil: the credential key's.
    var pubArea: [UInt8]? = nil
    /// Replaces the certified name; nil: the pubArea's Name.
    var name: [UInt8]? = nil
    var certInfoSuffix: [UInt8] = []
    var signsOtherData = false
    var includeX5C = true
    // The AIK certificate.
    var aikVersion = 3
    var aikSubject = DER.sequence()  // an empty Name
    var aikExtensions: [TestCertificateExtension] = TPMBuilder.aikExtensions()

    static let tpmAttributes: [[(oid: String, value: String)]] = [[
        ("2.23.133.2.1", "id:FFFFF1D0"), ("2.23.133.2.2", "Sesame Test TPM"), ("2.23.133.2.3", "id:00020000"),
    ]]

    /// §8.3.1's extensions, with a changed SAN, EKU or basic constraints when asked.
    static func aikExtensions(san: TestCertificateExtension? = .subjectAlternativeName(critical: true, directoryNames: [tpmAttributes]),
                              ekus: [String]? = ["2.23.133.8.3"], ca: Bool = false,
                              aaguid: [UInt8]? = nil) -> [TestCertificateExtension] {
        var extensions: [TestCertificateExtension] = [.basicConstraints(ca: ca)]
        if let san { extensions.append(san) }
        if let ekus { extensions.append(.extendedKeyUsage(ekus)) }
        if let aaguid { extensions.append(.aaguid(aaguid)) }
        return extensions
    }

    /// TPMT_PUBLIC of an ECC P-256 key.
    static func eccPubArea(x: [UInt8], y: [UInt8], nameAlg: UInt16 = 0x000B, curveID: UInt16 = 0x0003) -> [UInt8] {
        u16(0x0023) + u16(nameAlg) + u32(0x0006_0472) + u16(0) + u16(0x0010) + u16(0x0010) + u16(curveID) + u16(0x0010)
            + u16(UInt16(x.count)) + x + u16(UInt16(y.count)) + y
    }

    /// TPMT_PUBLIC of an RSA key with exponent 65537 written as 0.
    static func rsaPubArea(modulus: [UInt8], nameAlg: UInt16 = 0x000B) -> [UInt8] {
        u16(0x0001) + u16(nameAlg) + u32(0x0006_0472) + u16(0) + u16(0x0010) + u16(0x0010) + u16(2048) + u32(0)
            + u16(UInt16(modulus.count)) + modulus
    }

    static func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    func defaultPubArea(_ fixture: CeremonyFixture) -> [UInt8] {
        if let rsa = fixture.credentialRSAKey { return Self.rsaPubArea(modulus: rsa.modulus, nameAlg: nameAlg) }
        return Self.eccPubArea(x: fixture.credentialPoint.x, y: fixture.credentialPoint.y, nameAlg: nameAlg)
    }

    func attestation(_ fixture: CeremonyFixture) -> CeremonyFixture.Attestation {
        let pubArea = self.pubArea ?? defaultPubArea(fixture)
        let build = self
        let aikPublic: PublicKey = switch aik {
        case .p256(let key): key.publicKey
        case .rsa(let key): key.publicKey
        }
        let aikCert = TestPKI.intermediate.issue(subject: aikSubject, key: aikPublic, extensions: aikExtensions, version: aikVersion)
        return .built(format: "tpm") { authData, clientDataHash in
            let attToBeSigned = authData + clientDataHash
            let hash = build.extraDataHash ?? (build.alg == -65535 ? Digest.sha1 : Digest.sha256)
            let extraData = hash(attToBeSigned)
            let nameDigest: [UInt8] = switch build.nameAlg {
            case 0x0004: Digest.sha1(pubArea)
            case 0x000C: Digest.sha384(pubArea)
            default: Digest.sha256(pubArea)
            }
            let name = build.name ?? Self.u16(build.nameAlg) + nameDigest
            var certInfo = Self.u32(build.magic) + Self.u16(build.type) + Self.u16(0)
            certInfo += Self.u16(UInt16(extraData.count)) + extraData
            certInfo += [UInt8](repeating: 0x11, count: 17) + [UInt8](repeating: 0x22, count: 8)
            certInfo += Self.u16(UInt16(name.count)) + name + Self.u16(0) + build.certInfoSuffix
            let signed = build.signsOtherData ? attToBeSigned : certInfo
            let sig: [UInt8] = switch build.aik {
            case .p256(let key): key.signature(for: signed)
            case .rsa(let key): key.signature(for: signed, scheme: build.alg == -65535 ? .pkcs1SHA1 : .pkcs1SHA256)
            }
            var entries: [(String, CBORValue)] = [("ver", build.ver), ("alg", .integer(build.alg))]
            if build.includeX5C {
                entries.append(("x5c", .array([.byteString(aikCert.derRepresentation),
                                               .byteString(TestPKI.intermediate.certificate.derRepresentation)])))
            }
            entries += [("sig", .byteString(sig)), ("certInfo", .byteString(certInfo)), ("pubArea", .byteString(pubArea))]
            return .textMap(entries)
        }
    }

    func check(_ fixture: CeremonyFixture = CeremonyFixture(), _ change: (inout AttestationCheck) -> Void = { _ in }) -> AttestationCheck {
        var fixture = fixture
        fixture.attestation = attestation(fixture)
        var check = AttestationCheck(fixture: fixture)
        change(&check)
        return check
    }
}

extension CeremonyFixture {
    /// The RSA test key when the fixture attests it instead of `credentialKey`.
    var credentialRSAKey: TestRSAKey? {
        credentialCOSEKey == nil ? nil : TestRSAKey.shared
    }

    /// A fixture whose attested credential is the shared RSA test key under `algorithm`.
    static func rsa(_ algorithm: COSEAlgorithmIdentifier) -> CeremonyFixture {
        var fixture = CeremonyFixture()
        fixture.credentialCOSEKey = TestRSAKey.shared.coseKey(algorithm: algorithm)
        return fixture
    }
}

/// §8.3: the tpm format, accepted for ECC and RSA keys, then broken one step at a time.
@Suite struct TPMAttestationTests {
    @Test("accepts an ECC P-256 credential certified by an ES256 AIK as AttCA, chain judged at ceremony time")
    func acceptsECC() throws {
        let result = try TPMBuilder().check { $0.anchors = ["tpm": [TestPKI.root.certificate]] }.verify()
        #expect(result.format == "tpm")
        #expect(result.attestationType == .attCA)
        #expect(result.attestationTrustPath.count == 2)
        TPMBuilder().check { $0.anchors = ["tpm": [TestPKI.otherRoot.certificate]] }.expectRejection(.untrustedAttestation, "§7.1 step 23")
    }

    @Test("accepts an RSA credential certified by an RSA AIK with RS256 and RS1, and names with SHA-1 or SHA-384")
    func acceptsRSA() throws {
        let rsa = TPMBuilder(aik: .rsa(TestRSAKey.shared), alg: -257)
        #expect(try rsa.check(.rsa(.rs256)).verify().attestationType == .attCA)
        #expect(try rsa.check(.rsa(.ps384)).verify().publicKey.algorithm == .ps384)
        var legacy = rsa
        legacy.alg = -65535
        legacy.nameAlg = 0x0004
        #expect(try legacy.check(.rsa(.rs256)).verify().attestationType == .attCA)
        #expect(try TPMBuilder(nameAlg: 0x000C).check().verify().attestationType == .attCA)
    }

    @Test("step 1: ver not 2.0; alg, sig, certInfo or pubArea missing; structures truncated, padded or of another type")
    func syntax() {
        TPMBuilder(ver: .textString("1.2")).check().expectRejection(.malformedAttestationStatement, "§8.3 step 1")
        TPMBuilder(ver: .integer(2)).check().expectRejection(.malformedAttestationStatement, "§8.3 step 1")
        for missing in ["alg", "sig", "certInfo", "pubArea"] {
            var fixture = CeremonyFixture()
            guard case .built(_, let build) = TPMBuilder().attestation(fixture) else { return }
            fixture.attestation = .built(format: "tpm") { authData, hash in
                .map((build(authData, hash).mapEntries ?? []).filter { $0.key != .textString(missing) })
            }
            AttestationCheck(fixture: fixture).expectRejection(.malformedAttestationStatement, "§8.3 step 1")
        }
        let fixture = CeremonyFixture()
        let good = TPMBuilder().defaultPubArea(fixture)
        for bad in [Array(good.dropLast()), good + [0], [UInt8](good.prefix(9)), [0x00, 0x08] + good.dropFirst(2), []] {
            TPMBuilder(pubArea: bad).check(fixture).expectRejection(.malformedAttestationStatement, "§8.3 step 1")
        }
        // A symmetric algorithm other than NULL carries keyBits and mode, which this (ECC) structure lacks: the
        // fields shift and the last coordinate no longer fits.
        let symmetric = Array(good.prefix(10)) + [0x00, 0x06] + Array(good[12..<20]) + Array(repeating: 0, count: 34)
        TPMBuilder(pubArea: symmetric).check(fixture).expectRejection(.malformedAttestationStatement, "§8.3 step 1")
    }

    @Test("step 2: pubArea describes another key, another curve, or an RSA key for an EC credential")
    func pubAreaKey() {
        let fixture = CeremonyFixture()
        let other = CeremonyFixture()
        TPMBuilder(pubArea: TPMBuilder.eccPubArea(x: other.credentialPoint.x, y: other.credentialPoint.y)).check(fixture)
            .expectRejection(.attestationKeyMismatch, "§8.3 step 2")
        TPMBuilder(pubArea: TPMBuilder.eccPubArea(x: fixture.credentialPoint.x, y: fixture.credentialPoint.y, curveID: 0x0004))
            .check(fixture).expectRejection(.attestationKeyMismatch, "§8.3 step 2")
        TPMBuilder(pubArea: TPMBuilder.rsaPubArea(modulus: TestRSAKey.shared.modulus)).check(fixture)
            .expectRejection(.attestationKeyMismatch, "§8.3 step 2")
        var modulus = TestRSAKey.shared.modulus
        modulus[modulus.count - 1] ^= 0x02
        TPMBuilder(aik: .rsa(TestRSAKey.shared), alg: -257, pubArea: TPMBuilder.rsaPubArea(modulus: modulus)).check(.rsa(.rs256))
            .expectRejection(.attestationKeyMismatch, "§8.3 step 2")
    }

    @Test("step 4: x5c missing; sig over other data; an alg without a TPM hash")
    func integrity() {
        TPMBuilder(includeX5C: false).check().expectRejection(.malformedAttestationStatement, "§8.3 step 4")
        TPMBuilder(signsOtherData: true).check().expectRejection(.invalidAttestationSignature, "§8.3 step 4")
        TPMBuilder(alg: -257).check().expectRejection(.invalidAttestationSignature, "§8.3 step 4")
        TPMBuilder(alg: -8).check().expectRejection(.unsupportedAlgorithm, "§8.3 step 4")
    }

    @Test("§8.3.1: AIK certificate version, subject, SAN, EKU, basic constraints and AAGUID")
    func certificateRequirements() {
        let tpm = TPMBuilder.tpmAttributes[0]
        let changes: [(String, (inout TPMBuilder) -> Void)] = [
            ("version 1", { $0.aikVersion = 1 }),
            ("a subject", { $0.aikSubject = DER.name([("2.5.4.3", "AIK")]) }),
            ("no SAN", { $0.aikExtensions = TPMBuilder.aikExtensions(san: nil) }),
            ("a SAN not critical", { $0.aikExtensions = TPMBuilder.aikExtensions(san: .subjectAlternativeName(directoryNames: [[tpm]])) }),
            ("a SAN with a dNSName only", {
                $0.aikExtensions = TPMBuilder.aikExtensions(san: .subjectAlternativeName(critical: true, dnsNames: ["tpm.example"]))
            }),
            ("no tpmModel", { $0.aikExtensions = TPMBuilder.aikExtensions(san: .subjectAlternativeName(
                critical: true, directoryNames: [[tpm.filter { $0.oid != "2.23.133.2.2" }]])) }),
            ("an empty tpmVersion", { $0.aikExtensions = TPMBuilder.aikExtensions(san: .subjectAlternativeName(
                critical: true, directoryNames: [[tpm.map { $0.oid == "2.23.133.2.3" ? ($0.oid, "") : $0 }]])) }),
            ("tpmModel twice", { $0.aikExtensions = TPMBuilder.aikExtensions(san: .subjectAlternativeName(
                critical: true, directoryNames: [[tpm + [("2.23.133.2.2", "Other")]]])) }),
            ("a malformed SAN", { $0.aikExtensions = TPMBuilder.aikExtensions(san: TestCertificateExtension(
                oid: "2.5.29.17", critical: true, value: DER.sequence(DER.context(4, DER.octetString([1]))))) }),
            ("no EKU", { $0.aikExtensions = TPMBuilder.aikExtensions(ekus: nil) }),
            ("another EKU", { $0.aikExtensions = TPMBuilder.aikExtensions(ekus: ["1.3.6.1.5.5.7.3.2"]) }),
            ("CA true", { $0.aikExtensions = TPMBuilder.aikExtensions(ca: true) }),
            ("another AAGUID", { $0.aikExtensions = TPMBuilder.aikExtensions(aaguid: Array(repeating: 9, count: 16)) }),
        ]
        for (label, change) in changes {
            var builder = TPMBuilder()
            change(&builder)
            let error = #expect(throws: WebAuthnError.self, "\(label)") { try builder.check().verify() }
            #expect(error?.code == .invalidAttestationCertificate, "\(label): \(error.map(String.init(reflecting:)) ?? "")")
            #expect(error?.detail.contains("§8.3.1") == true, "\(label)")
        }
        // The AAGUID extension matching authData, with a multi-valued RDN as in the W3C vector, passes.
        var fixture = CeremonyFixture()
        fixture.aaguid = Array(repeating: 0x42, count: 16)
        #expect(throws: Never.self) { try TPMBuilder(aikExtensions: TPMBuilder.aikExtensions(aaguid: fixture.aaguid)).check(fixture).verify() }
    }

    @Test("step 5: magic, type, extraData, name and nameAlg")
    func certInfo() {
        TPMBuilder(magic: 0xFF54_4348).check().expectRejection(.invalidTPMCertInfo, "§8.3 step 5")
        TPMBuilder(type: 0x8018).check().expectRejection(.invalidTPMCertInfo, "§8.3 step 5")
        TPMBuilder(extraDataHash: Digest.sha1).check().expectRejection(.attestationNonceMismatch, "§8.3 step 5")
        TPMBuilder(extraDataHash: { Digest.sha256($0.dropLast()) }).check().expectRejection(.attestationNonceMismatch, "§8.3 step 5")
        let fixture = CeremonyFixture()
        var otherName = TPMBuilder.u16(0x000B) + Digest.sha256(TPMBuilder().defaultPubArea(fixture))
        otherName[5] ^= 1
        TPMBuilder(name: otherName).check(fixture).expectRejection(.invalidTPMCertInfo, "§8.3 step 5")
        TPMBuilder(name: [0x00, 0x04] + Digest.sha256(TPMBuilder().defaultPubArea(fixture))).check(fixture)
            .expectRejection(.invalidTPMCertInfo, "§8.3 step 5")
        TPMBuilder(nameAlg: 0x0012).check().expectRejection(.invalidTPMCertInfo, "§8.3 step 5")
        TPMBuilder(certInfoSuffix: [0]).check().expectRejection(.malformedAttestationStatement, "§8.3 step 5")
    }

    @Test("a truncated certInfo is refused before anything is verified")
    func truncatedCertInfo() {
        var fixture = CeremonyFixture()
        guard case .built(_, let build) = TPMBuilder().attestation(fixture) else { return }
        fixture.attestation = .built(format: "tpm") { authData, hash in
            .map((build(authData, hash).mapEntries ?? []).map {
                $0.key == .textString("certInfo") ? CBORMapEntry($0.key, .byteString(Array(($0.value.bytes ?? []).prefix(20)))) : $0
            })
        }
        AttestationCheck(fixture: fixture).expectRejection(.malformedAttestationStatement, "§8.3 step 1")
    }
}
