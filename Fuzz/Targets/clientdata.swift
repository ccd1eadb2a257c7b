// libFuzzer target `clientdata`: `CollectedClientData(jsonBytes:)` of module WebAuthn, differentially.
//
// Checks, for every input: parsing never crashes, and whatever Sesame's strict parser accepts, Foundation's
// JSONSerialization accepts too, reading the same type, challenge, origin, crossOrigin and topOrigin.
// (Sesame is stricter: it refuses duplicate member names, which Foundation resolves silently.)
import Foundation
import WebAuthn

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClientData(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let clientData = try? CollectedClientData(jsonBytes: bytes) else { return 0 }
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        fatalError("Sesame accepted JSON that Foundation refuses")
    }
    guard object["type"] as? String == clientData.type, object["challenge"] as? String == clientData.challenge,
          object["origin"] as? String == clientData.origin, object["topOrigin"] as? String == clientData.topOrigin
    else { fatalError("a string member reads differently") }
    if let crossOrigin = clientData.crossOrigin {
        guard (object["crossOrigin"] as? NSNumber)?.boolValue == crossOrigin else { fatalError("crossOrigin reads differently") }
    }
    return 0
}
