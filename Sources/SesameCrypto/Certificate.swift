import Foundation
internal import COpenSSL

/// Owns one parsed `X509 *` and its exact DER bytes.
///
/// `@unchecked Sendable` is safe because the certificate is never mutated after parsing; the only
/// writes OpenSSL makes (its cached extension flags) are computed once under OpenSSL's own lock.
final class X509Box: @unchecked Sendable {
    let pointer: OpaquePointer
    let der: [UInt8]

    init(owning pointer: OpaquePointer, der: [UInt8]) {
        self.pointer = pointer
        self.der = der
    }

    deinit { X509_free(pointer) }
}

/// A parsed X.509 certificate; a value type, equal and hashable by its DER bytes.
public struct Certificate: Sendable, Hashable {
    /// The shared immutable owner of the `X509 *`.
    let box: X509Box

    /// Parses a DER certificate.
    /// - Parameter derEncoded: The DER bytes; the whole buffer must be one certificate.
    /// - Throws: ``CryptoError/invalidCertificate`` for malformed DER or trailing bytes.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        guard !derEncoded.isEmpty, derEncoded.count <= 1 << 20 else {
            throw CryptoError(.invalidCertificate, "certificate has \(derEncoded.count) bytes")
        }
        let (parsed, consumed) = decodeDER(derEncoded) { d2i_X509(nil, $0, $1) }
        guard let x509 = parsed else { throw .openSSL(.invalidCertificate, "d2i_X509") }
        guard consumed == derEncoded.count else {
            X509_free(x509)
            throw CryptoError(.invalidCertificate, "\(derEncoded.count - consumed) trailing bytes after certificate")
        }
        box = X509Box(owning: x509, der: derEncoded)
    }

    /// Parses a PEM file holding exactly one certificate.
    /// - Parameter pemEncoded: The PEM text ("-----BEGIN CERTIFICATE-----").
    /// - Throws: ``CryptoError/invalidCertificate`` for a malformed certificate, or
    ///   ``CryptoError/invalidInput`` when the text holds no or several PEM blocks, or a non-certificate block.
    public init(pemEncoded: String) throws(CryptoError) {
        let all = try Certificate.certificates(pemBundle: pemEncoded)
        guard all.count == 1 else {
            throw CryptoError(.invalidInput, "expected one certificate, found \(all.count)")
        }
        self = all[0]
    }

    /// Parses every certificate in a PEM bundle, in order.
    /// - Parameter pemBundle: Concatenated "CERTIFICATE" PEM blocks (text between blocks is ignored).
    /// - Returns: The certificates; at least one.
    /// - Throws: ``CryptoError/invalidInput`` for no blocks, broken PEM or a block that is not a certificate;
    ///   ``CryptoError/invalidCertificate`` for a malformed certificate.
    public static func certificates(pemBundle: String) throws(CryptoError) -> [Certificate] {
        let bio = try MemoryBIO(reading: pemBundle)
        var result: [Certificate] = []
        while true {
            var name: UnsafeMutablePointer<CChar>? = nil
            var header: UnsafeMutablePointer<CChar>? = nil
            var data: UnsafeMutablePointer<UInt8>? = nil
            var length = 0
            let ok = PEM_read_bio(bio.pointer, &name, &header, &data, &length)
            defer {
                copenssl_free(name)
                copenssl_free(header)
                copenssl_free(data)
            }
            guard ok == 1 else {
                let error = ERR_peek_last_error()
                let endOfInput = ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE
                if endOfInput && !result.isEmpty {
                    OpenSSLErrors.clear()
                    return result
                }
                throw .openSSL(.invalidInput, result.isEmpty ? "no PEM certificate found" : "PEM_read_bio")
            }
            let label = name.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
            guard label == "CERTIFICATE" else {
                throw CryptoError(.invalidInput, "unexpected PEM block \(label)")
            }
            guard let data, length > 0 else { throw CryptoError(.invalidCertificate, "empty PEM certificate") }
            result.append(try Certificate(derEncoded: Array(UnsafeBufferPointer(start: data, count: length))))
        }
    }

    /// The exact DER bytes the certificate was parsed from.
    public var derRepresentation: [UInt8] { box.der }

    /// The X.509 version: 1, 2 or 3.
    public var version: Int { Int(X509_get_version(box.pointer)) + 1 }

    /// The subject distinguished name.
    public var subject: DistinguishedName { DistinguishedName(name: X509_get_subject_name(box.pointer)) }

    /// The issuer distinguished name.
    public var issuer: DistinguishedName { DistinguishedName(name: X509_get_issuer_name(box.pointer)) }

    /// The start of the validity period.
    public var notBefore: Date { Self.date(X509_get0_notBefore(box.pointer)) }

    /// The end of the validity period.
    public var notAfter: Date { Self.date(X509_get0_notAfter(box.pointer)) }

    /// Converts an `ASN1_TIME` to a `Date` (the distant past if OpenSSL cannot read it).
    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var tm = tm()
        guard let time, ASN1_TIME_to_tm(time, &tm) == 1 else {
            OpenSSLErrors.clear()
            return .distantPast
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }

    /// The certificate's subject public key.
    /// - Returns: The key.
    /// - Throws: ``CryptoError/invalidKey`` when the key is malformed or of an unsupported type or size.
    public func publicKey() throws(CryptoError) -> PublicKey {
        guard let pkey = X509_get_pubkey(box.pointer) else { throw .openSSL(.invalidKey, "X509_get_pubkey") }
        do {
            return try PublicKey.adopting(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
    }

    /// The basicConstraints cA flag, or nil when the extension is absent (or present more than once).
    public var isCertificateAuthority: Bool? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(box.pointer, NID_basic_constraints, &critical, nil) else {
            OpenSSLErrors.clear()
            return nil
        }
        let constraints = raw.assumingMemoryBound(to: BASIC_CONSTRAINTS.self)
        defer { BASIC_CONSTRAINTS_free(constraints) }
        return constraints.pointee.ca != 0
    }

    /// The extnValue contents (the DER inside the OCTET STRING) of the extension with this dotted OID, or nil.
    ///
    /// Also nil when the OID is malformed or the extension occurs more than once.
    /// - Parameter oid: A dotted OID such as "1.3.6.1.4.1.45724.1.1.4".
    /// - Returns: The criticality flag and the extension value bytes.
    public func extensionValue(oid: String) -> (critical: Bool, value: [UInt8])? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrors.clear()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(box.pointer, object, -1)
        guard index >= 0, X509_get_ext_by_OBJ(box.pointer, object, index) < 0,
              let ext = X509_get_ext(box.pointer, index),
              let data = X509_EXTENSION_get_data(ext)
        else {
            OpenSSLErrors.clear()
            return nil
        }
        let length = Int(ASN1_STRING_length(data))
        let bytes = length > 0 ? Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: length)) : []
        return (X509_EXTENSION_get_critical(ext) == 1, bytes)
    }

    /// Compares DER bytes.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.box === rhs.box || lhs.box.der == rhs.box.der
    }

    /// Hashes the DER bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(box.der) }
}
