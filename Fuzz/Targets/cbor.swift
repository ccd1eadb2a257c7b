// libFuzzer target `cbor`: the CBOR decoder and encoder of module WebAuthn.
//
// Checks, for every input:
// 1. `CBORDecoder().decode` never crashes; `decodePrefix` agrees with it (same value, whole input used), and
//    a prefix item re-decodes alone from exactly the bytes it reported.
// 2. `decodePrefix` on a slice that does not start at index 0 gives the same result as on a fresh array
//    (authenticator data parsing hands the decoder such slices).
// 3. Round trip: for a decoded value v, `CBOREncoder.encode(v)` decodes again; the encoding is a fixed
//    point (encode(decode(encode(v))) == encode(v)); and, when v holds no float (NaN is never equal to
//    itself), the re-decoded value equals v with its map entries in canonical order.
// 4. The same round trip for values decoded with indefinite lengths allowed: their definite re-encoding
//    must be accepted by the default (strict) decoder.
// A property violation calls `fatalError`, which libFuzzer reports as a crash.
import WebAuthn

/// Canonical CBOR key order: encoded length first, then bytewise.
private func canonicalPrecedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
}

/// `value` with every map's entries (at every depth, keys included) in canonical order.
private func canonicalized(_ value: CBORValue) -> CBORValue {
    switch value {
    case .array(let elements): return .array(elements.map(canonicalized))
    case .tagged(let tag, let inner): return .tagged(tag, canonicalized(inner))
    case .map(let entries):
        let normalized = entries.map { CBORMapEntry(canonicalized($0.key), canonicalized($0.value)) }
        return .map(normalized.sorted { canonicalPrecedes(CBOREncoder.encode($0.key), CBOREncoder.encode($1.key)) })
    default: return value
    }
}

private func containsFloat(_ value: CBORValue) -> Bool {
    switch value {
    case .float: return true
    case .array(let elements): return elements.contains(where: containsFloat)
    case .tagged(_, let inner): return containsFloat(inner)
    case .map(let entries): return entries.contains { containsFloat($0.key) || containsFloat($0.value) }
    default: return false
    }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Property 3: `value` (already decoded from some input) survives encode/decode.
private func checkRoundTrip(_ value: CBORValue, _ what: String) {
    let encoded = CBOREncoder.encode(value)
    let again: CBORValue
    do {
        again = try CBORDecoder().decode(encoded)
    } catch {
        fatalError("\(what): canonical encoding \(hex(encoded)) of a decoded value does not decode: \(error)")
    }
    let reencoded = CBOREncoder.encode(again)
    guard reencoded == encoded else {
        fatalError("\(what): encoding is not a fixed point: \(hex(encoded)) then \(hex(reencoded))")
    }
    if !containsFloat(value) {
        guard canonicalized(value) == again else {
            fatalError("\(what): round trip changed the value: \(value) became \(again)")
        }
    }
}

/// Two decode outcomes are the same: both fail, or both give equal encodings and byte counts.
private func samePrefixResult(_ a: (value: CBORValue, byteCount: Int)?, _ b: (value: CBORValue, byteCount: Int)?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case let (x?, y?): return x.byteCount == y.byteCount && CBOREncoder.encode(x.value) == CBOREncoder.encode(y.value)
    default: return false
    }
}

private let permissive = CBORDecoder(limits: .init(allowsIndefiniteLengths: true))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBOR(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let decoder = CBORDecoder()

    // Properties 1 and 3.
    let whole = try? decoder.decode(bytes)
    let prefix = try? decoder.decodePrefix(bytes[...])
    if let whole {
        guard let prefix, prefix.byteCount == bytes.count, CBOREncoder.encode(prefix.value) == CBOREncoder.encode(whole) else {
            fatalError("decode succeeded but decodePrefix disagrees")
        }
        checkRoundTrip(whole, "strict")
    }
    if let prefix {
        guard prefix.byteCount >= 1, prefix.byteCount <= bytes.count else {
            fatalError("decodePrefix reported \(prefix.byteCount) bytes of \(bytes.count)")
        }
        guard let alone = try? decoder.decode(bytes[..<prefix.byteCount]),
              CBOREncoder.encode(alone) == CBOREncoder.encode(prefix.value) else {
            fatalError("the \(prefix.byteCount)-byte prefix item does not decode alone to the same value")
        }
        if prefix.byteCount == bytes.count, whole == nil { fatalError("decodePrefix used all bytes but decode failed") }
    }

    // Property 2: a slice whose startIndex is not 0.
    if !bytes.isEmpty {
        let sliced = try? decoder.decodePrefix(bytes[1...])
        let fresh = try? decoder.decodePrefix(Array(bytes[1...])[...])
        guard samePrefixResult(sliced, fresh) else { fatalError("decodePrefix depends on the slice's startIndex") }
    }

    // Property 4: indefinite lengths allowed.
    if let loose = try? permissive.decode(bytes) {
        checkRoundTrip(loose, "indefinite")
        if let whole, CBOREncoder.encode(whole) != CBOREncoder.encode(loose) {
            fatalError("the strict and the permissive decoder disagree on a value both accept")
        }
    }
    return 0
}
