import Foundation
import SesameCrypto
import SesameStore

/// A challenge handed to a client: its handle, its 32 random bytes and when it stops working.
public struct IssuedChallenge: Sendable, Hashable {
    public let id: String
    public let bytes: [UInt8]
    public let purpose: String
    public let expiresAt: Date
}

/// A challenge taken back, exactly once, with what it was bound to.
public struct ConsumedChallenge: Sendable, Hashable {
    public let id: String
    public let projectID: String
    public let bytes: [UInt8]
    public let purpose: String
    public let userID: String?
    public let sessionID: String?
    public let requestID: String?
}

/// Issues single-use challenges and consumes them atomically, on any node.
public struct ChallengeService: Sendable {
    let store: Store
    let clock: any SesameClock
    /// WebAuthn recommends challenges of at least 16 bytes; Sesame uses 32.
    public static let byteCount = 32
    /// The longest life a challenge may be given.
    public static let maximumLifetime: TimeInterval = 3600

    /// Issues a challenge for `purpose` (such as `registration`), bound to the given user, session or request.
    public func issue(projectID: String, purpose: String, lifetime: TimeInterval, userID: String? = nil,
                      sessionID: String? = nil, requestID: String? = nil) throws(SesameError) -> IssuedChallenge {
        guard !purpose.isEmpty, purpose.count <= 64, purpose.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw SesameError(.invalidArgument, "a purpose is 1 to 64 letters, digits, '-', '_' or '.'")
        }
        guard lifetime > 0, lifetime <= Self.maximumLifetime else {
            throw SesameError(.invalidArgument, "a challenge lives between 1 second and \(Int(Self.maximumLifetime)) seconds")
        }
        let now = clock.now()
        let record = ChallengeRecord(id: Identifiers.unique(), projectID: projectID, purpose: purpose,
                                     challenge: SecureRandom.bytes(count: Self.byteCount), userID: userID, sessionID: sessionID,
                                     requestID: requestID, expiresAt: now.addingTimeInterval(lifetime), createdAt: now)
        try StoreErrors.map { () throws(StoreError) in try store.challenges.create(record) }
        return IssuedChallenge(id: record.id, bytes: record.challenge, purpose: purpose, expiresAt: record.expiresAt)
    }

    /// Takes the challenge `id` back; it works once, before it expires, for its own project and purpose.
    /// - Throws: `expired` when it is unknown, used, expired, or belongs to another project or purpose.
    public func consume(id: String, projectID: String, purpose: String) throws(SesameError) -> ConsumedChallenge {
        let record = try StoreErrors.map { () throws(StoreError) in try store.challenges.consume(id: id, now: clock.now()) }
        // A challenge of another project or purpose is burnt all the same: a probe must not keep it alive.
        guard let record, record.projectID == projectID, record.purpose == purpose else {
            throw SesameError(.expired, "the challenge is unknown, used or expired")
        }
        return ConsumedChallenge(id: record.id, projectID: record.projectID, bytes: record.challenge, purpose: record.purpose,
                                 userID: record.userID, sessionID: record.sessionID, requestID: record.requestID)
    }
}
