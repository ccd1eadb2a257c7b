import SesameCrypto

/// A SafetyNet attestation response: a JWS in compact serialization whose header carries the signing chain.
///
/// - SeeAlso: [SafetyNet: the compatibility check response](https://developer.android.com/privacy-and-security/safetynet/attestation#compat-check-response),
///   [RFC 7515 §7.1](https://www.rfc-editor.org/rfc/rfc7515#section-7.1)
struct SafetyNetResponse {
    private let jws: X5CJWS
    /// The JWS `alg` header parameter.
    let algorithm: String
    /// The `x5c` header parameter: the signing certificate first.
    let certificates: [Certificate]
    /// `ASCII(BASE64URL(header) || '.' || BASE64URL(payload))`, what the signature covers.
    let signingInput: [UInt8]
    let signature: [UInt8]
    /// The payload's `nonce`, `timestampMs` (literal text) and `ctsProfileMatch` members.
    let nonce: String?
    let timestampMs: String?
    let ctsProfileMatch: Bool?

    /// The response is not a JWS of the expected shape; the reason is for logs only.
    struct Failure: Error {
        let reason: String
    }

    /// Parses the UTF-8 JWS compact serialization.
    /// - Throws: ``Failure`` for anything but three base64url parts, JSON objects with a string `alg` and an `x5c`
    ///   array of base64 DER certificates.
    init(compactSerialization bytes: [UInt8]) throws(Failure) {
        let jws: X5CJWS
        do { jws = try X5CJWS(compactSerialization: bytes) } catch { throw Failure(reason: error.reason) }
        guard let payload = JSONObjectMembers(jws.payload) else { throw Failure(reason: "JWS payload is not one JSON object") }
        self.jws = jws
        algorithm = jws.algorithm
        certificates = jws.certificates
        signingInput = jws.signingInput
        signature = jws.signature
        nonce = payload.string("nonce")
        timestampMs = payload.number("timestampMs")
        ctsProfileMatch = payload.bool("ctsProfileMatch")
    }

    /// Whether the signature verifies with the first certificate's key (RS256 or ES256).
    func isSignatureValid() -> Bool { jws.isSignatureValid() }
}
