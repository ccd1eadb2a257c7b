// libFuzzer target `cose`: `COSEKey(cborEncoded:)` of module WebAuthn (COSE_Key parsing and the OpenSSL
// public keys it builds through SesameCrypto).
//
// Checks, for every input: parsing never crashes, and for an accepted key:
// - `cborEncoded` is exactly the input;
// - the key's algorithm is one Sesame verifies (in `COSEAlgorithmIdentifier.supported`);
// - EC2 keys: the OpenSSL point read back equals the input's x and y;
// - the key exports to a DER SubjectPublicKeyInfo that parses back to a key of the same kind;
// - AKP (ML-DSA) keys: OpenSSL holds no key, the ML-DSA key's encoding is exactly the COSE `pub`, and its
//   parameter set matches the alg;
// - verifying a fixed signature over a fixed message runs without crashing (its result is ignored).
import SesameCrypto
import WebAuthn

private let message = Array("sesame fuzz message".utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCOSE(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let key = try? COSEKey(cborEncoded: bytes) else { return 0 }

    guard key.cborEncoded == bytes else { fatalError("cborEncoded differs from the parsed bytes") }
    guard COSEAlgorithmIdentifier.supported.contains(key.algorithm) else { fatalError("accepted a key with an unsupported alg") }

    if let mlDSAKey = key.mlDSAPublicKey {
        guard key.publicKey == nil else { fatalError("an ML-DSA key also has an OpenSSL key") }
        let map = try? CBORDecoder().decode(bytes)
        guard mlDSAKey.rawRepresentation == map?[-1]?.bytes else { fatalError("ML-DSA key differs from the COSE pub") }
        guard key.algorithm.rawValue == [MLDSAParameterSet.mlDSA44: -48, .mlDSA65: -49, .mlDSA87: -50][mlDSAKey.parameterSet] else {
            fatalError("ML-DSA parameter set \(mlDSAKey.parameterSet) does not match alg \(key.algorithm)")
        }
        _ = key.isValidSignature([UInt8](repeating: 0x01, count: mlDSAKey.parameterSet.signatureByteCount), for: message)
        return 0
    }
    guard let publicKey = key.publicKey else { fatalError("accepted a key that is neither ML-DSA nor an OpenSSL key") }

    if case .ellipticCurve = publicKey.kind {
        guard let point = publicKey.ellipticCurvePoint else { fatalError("EC key without a readable point") }
        let map = try? CBORDecoder().decode(bytes)
        guard point.x == map?[-2]?.bytes, point.y == map?[-3]?.bytes else {
            fatalError("EC point read back differs from the COSE x/y")
        }
    }

    let spki = publicKey.derEncodedSubjectPublicKeyInfo
    guard let reparsed = try? PublicKey(derEncodedSubjectPublicKeyInfo: spki) else {
        fatalError("accepted key's SPKI does not parse back: \(publicKey.kind)")
    }
    guard reparsed.kind == publicKey.kind else {
        fatalError("SPKI round trip changed the key kind: \(publicKey.kind) to \(reparsed.kind)")
    }

    // Exercise the verification path; a signature of the right rough size for each key type.
    let signatureLength: Int
    switch publicKey.kind {
    case .ellipticCurve: signatureLength = 72
    case .ed25519: signatureLength = 64
    case .rsa(let bits): signatureLength = (bits + 7) / 8
    }
    _ = key.isValidSignature([UInt8](repeating: 0x01, count: signatureLength), for: message)
    return 0
}
