// libFuzzer target `mldsa`: ML-DSA signature decoding and verification of module SesameCrypto (FIPS 204, in Swift).
//
// The first input byte picks the parameter set (mod 3); the rest is the signature, checked against a fixed key
// over a fixed message. To reach past the length check, the signature is also tried cut or zero-padded to the
// parameter set's exact length. Checks, for every input: nothing crashes (decoding, hints, z, the NTT and the
// samplers see hostile bytes), a wrong-length signature never verifies, a context over 255 bytes never verifies,
// and the answer does not change when asked twice.
import SesameCrypto

private let message = Array("sesame fuzz message".utf8)

/// A fixed public key per parameter set: any bytes of the right length are a valid encoding.
private let keys: [MLDSAPublicKey] = MLDSAParameterSet.allCases.map { set in
    let bytes = (0..<set.publicKeyByteCount).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
    guard let key = try? MLDSAPublicKey(rawRepresentation: bytes, parameterSet: set) else { fatalError("fixed \(set) key refused") }
    return key
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMLDSA(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard size > 0, let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let key = keys[Int(bytes[0]) % keys.count]
    let length = key.parameterSet.signatureByteCount
    let signature = Array(bytes.dropFirst())

    let asIs = key.isValidSignature(signature, for: message)
    if signature.count != length, asIs { fatalError("a \(signature.count)-byte signature verified for \(key.parameterSet)") }
    guard key.isValidSignature(signature, for: message) == asIs else { fatalError("verification is not deterministic") }

    let exact = signature.count >= length ? Array(signature.prefix(length)) : signature + [UInt8](repeating: 0, count: length - signature.count)
    _ = key.isValidSignature(exact, for: message)
    _ = key.isValidSignature(exact, for: message, context: Array(signature.prefix(255)))
    if key.isValidSignature(exact, for: message, context: [UInt8](repeating: 0, count: 256)) {
        fatalError("a 256-byte context verified")
    }
    return 0
}
