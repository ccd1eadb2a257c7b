import Foundation
import SesameCrypto
import SesameTestSupport
import Testing
@testable import WebAuthn

/// Builds an `android-safetynet` attestation: a JWS signed by a certificate for attest.android.com.
struct SafetyNetBuilder: Sendable {
    /// The JWS signer: a P-256 key (ES256) or the RSA test key (RS256).
    enum Signer: Sendable {
        case p256(PrivateKey)
        case rsa(TestRSAKey)
    }

    var signer: Signer = .p256(PrivateKey.generate(.p256))
    var alg = "ES256"
    var hostname = "attest.android.com"
    var ver: CBORValue = .textString("23.44.13")
    /// The payload's members after `nonce` (JSON text); the default is a passing compatibility check.
    var timestamp = RegistrationTests.now
    var ctsProfileMatch = "true"
    /// The nonce; nil: base64(SHA-256(authData ‖ clientDataHash)).
    var nonce: (@Sendable (_ authData: [UInt8], _ clientDataHash: [UInt8]) -> String)? = nil
    /// Replaces the x5c header member (JSON text).
    var x5cJSON: String? = nil
    var corruptSignature = false
    /// Replaces the whole response.
    var response: [UInt8]? = nil

    func attestation() -> CeremonyFixture.Attestation {
        let build = self
        let key: PublicKey = switch signer {
        case .p256(let key): key.publicKey
        case .rsa(let key): key.publicKey
        }
        let leaf = TestPKI.intermediate.issue(
            subject: DER.name([("2.5.4.6", "US"), ("2.5.4.10", "Google LLC"), ("2.5.4.3", hostname)]), key: key,
            extensions: [.basicConstraints(ca: false), .subjectAlternativeName(dnsNames: [hostname])])
        let chain = [leaf, TestPKI.intermediate.certificate].map { "\"\(Data($0.derRepresentation).base64EncodedString())\"" }
        return .built(format: "android-safetynet") { authData, clientDataHash in
            let nonce = build.nonce?(authData, clientDataHash)
                ?? Data(Digest.sha256(authData + clientDataHash)).base64EncodedString()
            let header = #"{"alg":"\#(build.alg)","x5c":\#(build.x5cJSON ?? "[\(chain.joined(separator: ","))]")}"#
            let milliseconds = Int64(build.timestamp.timeIntervalSince1970 * 1000)
            let payload = #"{"nonce":"\#(nonce)","timestampMs":\#(milliseconds),"apkPackageName":"com.google.android.gms","#
                + #""ctsProfileMatch":\#(build.ctsProfileMatch),"basicIntegrity":true,"evaluationType":"BASIC"}"#
            let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
            var signature: [UInt8] = switch build.signer {
            case .p256(let key):
                (try? ECDSASignature.rawRepresentation(derEncoded: key.signature(for: Array(signingInput.utf8)), curve: .p256)) ?? []
            case .rsa(let key): key.signature(for: Array(signingInput.utf8), scheme: .pkcs1SHA256)
            }
            if build.corruptSignature { signature[5] ^= 0x01 }
            let jws = build.response ?? Array((signingInput + "." + Base64URL.encode(signature)).utf8)
            return .textMap([("ver", build.ver), ("response", .byteString(jws))])
        }
    }

    func check(_ change: (inout AttestationCheck) -> Void = { _ in }) -> AttestationCheck {
        var fixture = CeremonyFixture()
        fixture.attestation = attestation()
        var check = AttestationCheck(fixture: fixture)
        change(&check)
        return check
    }
}

/// §8.5: the android-safetynet format, accepted with ES256 and RS256, then broken one step at a time.
@Suite struct SafetyNetAttestationTests {
    @Test("accepts a fresh, compatible response for this ceremony as basic attestation, chain judged at ceremony time")
    func accepts() throws {
        let result = try SafetyNetBuilder().check { $0.anchors = ["android-safetynet": [TestPKI.root.certificate]] }.verify()
        #expect(result.format == "android-safetynet")
        #expect(result.attestationType == .basic)
        #expect(result.attestationTrustPath.count == 2)
        #expect(try SafetyNetBuilder(signer: .rsa(TestRSAKey.shared), alg: "RS256").check().verify().attestationType == .basic)
        SafetyNetBuilder().check { $0.anchors = ["android-safetynet": [TestPKI.otherRoot.certificate]] }
            .expectRejection(.untrustedAttestation, "§7.1 step 23")
    }

