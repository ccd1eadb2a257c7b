import Foundation
import SesameCrypto
import WebAuthn

/// Compact JWS tokens signed with ES256 (ECDSA P-256 with SHA-256): `base64url(header).base64url(claims).base64url(R‖S)`.
///
/// The header is exactly `{"alg":"ES256","typ":"JWT","kid":"…"}`; the claims are a JSON object written with sorted
/// member names; the signature is the raw 64-byte `R ‖ S` of RFC 7518 §3.4, never DER. Verification accepts ES256
/// only and looks the key up by `kid` in the keys the caller trusts, never in the token itself.
///
/// - SeeAlso: [RFC 7515 §7.1](https://www.rfc-editor.org/rfc/rfc7515#section-7.1),
///   [RFC 7518 §3.4](https://www.rfc-editor.org/rfc/rfc7518#section-3.4)
public enum ES256JWS {
    /// The longest token ``verify(token:keys:)`` reads, in bytes.
    public static let maximumTokenLength = 8192

    /// Signs claims into a compact JWS.
    /// - Parameters:
    ///   - claims: The payload members (`iss`, `aud`, `exp`, …); written with sorted names.
    ///   - key: A P-256 private key.
    ///   - kid: The key ID to put in the header; normally ``JWK/thumbprint(of:)`` of `key.publicKey`.
    /// - Returns: The token, three base64url parts joined by `.`.
    /// - Throws: `invalid_argument` when `key` is not P-256, `kid` is empty, or a claim is a non-finite number.
    public static func sign(claims: [String: JSONValue], key: PrivateKey, kid: String) throws(SesameError) -> String {
        guard key.kind == .p256 else { throw SesameError(.invalidArgument, "ES256 needs a P-256 key") }
        guard !kid.isEmpty else { throw SesameError(.invalidArgument, "kid is empty") }
        var header = Array(#"{"alg":"ES256","typ":"JWT","kid":"#.utf8)
        JSONValue.writeString(kid, into: &header)
        header.append(UInt8(ascii: "}"))
        let input = Base64URL.encode(header) + "." + Base64URL.encode(try JSONValue.object(claims).jsonEncoded())
        let der = key.signature(for: Array(input.utf8))
        // OpenSSL's P-256 signatures are canonical DER with r, s < n, so the conversion cannot fail.
        guard let raw = try? ECDSASignature.rawRepresentation(derEncoded: der, curve: .p256) else {
            preconditionFailure("OpenSSL produced an ECDSA signature that does not convert to R‖S")
        }
        return input + "." + Base64URL.encode(raw)
    }

    /// Signs claims with the key's thumbprint as `kid`.
    /// - Parameters:
    ///   - claims: The payload members.
    ///   - key: A P-256 private key.
    /// - Returns: The token.
    /// - Throws: `invalid_argument` as ``sign(claims:key:kid:)`` does.
    public static func sign(claims: [String: JSONValue], key: PrivateKey) throws(SesameError) -> String {
        try sign(claims: claims, key: key, kid: JWK.thumbprint(of: key.publicKey))
    }

    /// Checks a token's form and signature and returns its claims (the times and audience are not checked here).
    ///
    /// Rejected: anything but exactly three parts of unpadded base64url; a header that is not a JSON object with
    /// `alg` exactly `ES256` (so `none`, `HS256`, `RS256`, … fail), a non-empty string `kid`, `typ` absent or `JWT`,
    /// and no `crit`; a `kid` missing from `keys`; a signature that is not 64 bytes or does not verify; a payload that
    /// is not a JSON object. JSON with duplicate member names is rejected.
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - keys: The trusted P-256 verification keys by `kid` (for example ``JWKSet/publicKeys()``).
    /// - Returns: The claims.
    /// - Throws: `invalid_jwt` for every failure; `detail` says which check failed.
    public static func verify(token: String, keys: [String: PublicKey]) throws(SesameError) -> [String: JSONValue] {
        func invalid(_ detail: String) -> SesameError { SesameError(.invalidJWT, detail) }
        guard token.utf8.count <= maximumTokenLength else { throw invalid("token longer than \(maximumTokenLength) bytes") }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw invalid("a compact JWS has 3 parts, this has \(parts.count)") }
        guard let headerBytes = StrictBase64URL.decode(Substring(parts[0])),
              let payloadBytes = StrictBase64URL.decode(Substring(parts[1])),
              let signature = StrictBase64URL.decode(Substring(parts[2]))
        else { throw invalid("a part is not unpadded base64url") }

        // RFC 7515 §5.2 steps 2-4: the header is a JSON object without duplicate names.
        guard case .object(let header)? = try? JSONValue(jsonEncoded: headerBytes) else {
            throw invalid("the header is not a JSON object")
        }
        guard header["alg"] == .string("ES256") else { throw invalid("alg must be ES256") }
        guard header["typ"] == nil || header["typ"] == .string("JWT") else { throw invalid("typ must be JWT") }
        // RFC 7515 §4.1.11: no extension is understood, so any crit must fail.
        guard header["crit"] == nil else { throw invalid("crit is not supported") }
        guard case .string(let kid)? = header["kid"], !kid.isEmpty else { throw invalid("kid is missing") }
        guard let key = keys[kid] else { throw invalid("unknown kid") }
        guard key.kind == .ellipticCurve(.p256) else { throw invalid("the key for this kid is not P-256") }

        // RFC 7518 §3.4: R ‖ S, 32 bytes each; DER or any other length is refused.
        guard signature.count == 64 else { throw invalid("the signature must be 64 bytes, got \(signature.count)") }
        guard let der = try? ECDSASignature.derRepresentation(raw: signature, curve: .p256),
              key.isValidSignature(der, for: Array(parts[0]) + [UInt8(ascii: ".")] + Array(parts[1]), algorithm: .ecdsaSHA256)
        else { throw invalid("bad signature") }

        guard case .object(let claims)? = try? JSONValue(jsonEncoded: payloadBytes) else {
            throw invalid("the payload is not a JSON object")
        }
        return claims
    }

