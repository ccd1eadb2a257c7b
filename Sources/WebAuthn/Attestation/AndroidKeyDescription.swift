/// The Android key attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of an `android-key` credential certificate.
///
/// Only the fields WebAuthn §8.4 checks are kept: `attestationChallenge` and, of both authorization lists,
/// `purpose`, `allApplications` and `origin`. The four leading version and security-level fields are read as any
/// DER element and not interpreted, and fields after `hardwareEnforced` are ignored.
///
/// - SeeAlso: [Android key attestation certificate schema](https://developer.android.com/privacy-and-security/security-key-attestation#certificate_schema)
struct AndroidKeyDescription {
    /// The extension's OID.
    static let oid = "1.3.6.1.4.1.11129.2.1.17"

    /// The fields of one `AuthorizationList` that WebAuthn checks.
    struct AuthorizationList: Equatable {
        /// `purpose [1] EXPLICIT SET OF INTEGER`, nil when absent.
        var purposes: Set<Int64>? = nil
        /// Whether `allApplications [600] EXPLICIT NULL` is present.
        var allApplications = false
        /// `origin [702] EXPLICIT INTEGER`, nil when absent.
        var origin: Int64? = nil
    }

    /// KM_PURPOSE_SIGN.
    static let purposeSign: Int64 = 2
    /// KM_ORIGIN_GENERATED.
    static let originGenerated: Int64 = 0

    let attestationChallenge: [UInt8]
    let softwareEnforced: AuthorizationList
    /// `hardwareEnforced` in the schema (the TEE or StrongBox list), `teeEnforced` in WebAuthn.
    let teeEnforced: AuthorizationList

    /// Parses the extension value (the DER inside extnValue).
    /// - Throws: ``DERReader/Failure`` when it is not a KeyDescription.
    init(derEncoded bytes: [UInt8]) throws(DERReader.Failure) {
        var fields = DERReader(try DERReader.single(.sequence, in: bytes[...]))
        // attestationVersion, attestationSecurityLevel, keyMintVersion, keyMintSecurityLevel.
        for _ in 0..<4 { _ = try fields.read() }
        attestationChallenge = Array(try fields.read(.octetString))
        _ = try fields.read(.octetString)  // uniqueId
        softwareEnforced = try Self.authorizationList(fields.read(.sequence))
        teeEnforced = try Self.authorizationList(fields.read(.sequence))
    }

    /// Reads the checked fields of an AuthorizationList's content; each tag may occur once.
    private static func authorizationList(_ content: ArraySlice<UInt8>) throws(DERReader.Failure) -> AuthorizationList {
        var list = AuthorizationList()
        var reader = DERReader(content)
        var seen: Set<UInt32> = []
        while !reader.isAtEnd {
            let field = try reader.read()
            guard field.tag.tagClass == 2, field.tag.isConstructed else {
                throw DERReader.Failure(reason: "authorization list entry \(field.tag) is not an explicit tag")
            }
            guard seen.insert(field.tag.number).inserted else {
                throw DERReader.Failure(reason: "authorization list has tag \(field.tag.number) twice")
            }
            switch field.tag.number {
            case 1:
                var values = DERReader(try DERReader.single(.set, in: field.content))
                var purposes: Set<Int64> = []
                while !values.isAtEnd { purposes.insert(try DERReader.integer(values.read(.integer))) }
                list.purposes = purposes
            case 600:
                guard try DERReader.single(.null, in: field.content).isEmpty else {
                    throw DERReader.Failure(reason: "allApplications is not NULL")
                }
                list.allApplications = true
            case 702:
                list.origin = try DERReader.integer(DERReader.single(.integer, in: field.content))
            default:
                continue
            }
        }
        return list
    }
}
