import SesameCrypto
import WebAuthn

/// A P-256 public signing key as a JSON Web Key: `{"kty":"EC","crv":"P-256","x","y","kid","use":"sig","alg":"ES256"}`.
///
/// `kid` is the key's RFC 7638 thumbprint, so anyone holding the key can recompute it.
///
/// - SeeAlso: [RFC 7517 §4](https://www.rfc-editor.org/rfc/rfc7517#section-4),
///   [RFC 7518 §6.2.1](https://www.rfc-editor.org/rfc/rfc7518#section-6.2.1)
public struct JWK: Sendable, Hashable, Codable {
    /// The key type: always `EC`.
    public let kty: String
    /// The curve: always `P-256`.
    public let crv: String
    /// The unpadded base64url of the 32-byte big-endian x coordinate.
    public let x: String
    /// The unpadded base64url of the 32-byte big-endian y coordinate.
    public let y: String
    /// The key ID: the RFC 7638 thumbprint of the key.
    public let kid: String
    /// The intended use: always `sig`.
    public let use: String
    /// The algorithm: always `ES256`.
    public let alg: String

    /// The JWK for a P-256 public key, its `kid` set to the key's thumbprint.
    /// - Parameter publicKey: A P-256 key.
    /// - Throws: `invalid_argument` for any other kind of key.
    public init(publicKey: PublicKey) throws(SesameError) {
        let (x, y) = try Self.coordinates(of: publicKey)
        self.kty = "EC"
        self.crv = "P-256"
        self.x = Base64URL.encode(x)
        self.y = Base64URL.encode(y)
        self.kid = Self.thumbprint(x: self.x, y: self.y)
        self.use = "sig"
        self.alg = "ES256"
    }

    /// The RFC 7638 thumbprint of a P-256 public key: base64url(SHA-256(`{"crv":"P-256","kty":"EC","x":…,"y":…}`)).
    /// - Parameter publicKey: A P-256 key.
    /// - Returns: 43 base64url characters; used as the key's `kid`.
    /// - Throws: `invalid_argument` for any other kind of key.
    /// - SeeAlso: [RFC 7638 §3.2](https://www.rfc-editor.org/rfc/rfc7638#section-3.2)
    public static func thumbprint(of publicKey: PublicKey) throws(SesameError) -> String {
        let (x, y) = try coordinates(of: publicKey)
        return thumbprint(x: Base64URL.encode(x), y: Base64URL.encode(y))
    }

    /// The RFC 7638 thumbprint of the EC key with these base64url coordinates.
    static func thumbprint(x: String, y: String) -> String {
        // The required members in lexicographic order, no whitespace; base64url text needs no escaping.
        let canonical = #"{"crv":"P-256","kty":"EC","x":""# + x + #"","y":""# + y + #""}"#
        return Base64URL.encode(Digest.sha256(Array(canonical.utf8)))
    }

    /// The public key this JWK describes.
    /// - Returns: A P-256 key (the point is checked to be on the curve).
    /// - Throws: `invalid_argument` unless `kty` is `EC`, `crv` is `P-256`, `use` is `sig`, `alg` is `ES256`, and `x`
    ///   and `y` are unpadded base64url of 32 bytes each naming a point on the curve.
    public func publicKey() throws(SesameError) -> PublicKey {
        guard kty == "EC", crv == "P-256", use == "sig", alg == "ES256" else {
            throw SesameError(.invalidArgument, "not an ES256 signing JWK (kty \(kty), crv \(crv), use \(use), alg \(alg))")
        }
        guard let x = StrictBase64URL.decode(x), let y = StrictBase64URL.decode(y), x.count == 32, y.count == 32 else {
            throw SesameError(.invalidArgument, "JWK coordinates must be unpadded base64url of 32 bytes")
        }
        do {
            return try PublicKey(ellipticCurve: .p256, x: x, y: y)
        } catch {
            throw SesameError(.invalidArgument, "JWK point rejected: \(error.debugDescription)")
        }
    }

