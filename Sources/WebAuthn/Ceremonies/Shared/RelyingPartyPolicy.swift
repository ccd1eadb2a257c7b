import Foundation
import SesameCrypto

/// What a relying party accepts in a ceremony: its ID, its origins and its user-verification and
/// cross-origin rules. Built once per relying party and shared by both ceremonies.
public struct RelyingPartyPolicy: Sendable {
    /// The relying party ID, a registrable domain such as `example.org`.
    public var id: String
    /// Accepted origins: exact origins (`https://example.org`, `android:apk-key-hash:...`), or web origins
    /// with one leading wildcard label (`https://*.example.org`, which does not match `https://example.org`).
    public var origins: [String]
    /// Whether every ceremony must carry the UV flag; otherwise user verification is only preferred.
    public var requiresUserVerification: Bool
    /// Whether a ceremony may run in a cross-origin iframe, and under which top-level origins.
    public var crossOrigin: CrossOriginPolicy
    /// The credential algorithms accepted at registration (`pubKeyCredParams`).
    public var allowedAlgorithms: [COSEAlgorithmIdentifier]

    /// SHA-256 of ``id``, which `rpIdHash` must equal.
    public var idHash: [UInt8] { Digest.sha256(Array(id.utf8)) }

    /// Creates a policy.
    public init(id: String, origins: [String], requiresUserVerification: Bool = true, crossOrigin: CrossOriginPolicy = .forbidden,
                allowedAlgorithms: [COSEAlgorithmIdentifier] = COSEAlgorithmIdentifier.supported) {
        self.id = id
        self.origins = origins
        self.requiresUserVerification = requiresUserVerification
        self.crossOrigin = crossOrigin
        self.allowedAlgorithms = allowedAlgorithms
    }

    /// Whether `origin` matches one of `patterns` exactly or through a leading `*.` host label.
    static func matches(_ origin: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            // Most patterns hold no wildcard: compare them without a substring search.
            guard pattern.utf8.contains(UInt8(ascii: "*")), let star = pattern.range(of: "://*.") else { return pattern == origin }
            let scheme = pattern[..<star.lowerBound], suffix = pattern[star.upperBound...]
            guard origin.hasPrefix(scheme + "://"), origin.hasSuffix("." + suffix) else { return false }
            // Exactly one or more labels in place of `*`, with no port, path or userinfo smuggled in.
            let host = origin.dropFirst(scheme.count + 3).dropLast(suffix.count + 1)
            return !host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
                && !host.hasPrefix(".") && !host.hasSuffix(".") && !host.contains("..")
        }
    }
}

/// Whether a relying party may be used from an iframe that is not same-origin with its ancestors.
public enum CrossOriginPolicy: Sendable, Hashable {
    /// Every ceremony must be same-origin with its top-level page (`crossOrigin` absent or false).
    case forbidden
    /// Cross-origin ceremonies are accepted; when the client reports `topOrigin` it must match one of these
    /// patterns (same syntax as ``RelyingPartyPolicy/origins``). Older clients send `crossOrigin` without
    /// `topOrigin`; WebAuthn Level 3 only checks `topOrigin` when it is present.
    case allowed(topOrigins: [String])
}

/// The checks §7.1 and §7.2 share, with the step numbers of each.
enum SharedChecks {
    /// Verifies C.type, C.challenge, C.origin and C.crossOrigin/C.topOrigin.
    /// - Parameters:
    ///   - steps: the step numbers of the type, challenge, origin and topOrigin checks, for error details.
    static func verify(_ clientData: CollectedClientData, type: String, challenge: [UInt8], policy: RelyingPartyPolicy,
                       section: String, steps: (type: Int, challenge: Int, origin: Int, topOrigin: Int)) throws(WebAuthnError) {
        // type
        guard clientData.type == type else {
            throw WebAuthnError(.clientDataTypeMismatch, "\(section) step \(steps.type): type is not \(type)")
        }
        // challenge: compare bytes in constant time; an undecodable challenge cannot match.
        guard let received = try? Base64URL.decode(clientData.challenge), constantTimeEquals(received, challenge) else {
            throw WebAuthnError(.challengeMismatch, "\(section) step \(steps.challenge): challenge does not match")
        }
        // origin
        guard RelyingPartyPolicy.matches(clientData.origin, policy.origins) else {
            throw WebAuthnError(.originMismatch, "\(section) step \(steps.origin): origin is not accepted")
        }
        // topOrigin: a cross-origin call only where the relying party expects to be embedded, and then only
        // under a top-level origin it expects.
        if clientData.crossOrigin == true || clientData.topOrigin != nil {
            guard case .allowed(let topOrigins) = policy.crossOrigin else {
                throw WebAuthnError(.crossOriginNotAllowed, "\(section) step \(steps.topOrigin): cross-origin call not allowed")
            }
            if let top = clientData.topOrigin, !RelyingPartyPolicy.matches(top, topOrigins) {
                throw WebAuthnError(.topOriginMismatch, "\(section) step \(steps.topOrigin): topOrigin is not accepted")
            }
        }
    }

    /// Verifies rpIdHash, UP, UV and the BE/BS pair.
    static func verify(_ authData: AuthenticatorData, policy: RelyingPartyPolicy, requiresUserPresence: Bool,
                       section: String, steps: (rpIDHash: Int, up: Int, uv: Int, backup: Int)) throws(WebAuthnError) {
        guard constantTimeEquals(authData.rpIDHash, policy.idHash) else {
            throw WebAuthnError(.rpIDHashMismatch, "\(section) step \(steps.rpIDHash): rpIdHash is not SHA-256 of the RP ID")
        }
        if requiresUserPresence {
            guard authData.isUserPresent else {
                throw WebAuthnError(.userPresenceRequired, "\(section) step \(steps.up): UP flag not set")
            }
        }
        if policy.requiresUserVerification {
            guard authData.isUserVerified else {
                throw WebAuthnError(.userVerificationRequired, "\(section) step \(steps.uv): UV flag not set")
            }
        }
        guard authData.isBackupEligible || !authData.isBackedUp else {
            throw WebAuthnError(.backupStateWithoutEligibility, "\(section) step \(steps.backup): BS set without BE")
        }
    }
}
