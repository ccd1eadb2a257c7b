import SesameCrypto

/// A SafetyNet attestation response: a JWS in compact serialization whose header carries the signing chain.
///
/// - SeeAlso: [SafetyNet: the compatibility check response](https://developer.android.com/privacy-and-security/safetynet/attestation#compat-check-response),
///   [RFC 7515 §7.1](https://www.rfc-editor.org/rfc/rfc7515#section-7.1)
struct SafetyNetResponse {
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
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Failure(reason: "JWS has \(parts.count) parts, not 3") }
        func decode(_ part: ArraySlice<UInt8>, _ name: String) throws(Failure) -> [UInt8] {
            do { return try Base64URL.decode(String(decoding: part, as: UTF8.self)) } catch {
                throw Failure(reason: "JWS \(name) is not base64url")
            }
        }
        func object(_ part: ArraySlice<UInt8>, _ name: String) throws(Failure) -> JSONObjectMembers {
            guard let members = JSONObjectMembers(try decode(part, name)) else { throw Failure(reason: "JWS \(name) is not one JSON object") }
            return members
        }
        let header = try object(parts[0], "header")
        let payload = try object(parts[1], "payload")
        signature = try decode(parts[2], "signature")
        signingInput = Array(bytes[..<parts[1].endIndex])
        guard let alg = header.string("alg") else { throw Failure(reason: "JWS header has no string alg") }
        guard let chain = header.strings("x5c"), !chain.isEmpty else {
            throw Failure(reason: "JWS header has no x5c array of strings")
        }
        var certificates: [Certificate] = []
        for item in chain {
            do { certificates.append(try Certificate(derEncoded: Base64URL.decode(item))) } catch {
                throw Failure(reason: "JWS x5c holds something that is not a base64 DER certificate")
            }
        }
        algorithm = alg
        self.certificates = certificates
        nonce = payload.string("nonce")
        timestampMs = payload.number("timestampMs")
        ctsProfileMatch = payload.bool("ctsProfileMatch")
    }

    /// Whether the signature verifies with the first certificate's key (RS256 or ES256).
    func isSignatureValid() -> Bool {
        guard let key = try? certificates[0].publicKey() else { return false }
        switch algorithm {
        case "RS256":
            return key.isValidSignature(signature, for: signingInput, algorithm: .rsaPKCS1v15SHA256)
        case "ES256":
            guard let der = try? ECDSASignature.derRepresentation(raw: signature, curve: .p256) else { return false }
            return key.isValidSignature(der, for: signingInput, algorithm: .ecdsaSHA256)
        default:
            return false
        }
    }
}
