import Foundation
import Synchronization

/// The Authsignal SDK's entry point (authsignal-ios 2.13.0's `Authsignal`), with its passkey API.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class Authsignal: Sendable {
    /// Passkey sign-up, sign-in and the prompt check.
    public let passkey: AuthsignalPasskey
    private let tokens: AuthsignalTokenCache

    /// Creates the SDK for a tenant.
    /// - Parameters:
    ///   - tenantID: the tenant (Sesame project) ID.
    ///   - baseURL: the API base including its version, such as `https://passkeys.example/authsignal/v1`.
    ///   - deviceID: sent with each enrolment; a random ID kept on the device when `nil`.
    public convenience init(tenantID: String, baseURL: String, deviceID: String? = nil) {
        self.init(passkey: AuthsignalPasskey(tenantID: tenantID, baseURL: baseURL, deviceID: deviceID))
    }

    /// Creates the SDK around a passkey API made with its own collaborators (tests).
    public init(passkey: AuthsignalPasskey) {
        self.passkey = passkey
        tokens = passkey.tokens
    }

    /// Sets the token the next call without one uses (a track token from the backend); an empty string is ignored.
    public func setToken(token: String) {
        guard !token.isEmpty else { return }
        tokens.token = token
    }

    /// The device ID sent with enrolments.
    public func getDeviceID() async -> String { passkey.deviceID }
}

/// The current token: set by ``Authsignal/setToken(token:)`` and by every successful ceremony (its result token).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class AuthsignalTokenCache: Sendable {
    /// The process-wide cache, as the iOS SDK's `TokenCache.shared`.
    public static let shared = AuthsignalTokenCache()
    private let value = Mutex<String?>(nil)

    /// An empty cache.
    public init() {}

    /// The cached token.
    public var token: String? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// Where the SDK keeps the enrolled credential IDs (`@as_passkey_credential_id`, and `…_<username>`) and the device ID.
public protocol AuthsignalStorage: Sendable {
    func string(forKey key: String) -> String?
    func set(_ value: String, forKey key: String)
}

/// ``AuthsignalStorage`` in `UserDefaults.standard`, as the iOS SDK keeps it.
public struct UserDefaultsAuthsignalStorage: AuthsignalStorage {
    /// Storage in `UserDefaults.standard`.
    public init() {}
    public func string(forKey key: String) -> String? { UserDefaults.standard.string(forKey: key) }
    public func set(_ value: String, forKey key: String) { UserDefaults.standard.set(value, forKey: key) }
}

/// ``AuthsignalStorage`` in memory, for tests and apps that keep nothing on the device.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class MemoryAuthsignalStorage: AuthsignalStorage {
    private let values = Mutex<[String: String]>([:])
    /// Empty storage.
    public init() {}
    public func string(forKey key: String) -> String? { values.withLock { $0[key] } }
    public func set(_ value: String, forKey key: String) { values.withLock { $0[key] = value } }
}
