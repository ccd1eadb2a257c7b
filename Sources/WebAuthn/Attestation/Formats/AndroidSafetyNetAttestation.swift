import Foundation
import SesameCrypto

/// The `android-safetynet` format (deprecated in Level 3): a SafetyNet response whose nonce covers the ceremony.
///
/// Following the SafetyNet documentation that §8.5 defers to, a valid response also reports `ctsProfileMatch: true`
/// and a `timestampMs` within ``AttestationOptions/safetyNetTimestampTolerance`` of the ceremony time.
///
/// - SeeAlso: [WebAuthn §8.5](https://www.w3.org/TR/webauthn-3/#sctn-android-safetynet-attestation)
enum AndroidSafetyNetAttestation: AttestationFormat {
    static let identifier = "android-safetynet"
    /// The host name the SafetyNet signing certificate is issued to.
    static let hostname = "attest.android.com"

    static func verify(statement: CBORValue, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
                       credentialPublicKey: COSEKey, context: AttestationContext) throws(WebAuthnError) -> AttestationResult {
        // §8.5 step 1: attStmt is valid CBOR of the syntax {ver: text, response: bytes}.
        guard let ver = statement["ver"]?.text, !ver.isEmpty else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.5 step 1: ver is missing or empty")
        }
        guard let responseBytes = statement["response"]?.bytes else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.5 step 1: response is missing or not bytes")
        }
        // §8.5 step 2: response is a valid SafetyNet response of version ver (only one format exists; ver is
        // reserved): a JWS in compact serialization...
        let response: SafetyNetResponse
        do { response = try SafetyNetResponse(compactSerialization: responseBytes) } catch {
            throw WebAuthnError(.malformedAttestationStatement, "§8.5 step 2: \(error.reason)")
        }
        // ...whose device passed the compatibility check...
        guard response.ctsProfileMatch == true else {
            throw WebAuthnError(.safetyNetCTSProfileMismatch, "§8.5 step 2: ctsProfileMatch is not true")
        }
        // ...and which was made for this ceremony: timestampMs within the tolerance around the ceremony time.
        guard let text = response.timestampMs, let milliseconds = Int64(text) else {
            throw WebAuthnError(.malformedAttestationStatement, "§8.5 step 2: timestampMs is not an integer")
        }
        let age = context.time.timeIntervalSince1970 - Double(milliseconds) / 1000
        guard abs(age) <= context.options.safetyNetTimestampTolerance else {
            throw WebAuthnError(.safetyNetTimestampOutOfRange, "§8.5 step 2: timestampMs is \(age) s from the ceremony")
        }
        // §8.5 step 3: nonce is the Base64 encoding of SHA-256(authenticatorData ‖ clientDataHash).
        let expectedNonce = Data(Digest.sha256(authenticatorData.rawBytes + clientDataHash)).base64EncodedString()
        guard response.nonce == expectedNonce else {
            throw WebAuthnError(.attestationNonceMismatch, "§8.5 step 3: nonce is not base64(SHA-256(authData ‖ hash))")
        }
        // §8.5 step 4: the response came from the SafetyNet service: its certificate is issued to
        // attest.android.com and the JWS signature verifies with it (the chain is judged with the trust path).
        let leaf = response.certificates[0]
        let san: SubjectAlternativeName?
        do { san = try leaf.subjectAlternativeName() } catch {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.5 step 4: subjectAltName: \(error.reason)")
        }
        guard san?.dnsNames.contains(hostname) == true || leaf.subject.commonName == hostname else {
            throw WebAuthnError(.invalidAttestationCertificate, "§8.5 step 4: certificate is not issued to \(hostname)")
        }
        guard response.isSignatureValid() else {
            throw WebAuthnError(.invalidAttestationSignature, "§8.5 step 4: JWS signature does not verify (\(response.algorithm))")
        }
        // §8.5 step 5: Basic, trust path x5c.
        return AttestationResult(type: .basic, trustPath: response.certificates)
    }
}