    @Test("step 1: ver missing, empty or not text; response missing")
    func syntax() {
        for ver: CBORValue in [.textString(""), .integer(1), .null] {
            SafetyNetBuilder(ver: ver).check().expectRejection(.malformedAttestationStatement, "§8.5 step 1")
        }
        var fixture = CeremonyFixture()
        fixture.attestation = .custom(format: "android-safetynet", statement: .textMap([("ver", .textString("1"))]))
        AttestationCheck(fixture: fixture).expectRejection(.malformedAttestationStatement, "§8.5 step 1")
    }

    @Test("step 2: not a JWS of three base64url JSON parts with alg and an x5c of certificates")
    func notAJWS() {
        let e30 = Base64URL.encode(Array("{}".utf8))
        for response in ["", "a.b", "a.b.c.d", "\(e30).\(e30).", "!!.\(e30).AA", "\(Base64URL.encode(Array("[1]".utf8))).\(e30).AA",
                         "\(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8))).\(e30).AA"] {
            SafetyNetBuilder(response: Array(response.utf8)).check().expectRejection(.malformedAttestationStatement, "§8.5 step 2")
        }
        for x5c in [#"[]"#, #"["AAAA"]"#, #"[1]"#, #""x""#] {
            SafetyNetBuilder(x5cJSON: x5c).check().expectRejection(.malformedAttestationStatement, "§8.5 step 2")
        }
    }

    @Test("step 2: ctsProfileMatch false or not a boolean")
    func compatibility() {
        for value in ["false", "\"true\"", "null"] {
            SafetyNetBuilder(ctsProfileMatch: value).check().expectRejection(.safetyNetCTSProfileMismatch, "§8.5 step 2")
        }
    }

    @Test("step 2: timestampMs more than 60 s before or after the ceremony; a wider tolerance accepts it")
    func timestamp() throws {
        let now = RegistrationTests.now
        for offset in [-61.0, 61, -3600, 86_400] {
            SafetyNetBuilder(timestamp: now.addingTimeInterval(offset)).check()
                .expectRejection(.safetyNetTimestampOutOfRange, "§8.5 step 2")
        }
        for offset in [-59.0, 59] { _ = try SafetyNetBuilder(timestamp: now.addingTimeInterval(offset)).check().verify() }
        _ = try SafetyNetBuilder(timestamp: now.addingTimeInterval(-600)).check { $0.options.safetyNetTimestampTolerance = 900 }.verify()
    }

    @Test("step 3: a nonce over other data, in base64url, or missing")
    func nonce() {
        let nonces: [@Sendable ([UInt8], [UInt8]) -> String] = [
            { authData, _ in Data(Digest.sha256(authData)).base64EncodedString() },
            { authData, hash in Base64URL.encode(Digest.sha256(authData + hash)) },
            { authData, hash in Data(authData + hash).base64EncodedString() },
            { _, _ in "" },
        ]
        for nonce in nonces {
            SafetyNetBuilder(nonce: nonce).check().expectRejection(.attestationNonceMismatch, "§8.5 step 3")
        }
    }

    @Test("step 4: a certificate for another host, a broken signature, or an alg it does not use")
    func origin() {
        SafetyNetBuilder(hostname: "attest.android.com.evil.example").check()
            .expectRejection(.invalidAttestationCertificate, "§8.5 step 4")
        SafetyNetBuilder(corruptSignature: true).check().expectRejection(.invalidAttestationSignature, "§8.5 step 4")
        SafetyNetBuilder(signer: .rsa(TestRSAKey.shared), alg: "RS256", corruptSignature: true).check()
            .expectRejection(.invalidAttestationSignature, "§8.5 step 4")
        for alg in ["none", "HS256", "RS256", "PS256"] {
            SafetyNetBuilder(alg: alg).check().expectRejection(.invalidAttestationSignature, "§8.5 step 4")
        }
    }
}
