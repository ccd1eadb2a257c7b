import SesameCrypto

/// Reads the big-endian TPM 2.0 wire types (TPMv2 Part 2) from a byte slice, refusing to read past its end.
struct TPMReader {
    /// The structure is shorter or longer than its fields; the reason is for logs only.
    struct Failure: Error {
        let reason: String
    }

    private var rest: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { rest = bytes[...] }
    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    /// The bytes not read yet.
    var remaining: ArraySlice<UInt8> { rest }

    mutating func bytes(_ count: Int, _ field: String) throws(Failure) -> ArraySlice<UInt8> {
        guard count <= rest.count else { throw Failure(reason: "\(field) is truncated") }
        let value = rest.prefix(count)
        rest = rest.dropFirst(count)
        return value
    }

    mutating func uint16(_ field: String) throws(Failure) -> UInt16 {
        try bytes(2, field).reduce(0) { $0 << 8 | UInt16($1) }
    }

    mutating func uint32(_ field: String) throws(Failure) -> UInt32 {
        try bytes(4, field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A TPM2B_*: a UINT16 size, then that many bytes.
    mutating func sized(_ field: String) throws(Failure) -> [UInt8] {
        let size = Int(try uint16("\(field).size"))
        return Array(try bytes(size, field))
    }

    /// Fails unless every byte has been read.
    func finish(_ structure: String) throws(Failure) {
        guard rest.isEmpty else { throw Failure(reason: "\(rest.count) bytes after the end of \(structure)") }
    }
}

/// TPM algorithm identifiers (TPM_ALG_ID) and constants used by WebAuthn §8.3.
enum TPMConstant {
    static let algRSA: UInt16 = 0x0001
    static let algSHA1: UInt16 = 0x0004
    static let algSHA256: UInt16 = 0x000B
    static let algSHA384: UInt16 = 0x000C
    static let algSHA512: UInt16 = 0x000D
    static let algNull: UInt16 = 0x0010
    static let algECDAA: UInt16 = 0x001A
    static let algECC: UInt16 = 0x0023
    /// TPM_GENERATED_VALUE: 0xFF 'T' 'C' 'G'.
    static let generatedValue: UInt32 = 0xFF54_4347
    /// TPM_ST_ATTEST_CERTIFY.
    static let attestCertify: UInt16 = 0x8017

    /// The digest a TPM name algorithm stands for, or nil for one Sesame does not support.
    static func digest(nameAlg: UInt16) -> (([UInt8]) -> [UInt8])? {
        switch nameAlg {
        case algSHA1: Digest.sha1
        case algSHA256: Digest.sha256
        case algSHA384: Digest.sha384
        case algSHA512: Digest.sha512
        default: nil
        }
    }
}

/// A TPMT_PUBLIC (TPMv2 Part 2 §12.2.4): the public area of an RSA or ECC key.
struct TPMTPublic {
    /// The key that `parameters` and `unique` describe.
    enum Key {
        /// RSA: modulus and exponent (an exponent of 0 in the structure means 65537).
        case rsa(modulus: [UInt8], exponent: UInt32)
        /// ECC: the TPM_ECC_CURVE and the point's coordinates.
        case ecc(curveID: UInt16, x: [UInt8], y: [UInt8])
    }

    /// TPMI_ALG_HASH used to compute the object's Name.
    let nameAlg: UInt16
    let key: Key

    /// Parses a TPMT_PUBLIC that fills `bytes`.
    /// - Throws: ``TPMReader/Failure`` for a truncated structure, trailing bytes or a type other than RSA and ECC.
    init(bytes: [UInt8]) throws(TPMReader.Failure) {
        var reader = TPMReader(bytes)
        let type = try reader.uint16("type")
        nameAlg = try reader.uint16("nameAlg")
        _ = try reader.uint32("objectAttributes")
        _ = try reader.sized("authPolicy")
        // parameters.symmetric: TPMT_SYM_DEF_OBJECT; keyBits and mode follow unless the algorithm is TPM_ALG_NULL.
        if try reader.uint16("symmetric.algorithm") != TPMConstant.algNull { _ = try reader.bytes(4, "symmetric") }
        switch type {
        case TPMConstant.algRSA:
            // TPMS_RSA_PARMS: scheme (TPMT_RSA_SCHEME), keyBits, exponent.
            if try reader.uint16("scheme") != TPMConstant.algNull { _ = try reader.uint16("scheme.hashAlg") }
            _ = try reader.uint16("keyBits")
            let exponent = try reader.uint32("exponent")
            let modulus = try reader.sized("unique.rsa")
            key = .rsa(modulus: modulus, exponent: exponent == 0 ? 65537 : exponent)
        case TPMConstant.algECC:
            // TPMS_ECC_PARMS: scheme (TPMT_ECC_SCHEME; ECDAA adds a count), curveID, kdf (TPMT_KDF_SCHEME).
            let scheme = try reader.uint16("scheme")
            if scheme != TPMConstant.algNull { _ = try reader.uint16("scheme.hashAlg") }
            if scheme == TPMConstant.algECDAA { _ = try reader.uint16("scheme.count") }
            let curveID = try reader.uint16("curveID")
            if try reader.uint16("kdf") != TPMConstant.algNull { _ = try reader.uint16("kdf.hashAlg") }
            let x = try reader.sized("unique.ecc.x")
            let y = try reader.sized("unique.ecc.y")
            key = .ecc(curveID: curveID, x: x, y: y)
        default:
            throw TPMReader.Failure(reason: "type 0x\(String(type, radix: 16)) is neither RSA nor ECC")
        }
        try reader.finish("pubArea")
    }

    /// The public key described, or nil when its curve, size or point is not one Sesame supports.
    func publicKey() -> PublicKey? {
        switch key {
        case .rsa(let modulus, let exponent):
            let e = withUnsafeBytes(of: exponent.bigEndian) { Array($0) }
            return try? PublicKey(rsaModulus: modulus, publicExponent: Array(e.drop { $0 == 0 }))
        case .ecc(let curveID, let x, let y):
            let curves: [UInt16: EllipticCurve] = [0x0003: .p256, 0x0004: .p384, 0x0005: .p521]
            guard let curve = curves[curveID] else { return nil }
            let size = curve.coordinateByteCount
            guard x.count <= size, y.count <= size else { return nil }
            let pad = { (c: [UInt8]) in [UInt8](repeating: 0, count: size - c.count) + c }
            return try? PublicKey(ellipticCurve: curve, x: pad(x), y: pad(y))
        }
    }
}

/// A TPMS_ATTEST (TPMv2 Part 2 §10.12.8): what the TPM signed.
struct TPMSAttest {
    let magic: UInt32
    let type: UInt16
    let extraData: [UInt8]
    /// The `attested` union, unparsed; ``certifiedName()`` reads it when `type` is TPM_ST_ATTEST_CERTIFY.
    let attested: ArraySlice<UInt8>

    /// Parses the fixed part of a TPMS_ATTEST.
    /// - Throws: ``TPMReader/Failure`` for a truncated structure.
    init(bytes: [UInt8]) throws(TPMReader.Failure) {
        var reader = TPMReader(bytes)
        magic = try reader.uint32("magic")
        type = try reader.uint16("type")
        _ = try reader.sized("qualifiedSigner")
        extraData = try reader.sized("extraData")
        // clockInfo (TPMS_CLOCK_INFO: clock, resetCount, restartCount, safe) and firmwareVersion are ignored.
        _ = try reader.bytes(8 + 4 + 4 + 1, "clockInfo")
        _ = try reader.bytes(8, "firmwareVersion")
        attested = reader.remaining
    }

    /// The `name` of `attested` read as TPMS_CERTIFY_INFO (§10.12.3), which must fill the rest of the structure.
    /// - Throws: ``TPMReader/Failure`` for a truncated structure or trailing bytes.
    func certifiedName() throws(TPMReader.Failure) -> [UInt8] {
        var reader = TPMReader(attested)
        let name = try reader.sized("attested.name")
        _ = try reader.sized("attested.qualifiedName")
        try reader.finish("certInfo")
        return name
    }
}