    /// Verifies a token as a partner must (§2.4): form and signature, then issuer, audience and times.
    /// - Parameters:
    ///   - token: The compact JWS.
    ///   - keys: The trusted P-256 verification keys by `kid`.
    ///   - issuer: The expected `iss`.
    ///   - audience: The expected `aud` (a string equal to it, or an array containing it).
    ///   - now: The current time.
    ///   - leeway: Allowed clock skew in seconds for `exp` and `iat`.
    /// - Returns: The claims.
    /// - Throws: `invalid_jwt` as ``verify(token:keys:)`` does, and when `iss` or `aud` differ, `exp` or `iat` is
    ///   missing or not a number, `exp + leeway ≤ now`, or `iat - leeway > now`.
    public static func verify(
        token: String, keys: [String: PublicKey], issuer: String, audience: String, now: Date, leeway: TimeInterval = 60
    ) throws(SesameError) -> [String: JSONValue] {
        let claims = try verify(token: token, keys: keys)
        guard claims["iss"] == .string(issuer) else { throw SesameError(.invalidJWT, "wrong issuer") }
        switch claims["aud"] {
        case .string(audience)?: break
        case .array(let audiences)? where audiences.contains(.string(audience)): break
        default: throw SesameError(.invalidJWT, "wrong audience")
        }
        guard let expires = claims["exp"]?.doubleValue, let issued = claims["iat"]?.doubleValue else {
            throw SesameError(.invalidJWT, "exp and iat must be numbers")
        }
        let time = now.timeIntervalSince1970
        guard expires + leeway > time else { throw SesameError(.invalidJWT, "expired") }
        guard issued - leeway <= time else { throw SesameError(.invalidJWT, "issued in the future") }
        return claims
    }
}
