import COpenSSL
import SesameCrypto
import SesameTestSupport
import WebAuthn

/// Assertion verification through the whole core, against the bare OpenSSL verification it contains.
enum CoreBenchmarks {
    /// One assertion ready to verify: what a server holds after decoding the request's JSON and loading the
    /// credential record, that is byte strings only.
    struct Assertion {
        let credential: AuthenticationCredential
        let storedPublicKey: [UInt8]
        let expectations: AuthenticationExpectations
        let ceiling: RawVerifier
        /// The credential record with its key parsed once, as a server's key cache holds it.
        let record: CredentialRecord

        init(credential: AuthenticationCredential, storedPublicKey: [UInt8], expectations: AuthenticationExpectations,
             ceiling: RawVerifier) {
            self.credential = credential
            self.storedPublicKey = storedPublicKey
            self.expectations = expectations
            self.ceiling = ceiling
            record = CredentialRecord(id: credential.rawID, publicKey: try! COSEKey(cborEncoded: storedPublicKey),
                                      signCount: 0, backupEligible: false)
        }

        /// The full core: parse authenticator data and client data, run every §7.2 step, verify the signature.
        func verifyThroughCore() {
            _ = try! AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
        }

        /// The same, parsing the stored COSE_Key into an OpenSSL key first (no key cache).
        func verifyThroughCoreWithKeyParse() {
            let record = CredentialRecord(id: credential.rawID, publicKey: try! COSEKey(cborEncoded: storedPublicKey),
                                          signCount: 0, backupEligible: false)
            _ = try! AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
        }

        /// The ceiling: the same signature over the same bytes, straight through OpenSSL.
        func verifyRaw() {
            ceiling.verify(credential.signature, credential.authenticatorData + Digest.sha256(credential.clientDataJSON))
        }
    }

    static func fixtureAssertion(_ kind: PrivateKey.Kind) -> Assertion {
        var fixture = CeremonyFixture(keyKind: kind)
        fixture.signCount = 1
        let credential = fixture.authentication()
        return Assertion(
            credential: credential, storedPublicKey: fixture.coseKey,
            expectations: AuthenticationExpectations(policy: fixture.policy, challenge: fixture.challenge),
            ceiling: RawVerifier(subjectPublicKeyInfo: fixture.credentialKey.publicKey.derEncodedSubjectPublicKeyInfo,
                                 digest: kind == .p256 ? EVP_sha256() : nil))
    }

    static func rs256Assertion() -> Assertion {
        let key = RawRSAKey(bits: 2048)
        var fixture = CeremonyFixture()
        fixture.signCount = 1
        let unsigned = fixture.authentication()
        let signature = key.sign(unsigned.authenticatorData + Digest.sha256(unsigned.clientDataJSON))
        let credential = AuthenticationCredential(rawID: unsigned.rawID, clientDataJSON: unsigned.clientDataJSON,
                                                  authenticatorData: unsigned.authenticatorData, signature: signature,
                                                  userHandle: unsigned.userHandle)
        let coseKey = CBOREncoder.encode(.map([
            CBORMapEntry(.integer(1), .integer(3)), CBORMapEntry(.integer(3), .integer(-257)),
            CBORMapEntry(.integer(-1), .byteString(key.parameter("n"))), CBORMapEntry(.integer(-2), .byteString(key.parameter("e"))),
        ]))
        return Assertion(credential: credential, storedPublicKey: coseKey,
                         expectations: AuthenticationExpectations(policy: fixture.policy, challenge: fixture.challenge),
                         ceiling: RawVerifier(subjectPublicKeyInfo: key.subjectPublicKeyInfo, digest: EVP_sha256()))
    }

    static func run(seconds: Double, rounds: Int) {
        let cases: [(String, String, Assertion)] = [
            ("es256", "openssl_es256_verify", fixtureAssertion(.p256)),
            ("ed25519", "openssl_ed25519_verify", fixtureAssertion(.ed25519)),
            ("rs256", "openssl_rs256_verify", rs256Assertion()),
        ]
        for (algorithm, ceilingName, assertion) in cases {
            let warm = Measure.compare(rounds: rounds, seconds: seconds, subject: assertion.verifyThroughCore,
                                       ceiling: assertion.verifyRaw)
            report("\(algorithm)_assertion_verify", warm, ceilingName: ceilingName, target: 0.85)
            let cold = Measure.compare(rounds: rounds, seconds: seconds, subject: assertion.verifyThroughCoreWithKeyParse,
                                       ceiling: assertion.verifyRaw)
            report("\(algorithm)_assertion_verify_with_key_parse", cold, ceilingName: ceilingName, target: nil)
        }
        MLDSABenchmarks.run(seconds: seconds, rounds: rounds, es256: cases[0].2)
    }

    private static func report(_ name: String, _ result: (subject: Double, ceiling: Double), ceilingName: String, target: Double?) {
        BenchResult(name: name, value: result.subject.rounded(), unit: "ops/s", ceilingName: ceilingName,
                    ceiling: result.ceiling.rounded(), ratio: (result.subject / result.ceiling * 1000).rounded() / 1000,
                    target: target).print()
    }
}
