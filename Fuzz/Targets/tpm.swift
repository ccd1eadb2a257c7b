// libFuzzer target `tpm`: the TPM 2.0 structures of the `tpm` attestation format, `TPMSAttest(bytes:)` (certInfo)
// with `certifiedName()`, and `TPMTPublic(bytes:)` (pubArea) with `publicKey()`. Internal API of WebAuthn, reached
// with `@testable import` (run.sh builds the library with -enable-testing). Every input goes to both parsers.
//
// Checks, for every input: parsing never crashes, and, with the sizes read here from the input bytes:
// - TPMS_ATTEST is accepted exactly when the input holds its fixed part (magic, type, qualifiedSigner, extraData,
//   clockInfo, firmwareVersion); `magic`, `type` and `extraData` are the bytes at their offsets, and `attested` is
//   the rest of the input;
// - `certifiedName()` succeeds exactly when `attested` is two TPM2B (name, qualifiedName) and nothing else, and
//   returns the first one's bytes;
// - an accepted TPMT_PUBLIC has type RSA or ECC, its key case matches the type, `nameAlg` is bytes 2-3; the RSA
//   modulus is the input's tail after its size, the exponent the four bytes before (0 read as 65537); the ECC y is
//   the tail after its size and x the TPM2B before it;
// - TPMT_PUBLIC fills its input: one byte more or one byte less is refused;
// - `publicKey()`: an ECC key's OpenSSL point is x and y left-padded to the curve's size (P-256/384/521 only), an
//   RSA key's modulus has 2048 bits or more, and either key's SubjectPublicKeyInfo parses back to the same kind.
@testable import WebAuthn
import SesameCrypto

/// Big-endian integer of `count` bytes at `offset`, or nil past the end.
private func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int? {
    guard offset >= 0, offset + count <= bytes.count else { return nil }
    return bytes[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTPM(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    checkAttest(bytes)
    checkPublic(bytes)
    return 0
}

private func checkAttest(_ bytes: [UInt8]) {
    // magic(4) type(2) qualifiedSigner(2+q) extraData(2+e) clockInfo(17) firmwareVersion(8), then attested.
    var end: Int? = nil
    if let q = bigEndian(bytes, 6, 2), let e = bigEndian(bytes, 8 + q, 2), 10 + q + e + 25 <= bytes.count {
        end = 10 + q + e + 25
    }
    let parsed = try? TPMSAttest(bytes: bytes)
    guard let attest = parsed, let end else {
        guard parsed == nil else { fatalError("TPMS_ATTEST accepted without its fixed part") }
        guard end == nil else { fatalError("TPMS_ATTEST refused although its fixed part is complete") }
        return
    }
    let q = bigEndian(bytes, 6, 2)!, e = bigEndian(bytes, 8 + q, 2)!
    guard Int(attest.magic) == bigEndian(bytes, 0, 4), Int(attest.type) == bigEndian(bytes, 4, 2) else {
        fatalError("magic or type misread")
    }
    guard attest.extraData == Array(bytes[10 + q..<10 + q + e]) else { fatalError("extraData misread") }
    guard Array(attest.attested) == Array(bytes[end...]) else { fatalError("attested is not the rest of the input") }

    // TPMS_CERTIFY_INFO: name (2+n), qualifiedName (2+m), exactly.
    let rest = Array(attest.attested)
    var name: [UInt8]? = nil
    if let n = bigEndian(rest, 0, 2), let m = bigEndian(rest, 2 + n, 2), 4 + n + m == rest.count {
        name = Array(rest[2..<2 + n])
    }
    let certified = try? attest.certifiedName()
    guard certified == name else {
        fatalError("certifiedName() is \(certified.map { "\($0.count) bytes" } ?? "refused"), expected \(name.map { "\($0.count) bytes" } ?? "refused")")
    }
}

private func checkPublic(_ bytes: [UInt8]) {
    guard let pubArea = try? TPMTPublic(bytes: bytes) else { return }
    guard (try? TPMTPublic(bytes: bytes + [0])) == nil else { fatalError("TPMT_PUBLIC accepted with a byte appended") }
    guard (try? TPMTPublic(bytes: Array(bytes.dropLast()))) == nil else { fatalError("TPMT_PUBLIC accepted a byte short") }
    guard Int(pubArea.nameAlg) == bigEndian(bytes, 2, 2) else { fatalError("nameAlg misread") }
    let type = bigEndian(bytes, 0, 2)

    func tail(_ value: [UInt8], before end: Int) -> Int? {  // the start of the TPM2B that ends at `end` and holds value
        let start = end - value.count - 2
        guard start >= 0, bigEndian(bytes, start, 2) == value.count, Array(bytes[start + 2..<end]) == value else { return nil }
        return start
    }
    switch pubArea.key {
    case .rsa(let modulus, let exponent):
        guard type == 0x0001 else { fatalError("an RSA key from type \(String(describing: type))") }
        guard let start = tail(modulus, before: bytes.count), let raw = bigEndian(bytes, start - 4, 4) else {
            fatalError("the modulus is not the input's last TPM2B")
        }
        guard Int(exponent) == (raw == 0 ? 65537 : raw) else { fatalError("exponent \(exponent) misread (bytes say \(raw))") }
    case .ecc(_, let x, let y):
        guard type == 0x0023 else { fatalError("an ECC key from type \(String(describing: type))") }
        guard let yStart = tail(y, before: bytes.count), tail(x, before: yStart) != nil else {
            fatalError("x and y are not the input's last two TPM2Bs")
        }
    }

    guard let key = pubArea.publicKey() else { return }
    switch (pubArea.key, key.kind) {
    case (.ecc(let curveID, let x, let y), .ellipticCurve(let curve)):
        let curves: [UInt16: EllipticCurve] = [0x0003: .p256, 0x0004: .p384, 0x0005: .p521]
        guard curves[curveID] == curve else {
            fatalError("curve \(curve) from TPM curve ID \(curveID)")
        }
        let size = curve.coordinateByteCount
        guard let point = key.ellipticCurvePoint, x.count <= size, y.count <= size,
              point.x == [UInt8](repeating: 0, count: size - x.count) + x,
              point.y == [UInt8](repeating: 0, count: size - y.count) + y
        else { fatalError("the OpenSSL point differs from the TPM x/y") }
    case (.rsa, .rsa(let bits)):
        guard bits >= 2048 else { fatalError("an RSA key of \(bits) bits") }
    default:
        fatalError("a \(key.kind) key from a TPMT_PUBLIC \(pubArea.key)")
    }
    guard (try? PublicKey(derEncodedSubjectPublicKeyInfo: key.derEncodedSubjectPublicKeyInfo))?.kind == key.kind else {
        fatalError("the key's SPKI does not parse back to a \(key.kind) key")
    }
}
