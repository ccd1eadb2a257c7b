// libFuzzer target `authdata`: `AuthenticatorData(bytes:)` of module WebAuthn.
//
// Checks, for every input: parsing never crashes, and for accepted authenticator data:
// - `rawBytes` is the input, `rpIDHash` is its first 32 bytes, `flags` byte 32, `signCount` bytes 33-36;
// - attested credential data is present exactly when the AT flag is set, extensions exactly when ED is set;
// - the AAGUID is 16 bytes and `aaguidString` has the 36-character UUID form;
// - the credential public key bytes are one complete CBOR item;
// - the parts laid end to end rebuild the input (with the extensions' encoding taken as the rest).
import WebAuthn

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthenticatorData(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let authData = try? AuthenticatorData(bytes: bytes) else { return 0 }

    guard authData.rawBytes == bytes, bytes.count >= 37 else { fatalError("rawBytes differ from the input") }
    guard authData.rpIDHash == Array(bytes[0..<32]), authData.flags.rawValue == bytes[32] else {
        fatalError("rpIdHash or flags misread")
    }
    let counter = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard authData.signCount == counter else { fatalError("signCount misread") }

    let at = authData.flags.contains(.attestedCredentialData), ed = authData.flags.contains(.extensionData)
    guard (authData.attestedCredentialData != nil) == at else { fatalError("attested credential data vs AT flag") }
    guard (authData.extensions != nil) == ed else { fatalError("extensions vs ED flag") }
    _ = (authData.isUserPresent, authData.isUserVerified, authData.isBackupEligible, authData.isBackedUp)

    var rebuilt = Array(bytes[0..<37])
    if let attested = authData.attestedCredentialData {
        guard attested.aaguid.count == 16 else { fatalError("AAGUID is \(attested.aaguid.count) bytes") }
        let uuid = attested.aaguidString
        guard uuid.utf8.count == 36, uuid.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12] else {
            fatalError("aaguidString \(uuid) is not a UUID")
        }
        guard attested.credentialID.count <= 0xFFFF else { fatalError("credential ID longer than its length field") }
        guard (try? CBORDecoder().decode(attested.credentialPublicKey)) != nil else {
            fatalError("credentialPublicKey is not one complete CBOR item")
        }
        let length = attested.credentialID.count
        rebuilt += attested.aaguid + [UInt8(length >> 8), UInt8(length & 0xFF)] + attested.credentialID
        rebuilt += attested.credentialPublicKey
    }
    guard bytes.starts(with: rebuilt) else { fatalError("the parsed parts do not rebuild the input") }
    if let extensions = authData.extensions {
        guard extensions.mapEntries != nil else { fatalError("extensions are not a map") }
        let rest = Array(bytes[rebuilt.count...])
        guard let decoded = try? CBORDecoder().decode(rest), CBOREncoder.encode(decoded) == CBOREncoder.encode(extensions) else {
            fatalError("the bytes after the credential data are not exactly the extensions map")
        }
    } else {
        guard rebuilt.count == bytes.count else { fatalError("bytes left over without the ED flag") }
    }
    return 0
}