    /// The x and y coordinates of a P-256 key.
    private static func coordinates(of publicKey: PublicKey) throws(SesameError) -> (x: [UInt8], y: [UInt8]) {
        guard publicKey.kind == .ellipticCurve(.p256), let point = publicKey.ellipticCurvePoint else {
            throw SesameError(.invalidArgument, "only P-256 keys have ES256 JWKs")
        }
        return point
    }
}

/// A JSON Web Key Set: `{"keys":[…]}`, the document served at `/.well-known/jwks.json`.
///
/// - SeeAlso: [RFC 7517 §5](https://www.rfc-editor.org/rfc/rfc7517#section-5)
public struct JWKSet: Sendable, Hashable, Codable {
    /// The keys, in publication order.
    public let keys: [JWK]

    /// A set of JWKs.
    /// - Parameter keys: The keys; their `kid`s should be distinct.
    public init(keys: [JWK]) { self.keys = keys }

    /// The set for these public keys, each `kid` its thumbprint.
    /// - Parameter publicKeys: P-256 keys.
    /// - Throws: `invalid_argument` when a key is not P-256.
    public init(publicKeys: [PublicKey]) throws(SesameError) {
        var keys: [JWK] = []
        for publicKey in publicKeys { keys.append(try JWK(publicKey: publicKey)) }
        self.keys = keys
    }

    /// Parses a JWK Set document.
    /// - Parameter bytes: `{"keys":[…]}`, every key an ES256 P-256 signing key; unknown members are ignored.
    /// - Throws: `invalid_argument` for malformed JSON, a missing member, or a key of another kind.
    public init(jsonEncoded bytes: some Collection<UInt8>) throws(SesameError) {
        guard case .object(let document) = try JSONValue(jsonEncoded: bytes), case .array(let entries)? = document["keys"] else {
            throw SesameError(.invalidArgument, "a JWK Set is an object with a keys array")
        }
        var keys: [JWK] = []
        for entry in entries {
            guard case .object(let members) = entry else { throw SesameError(.invalidArgument, "a JWK is an object") }
            func member(_ name: String) throws(SesameError) -> String {
                guard let value = members[name]?.stringValue else { throw SesameError(.invalidArgument, "JWK lacks \(name)") }
                return value
            }
            keys.append(JWK(kty: try member("kty"), crv: try member("crv"), x: try member("x"), y: try member("y"),
                            kid: try member("kid"), use: try member("use"), alg: try member("alg")))
        }
        self.keys = keys
    }

    /// The set as compact JSON with sorted member names, ready to serve.
    public func jsonEncoded() -> [UInt8] {
        let entries: [JSONValue] = keys.map { key in
            .object(["kty": .string(key.kty), "crv": .string(key.crv), "x": .string(key.x), "y": .string(key.y),
                     "kid": .string(key.kid), "use": .string(key.use), "alg": .string(key.alg)])
        }
        do {
            return try JSONValue.object(["keys": .array(entries)]).jsonEncoded()
        } catch {
            preconditionFailure("a JSON value of strings only always encodes")
        }
    }

    /// The verification keys by `kid`, for ``ES256JWS/verify(token:keys:)``.
    /// - Throws: `invalid_argument` when a key is unusable (see ``JWK/publicKey()``) or two keys share a `kid`.
    public func publicKeys() throws(SesameError) -> [String: PublicKey] {
        var result: [String: PublicKey] = [:]
        for key in keys {
            guard result.updateValue(try key.publicKey(), forKey: key.kid) == nil else {
                throw SesameError(.invalidArgument, "two keys share kid \(key.kid)")
            }
        }
        return result
    }
}

extension JWK {
    /// Builds a JWK from its members as read; ``publicKey()`` validates them.
    init(kty: String, crv: String, x: String, y: String, kid: String, use: String, alg: String) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.kid = kid
        self.use = use
        self.alg = alg
    }
}

/// Unpadded base64url only (RFC 7515 §2): no `=`, no `+` or `/`, no whitespace, no non-zero trailing bits.
enum StrictBase64URL {
    /// The decoded bytes, or nil when `text` is not canonical unpadded base64url.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let isURLAlphabet = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
        // WebAuthn's decoder rejects impossible lengths and non-zero trailing bits.
        guard isURLAlphabet else { return nil }
        return try? Base64URL.decode(String(text))
    }
}
