import Foundation
import WebAuthn

/// A client platform a project accepts passkey ceremonies from; each yields accepted origins.
public enum Platform: Sendable, Hashable {
    /// A web app served from `hostname` (`login.example.com`, or `*.example.com` for every subdomain).
    case web(hostname: String)
    /// An Android app: its package name and the SHA-256 fingerprints of its signing certificates.
    case android(packageName: String, sha256Fingerprints: [[UInt8]])
    /// An Apple app: its team ID and bundle ID.
    case apple(teamID: String, bundleID: String)

    /// The `kind` stored for this platform: `web`, `android` or `apple`.
    public var kind: String {
        switch self {
        case .web: "web"
        case .android: "android"
        case .apple: "apple"
        }
    }

    /// The origins WebAuthn clients on this platform report, for a project whose relying party ID is `rpID`.
    ///
    /// Web: `https://host`. Android: `android:apk-key-hash:<base64url SHA-256 of the signing certificate>`.
    /// Apple: apps use the associated domain, so `https://<rpID>`.
    public func origins(rpID: String) -> [String] {
        switch self {
        case .web(let hostname): ["https://\(hostname)"]
        case .android(_, let fingerprints): fingerprints.map { "android:apk-key-hash:\(Base64URL.encode($0))" }
        case .apple: ["https://\(rpID)"]
        }
    }
}

/// Checks and normalises what users type for platforms and relying parties.
public enum PlatformValidation {
    /// A DNS hostname in lowercase: labels of letters, digits and hyphens, at most 253 characters.
    /// - Parameter allowWildcard: accept one leading `*.` label.
    public static func hostname(_ raw: String, allowWildcard: Bool) throws(SesameError) -> String {
        let host = raw.lowercased()
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if allowWildcard, labels.first == "*" {
            labels.removeFirst()
            guard labels.count >= 2 else { throw SesameError(.invalidArgument, "a wildcard needs a domain of two labels or more") }
        }
        guard !labels.isEmpty, host.count <= 253, labels.allSatisfy(isLabel) else {
            throw SesameError(.invalidArgument, "'\(raw.prefix(64))' is not a valid hostname")
        }
        return host
    }

    /// A relying party ID: a hostname without wildcard, port or scheme (`localhost` included).
    /// IP addresses are refused: a relying party ID is a domain, and no top-level domain is numeric.
    public static func relyingPartyID(_ raw: String) throws(SesameError) -> String {
        let host = try hostname(raw, allowWildcard: false)
        if let last = host.split(separator: ".").last, last.allSatisfy(\.isNumber) {
            throw SesameError(.invalidArgument, "a relying party ID is a domain, not an IP address")
        }
        return host
    }

    /// An Android package name such as `com.example.app`: two or more Java identifiers joined by dots.
    public static func androidPackageName(_ raw: String) throws(SesameError) -> String {
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        let valid = parts.count >= 2 && raw.count <= 255 && parts.allSatisfy { part in
            guard let first = part.first, first.isASCII, first.isLetter || first == "_" else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
        guard valid else { throw SesameError(.invalidArgument, "'\(raw.prefix(64))' is not an Android package name") }
        return raw
    }

    /// A SHA-256 certificate fingerprint as Android tools print it (`AB:CD:...`, 32 bytes), also without colons.
    public static func sha256Fingerprint(_ raw: String) throws(SesameError) -> [UInt8] {
        let hex = raw.replacingOccurrences(of: ":", with: "")
        guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else {
            throw SesameError(.invalidArgument, "a SHA-256 fingerprint is 32 bytes in hex, such as AB:CD:...")
        }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else {
                throw SesameError(.invalidArgument, "a SHA-256 fingerprint is 32 bytes in hex, such as AB:CD:...")
            }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// The fingerprint in the colon-separated uppercase form of `assetlinks.json`.
    public static func fingerprintText(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: ":")
    }

    /// An Apple team ID: ten uppercase letters or digits.
    public static func appleTeamID(_ raw: String) throws(SesameError) -> String {
        guard raw.count == 10, raw.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
            throw SesameError(.invalidArgument, "an Apple team ID is ten uppercase letters or digits")
        }
        return raw
    }

    /// An Apple bundle ID such as `com.example.App`: letters, digits, hyphens and dots.
    public static func appleBundleID(_ raw: String) throws(SesameError) -> String {
        let valid = !raw.isEmpty && raw.count <= 155 && !raw.hasPrefix(".") && !raw.hasSuffix(".") && !raw.contains("..")
            && raw.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
        guard valid else { throw SesameError(.invalidArgument, "'\(raw.prefix(64))' is not a bundle ID") }
        return raw
    }

    private static func isLabel(_ label: Substring) -> Bool {
        !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
            && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
