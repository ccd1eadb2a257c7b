internal import COpenSSL

/// An X.501 distinguished name as an ordered list of attributes.
public struct DistinguishedName: Sendable, Hashable {
    /// One attribute type and value.
    public struct Attribute: Sendable, Hashable {
        /// The dotted attribute type OID, for example "2.5.4.3" for commonName.
        public var oid: String
        /// The value as UTF-8 text.
        public var value: String

        /// Creates an attribute.
        /// - Parameters:
        ///   - oid: The dotted OID.
        ///   - value: The value.
        public init(oid: String, value: String) {
            self.oid = oid
            self.value = value
        }
    }

    /// The attributes in encoding order (multi-valued RDNs are flattened).
    public var attributes: [Attribute]

    /// Creates a name from attributes.
    /// - Parameter attributes: The attributes in order.
    public init(attributes: [Attribute]) {
        self.attributes = attributes
    }

    /// Reads an `X509_NAME` (borrowed, not freed).
    init(name: OpaquePointer?) {
        var attributes: [Attribute] = []
        if let name {
            let count = X509_NAME_entry_count(name)
            for index in 0..<max(count, 0) {
                guard let entry = X509_NAME_get_entry(name, index) else { continue }
                attributes.append(Attribute(
                    oid: Self.dottedOID(X509_NAME_ENTRY_get_object(entry)),
                    value: Self.text(UnsafePointer(X509_NAME_ENTRY_get_data(entry)))))
            }
        }
        OpenSSLErrors.clear()
        self.attributes = attributes
    }

    /// All values of the attributes with this dotted OID, in order.
    /// - Parameter oid: The dotted attribute type OID.
    /// - Returns: The values; empty when there are none.
    public func values(oid: String) -> [String] {
        attributes.lazy.filter { $0.oid == oid }.map(\.value)
    }

    /// The first countryName (2.5.4.6) value.
    public var countryName: String? { values(oid: "2.5.4.6").first }
    /// The first organizationName (2.5.4.10) value.
    public var organizationName: String? { values(oid: "2.5.4.10").first }
    /// The first organizationalUnitName (2.5.4.11) value.
    public var organizationalUnitName: String? { values(oid: "2.5.4.11").first }
    /// The first commonName (2.5.4.3) value.
    public var commonName: String? { values(oid: "2.5.4.3").first }

    /// Formats an `ASN1_OBJECT` as a dotted OID.
    static func dottedOID(_ object: OpaquePointer?) -> String {
        guard let object else { return "" }
        var buffer = [CChar](repeating: 0, count: 128)
        let length = buffer.withUnsafeMutableBufferPointer { OBJ_obj2txt($0.baseAddress, Int32($0.count), object, 1) }
        guard length > 0, Int(length) < buffer.count else { return "" }
        return String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Converts an `ASN1_STRING` to UTF-8 text; undecodable strings become "#" plus hex of their bytes.
    static func text(_ string: UnsafePointer<ASN1_STRING>?) -> String {
        guard let string else { return "" }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = ASN1_STRING_to_UTF8(&out, string)
        if length >= 0, let out {
            defer { copenssl_free(out) }
            return String(decoding: UnsafeBufferPointer(start: out, count: Int(length)), as: UTF8.self)
        }
        let raw = Int(ASN1_STRING_length(string))
        let bytes = raw > 0 ? Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(string), count: raw)) : []
        return "#" + bytes.map { String($0, radix: 16).leftPadded() }.joined()
    }
}

extension String {
    /// Pads a one-digit hex string to two digits.
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
