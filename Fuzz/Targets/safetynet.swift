// libFuzzer target `safetynet`: `SafetyNetResponse(compactSerialization:)` of module WebAuthn, the JWS of an
// `android-safetynet` statement (and, under it, the x5c JWS reader the metadata BLOB shares). Internal API, reached
// with `@testable import` (run.sh builds the library with -enable-testing).
//
// Checks, for every input: parsing never crashes, and for an accepted response, differentially against Foundation
// (`Data(base64Encoded:)` after mapping base64url to base64, and `JSONSerialization`):
// - the input has exactly two dots; `signingInput` is the input up to the second; each part decodes, the third to
//   `signature`;
// - the header is a JSON object whose `alg` is `algorithm` and whose `x5c` is an array of as many strings as there are
//   `certificates`, each decoding to that certificate's DER;
// - the payload is a JSON object; `nonce` is its string `nonce`, a `ctsProfileMatch` read is its boolean, and a
//   `timestampMs` read is the text of a number equal to Foundation's;
// - checking the signature runs (its result is not checked: the fuzzer does not forge RS256).
import Foundation
import SesameCrypto
@testable import WebAuthn

/// Foundation's decoding of one base64url or base64 part (unpadded or padded), or nil.
private func foundationDecode(_ part: some Collection<UInt8>) -> [UInt8]? {
    var text = String(decoding: part, as: UTF8.self).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    if !text.hasSuffix("=") { text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4) }
    return Data(base64Encoded: text).map { Array($0) }
}

private func foundationObject(_ bytes: [UInt8], _ name: String) -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        fatalError("accepted a JWS whose \(name) Foundation does not read as a JSON object")
    }
    return object
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSafetyNet(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let response = try? SafetyNetResponse(compactSerialization: bytes) else { return 0 }

    let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
    guard parts.count == 3 else { fatalError("accepted a JWS of \(parts.count) parts") }
    guard response.signingInput == Array(bytes[..<parts[1].endIndex]) else { fatalError("signingInput is not the first two parts") }
    guard let header = foundationDecode(parts[0]), let payload = foundationDecode(parts[1]),
          let signature = foundationDecode(parts[2])
    else { fatalError("accepted a part that Foundation does not decode as base64") }
    guard signature == response.signature else { fatalError("signature misread") }

    let headerObject = foundationObject(header, "header")
    guard headerObject["alg"] as? String == response.algorithm else { fatalError("alg misread") }
    guard let chain = headerObject["x5c"] as? [String], chain.count == response.certificates.count else {
        fatalError("x5c is not an array of \(response.certificates.count) strings")
    }
    for (item, certificate) in zip(chain, response.certificates) {
        guard foundationDecode(item.utf8) == certificate.derRepresentation else { fatalError("an x5c certificate misread") }
    }

    let payloadObject = foundationObject(payload, "payload")
    guard payloadObject["nonce"] as? String == response.nonce else { fatalError("nonce misread") }
    if let ctsProfileMatch = response.ctsProfileMatch {
        guard (payloadObject["ctsProfileMatch"] as? NSNumber)?.boolValue == ctsProfileMatch else { fatalError("ctsProfileMatch misread") }
    }
    if let timestampMs = response.timestampMs {
        guard let number = payloadObject["timestampMs"] as? NSNumber, let value = Double(timestampMs) else {
            fatalError("timestampMs \(timestampMs) is not a number")
        }
        let expected = number.doubleValue
        guard value == expected || abs(value - expected) <= 1e-12 * max(abs(value), abs(expected)) else {
            fatalError("timestampMs \(timestampMs) reads as \(value), Foundation as \(expected)")
        }
    }
    _ = response.isSignatureValid()
    return 0
}
