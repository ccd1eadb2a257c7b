import Foundation
import SesameCrypto
import WebAuthn

/// ML-DSA-65 (FIPS 204, verified in Swift) against ES256 straight through OpenSSL, measured in the same run.
///
/// The ratio says how many ML-DSA-65 verifications cost one ES256 verification's time: a post-quantum passkey's price.
/// The signature is the committed dilithium-py vector Tests/WebAuthnTests/Vectors/mldsa/authentication-mldsa65-packed.json.
enum MLDSABenchmarks {
    static let vectorFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/WebAuthnTests/Vectors/mldsa/authentication-mldsa65-packed.json").standardized

    static func run(seconds: Double, rounds: Int, es256: CoreBenchmarks.Assertion) {
        guard let data = try? Data(contentsOf: vectorFile), let vector = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            preconditionFailure("cannot read the ML-DSA-65 vector at \(vectorFile.path)")
        }
        let fields = vector.compactMapValues { $0 as? String }
        guard let credentialID = fields["credentialId"].flatMap({ try? Base64URL.decode($0) }),
              let clientDataJSON = fields["clientDataJSON"].flatMap({ try? Base64URL.decode($0) }),
              let authenticatorData = fields["authenticatorData"].flatMap({ try? Base64URL.decode($0) }),
              let signature = fields["signature"].flatMap({ try? Base64URL.decode($0) }),
              let challenge = fields["challenge"].flatMap({ try? Base64URL.decode($0) }),
              let coseKey = fields["credentialPublicKey"].flatMap({ try? Base64URL.decode($0) }),
              let rpID = fields["rpId"], let origin = fields["origin"],
              let key = try? COSEKey(cborEncoded: coseKey), let mlDSAKey = key.mlDSAPublicKey
        else {
            preconditionFailure("the ML-DSA-65 vector at \(vectorFile.path) lacks a field or its key does not parse")
        }
        let credential = AuthenticationCredential(rawID: credentialID, clientDataJSON: clientDataJSON,
                                                  authenticatorData: authenticatorData, signature: signature, userHandle: nil)
        let expectations = AuthenticationExpectations(policy: RelyingPartyPolicy(id: rpID, origins: [origin]), challenge: challenge,
                                                      identification: .identified(expectedUserHandle: nil))
        let record = CredentialRecord(id: credentialID, publicKey: key, signCount: 0, backupEligible: false)
        let signed = authenticatorData + Digest.sha256(clientDataJSON)
        precondition(mlDSAKey.isValidSignature(signature, for: signed), "the ML-DSA-65 vector does not verify")

        // The signature check alone, key already decoded (tr, Â and NTT(t1·2^d) precomputed).
        let verify = Measure.compare(rounds: rounds, seconds: seconds, subject: {
            precondition(mlDSAKey.isValidSignature(signature, for: signed))
        }, ceiling: es256.verifyRaw)
        report("mldsa65_verify", verify)
        // The whole core with the record's key parsed once, as a server's key cache holds it.
        let warm = Measure.compare(rounds: rounds, seconds: seconds, subject: {
            _ = try! AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
        }, ceiling: es256.verifyRaw)
        report("mldsa65_assertion_verify", warm)
        // The same, parsing the stored COSE_Key first: pkDecode, H(pk) and ExpandA's 30 SHAKE128 streams.
        let cold = Measure.compare(rounds: rounds, seconds: seconds, subject: {
            let record = CredentialRecord(id: credentialID, publicKey: try! COSEKey(cborEncoded: coseKey), signCount: 0,
                                          backupEligible: false)
            _ = try! AuthenticationVerifier.verify(credential, expectations: expectations, record: record)
        }, ceiling: es256.verifyRaw)
        report("mldsa65_assertion_verify_with_key_parse", cold)
    }

    private static func report(_ name: String, _ result: (subject: Double, ceiling: Double)) {
        BenchResult(name: name, value: result.subject.rounded(), unit: "ops/s", ceilingName: "openssl_es256_verify",
                    ceiling: result.ceiling.rounded(), ratio: (result.subject / result.ceiling * 1000).rounded() / 1000,
                    target: nil).print()
    }
}
