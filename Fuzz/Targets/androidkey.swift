// libFuzzer target `androidkey`: `AndroidKeyDescription(derEncoded:)` of module WebAuthn, the Android key attestation
// extension (OID 1.3.6.1.4.1.11129.2.1.17) that `android-key` reads from the credential certificate. Internal API,
// reached with `@testable import` (run.sh builds the library with -enable-testing).
//
// Checks, for every input: parsing never crashes, and for an accepted key description, against a lenient DER walker
// of this file's own (any definite length, no minimality rules):
// - the input is exactly one SEQUENCE that starts with eight elements (what follows them is ignored, as the parser
//   documents); the fifth (attestationChallenge) and sixth
//   (uniqueId) are OCTET STRINGs, and the challenge is the fifth one's content; the seventh and eighth are SEQUENCEs;
// - each authorization list read back from its SEQUENCE (purpose [1] a SET of INTEGERs, allApplications [600],
//   origin [702] an INTEGER; every entry a constructed context tag) equals `softwareEnforced` and `teeEnforced`;
// - the parse is deterministic, and one byte more or one byte less is refused.
@testable import WebAuthn

/// One DER element as the lenient walker reads it: the identifier octets and the content.
private struct Element {
    var identifier: [UInt8]
    var content: ArraySlice<UInt8>
}

/// The elements that fill `bytes` end to end, or nil when they do not (lenient: non-minimal lengths are fine). With
/// `limit`, only that many leading elements are read, and whatever follows them is not looked at.
private func elements(_ bytes: ArraySlice<UInt8>, limit: Int = .max) -> [Element]? {
    var result: [Element] = []
    var i = bytes.startIndex
    while i < bytes.endIndex, result.count < limit {
        let start = i
        if bytes[i] & 0x1F == 0x1F {  // high tag number: base-128 octets, the last without bit 8
            repeat { i += 1 } while i < bytes.endIndex && bytes[i] & 0x80 != 0
        }
        i += 1
        guard i < bytes.endIndex else { return nil }
        let identifier = Array(bytes[start..<i])
        var length = Int(bytes[i]); i += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count >= 1, count <= 4, bytes.endIndex - i >= count else { return nil }
            length = bytes[i..<i + count].reduce(0) { $0 << 8 | Int($1) }
            i += count
        }
        guard bytes.endIndex - i >= length else { return nil }
        result.append(Element(identifier: identifier, content: bytes[i..<i + length]))
        i += length
    }
    return result
}

/// A two's-complement INTEGER content of one to eight octets.
private func integer(_ content: ArraySlice<UInt8>) -> Int64 {
    guard (1...8).contains(content.count) else { fatalError("accepted an INTEGER of \(content.count) octets") }
    return content.dropFirst().reduce(Int64(Int8(bitPattern: content.first!))) { $0 << 8 | Int64($1) }
}

/// The one element `content` holds, which must carry `identifier`.
private func single(_ identifier: [UInt8], _ content: ArraySlice<UInt8>, _ what: String) -> ArraySlice<UInt8> {
    guard let inner = elements(content), inner.count == 1, inner[0].identifier == identifier else {
        fatalError("accepted \(what) that is not one \(identifier) element")
    }
    return inner[0].content
}

/// The fields Sesame keeps of one AuthorizationList, read from its SEQUENCE content.
private func authorizationList(_ content: ArraySlice<UInt8>, _ name: String) -> AndroidKeyDescription.AuthorizationList {
    guard let entries = elements(content) else { fatalError("\(name) is not a list of elements") }
    var list = AndroidKeyDescription.AuthorizationList()
    for entry in entries {
        guard entry.identifier[0] & 0xE0 == 0xA0 else { fatalError("\(name) entry \(entry.identifier) is not an explicit tag") }
        switch entry.identifier {
        case [0xA1]:  // purpose [1] EXPLICIT SET OF INTEGER
            let set = single([0x31], entry.content, "\(name).purpose")
            guard let values = elements(set) else { fatalError("\(name).purpose is not a SET of elements") }
            list.purposes = Set(values.map { value in
                guard value.identifier == [0x02] else { fatalError("\(name).purpose holds a \(value.identifier)") }
                return integer(value.content)
            })
        case [0xBF, 0x84, 0x58]:  // allApplications [600] EXPLICIT NULL
            guard single([0x05], entry.content, "\(name).allApplications").isEmpty else { fatalError("a NULL with content") }
            list.allApplications = true
        case [0xBF, 0x85, 0x3E]:  // origin [702] EXPLICIT INTEGER
            list.origin = integer(single([0x02], entry.content, "\(name).origin"))
        default:
            continue
        }
    }
    return list
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAndroidKeyDescription(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let description = try? AndroidKeyDescription(derEncoded: bytes) else { return 0 }

    let fields = single([0x30], bytes[...], "a key description")
    guard let top = elements(fields, limit: 8), top.count == 8 else { fatalError("a KeyDescription of fewer than eight elements") }
    guard top[4].identifier == [0x04], top[5].identifier == [0x04] else {
        fatalError("attestationChallenge or uniqueId is not an OCTET STRING")
    }
    guard description.attestationChallenge == Array(top[4].content) else { fatalError("attestationChallenge misread") }
    guard top[6].identifier == [0x30], top[7].identifier == [0x30] else { fatalError("an authorization list is not a SEQUENCE") }
    guard description.softwareEnforced == authorizationList(top[6].content, "softwareEnforced") else {
        fatalError("softwareEnforced misread: \(description.softwareEnforced)")
    }
    guard description.teeEnforced == authorizationList(top[7].content, "hardwareEnforced") else {
        fatalError("teeEnforced misread: \(description.teeEnforced)")
    }

    guard let again = try? AndroidKeyDescription(derEncoded: bytes), again.attestationChallenge == description.attestationChallenge,
          again.softwareEnforced == description.softwareEnforced, again.teeEnforced == description.teeEnforced
    else { fatalError("a second parse of the same bytes differs") }
    guard (try? AndroidKeyDescription(derEncoded: bytes + [0])) == nil else { fatalError("accepted with a byte appended") }
    guard (try? AndroidKeyDescription(derEncoded: Array(bytes.dropLast()))) == nil else { fatalError("accepted a byte short") }
    return 0
}
