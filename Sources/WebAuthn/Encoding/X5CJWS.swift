import SesameCrypto

/// A JWS in compact serialization whose protected header carries its signing certificate chain in `x5c`: the shape of
/// a SafetyNet response and of a FIDO metadata BLOB.
///
/// Parsing checks the form only; ``isSignatureValid()`` checks the signature with the first certificate's key, and the
/// caller judges the chain.
///
/// - SeeAlso: [RFC 7515 §7.1](https://www.rfc-editor.org/rfc/rfc7515#section-7.1),
///   [RFC 7515 §4.1.6](https://www.rfc-editor.org/rfc/rfc7515#section-4.1.6)
struct X5CJWS {
    /// The header's `alg`.
    let algorithm: String
    /// The protected header's members.
    let header: JSONObjectMembers
    /// The `x5c` certificates, signing certificate first; never empty.
    let certificates: [Certificate]
    /// The decoded payload bytes.
    let payload: [UInt8]
    /// `ASCII(BASE64URL(header) || '.' || BASE64URL(payload))`, what the signature covers.
    let signingInput: [UInt8]
    let signature: [UInt8]

    /// The text is not a JWS of the expected shape; the reason is for logs only.
    struct Failure: Error {
        let reason: String
    }

    /// Parses the UTF-8 compact serialization.
    /// - Throws: ``Failure`` for anything but three base64url parts, a JSON object header with a string `alg` and an
    ///   `x5c` array of base64 DER certificates.
    init(compactSerialization bytes: [UInt8]) throws(Failure) {
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Failure(reason: "JWS has \(parts.count) parts, not 3") }
        func decode(_ part: ArraySlice<UInt8>, _ name: String) throws(Failure) -> [UInt8] {
            do { return try Base64URL.decode(String(decoding: part, as: UTF8.self)) } catch {
                throw Failure(reason: "JWS \(name) is not base64url")
            }
        }
        guard let header = JSONObjectMembers(try decode(parts[0], "header")) else {
            throw Failure(reason: "JWS header is not one JSON object")
        }
        payload = try decode(parts[1], "payload")
        signature = try decode(parts[2], "signature")
        signingInput = Array(bytes[..<parts[1].endIndex])
        guard let alg = header.string("alg") else { throw Failure(reason: "JWS header has no string alg") }
        guard let chain = header.strings("x5c"), !chain.isEmpty else {
            throw Failure(reason: "JWS header has no x5c array of strings")
        }
        var certificates: [Certificate] = []
        for item in chain {
            // RFC 7515 §4.1.6: base64 (not base64url) DER; the decoder takes either.
            do { certificates.append(try Certificate(derEncoded: Base64URL.decode(item))) } catch {
                throw Failure(reason: "JWS x5c holds something that is not a base64 DER certificate")
            }
        }
        algorithm = alg
        self.header = header
        self.certificates = certificates
    }

    /// Whether the signature verifies with the first certificate's key: RS256 (RSASSA-PKCS1-v1_5 with SHA-256) or
    /// ES256 (ECDSA P-256 with SHA-256, the signature as `R ‖ S`); any other `alg` gives `false`.
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
