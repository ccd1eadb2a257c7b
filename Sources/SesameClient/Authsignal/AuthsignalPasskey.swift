import Foundation
import Synchronization

/// Passkey sign-up, sign-in and the "should we offer a passkey" check against an Authsignal-compatible client API
/// (Sesame's `/authsignal/v1`), with authsignal-ios 2.13.0's names, labels and defaults, so an app's code compiles
/// unchanged. Only one ceremony runs at a time; a second call meanwhile fails with `sdk_error`.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class AuthsignalPasskey: Sendable {
    let api: AuthsignalAPIClient
    let authenticator: any AuthsignalPasskeyAuthenticator
    let storage: any AuthsignalStorage
    let tokens: AuthsignalTokenCache
    private let deviceIDOverride: String?
    private let inFlight = Mutex(false)

    static let credentialKey = "@as_passkey_credential_id"
    static let deviceKey = "@as_device_id"

    /// Creates the passkey API for a tenant, with the default authenticator and the shared token cache: the system
    /// passkey sheet (`PlatformAuthsignalAuthenticator`, presented over the app's key window) on iOS, macOS and
    /// visionOS; ``UnsupportedAuthsignalAuthenticator`` on tvOS and watchOS (``isSupported`` is `false`, ceremonies
    /// answer `not_supported`); a ``SoftwareAuthsignalAuthenticator`` on Linux.
    /// - Parameters:
    ///   - tenantID: the tenant (Sesame project) ID.
    ///   - baseURL: the API base including its version, such as `https://passkeys.example/authsignal/v1`.
    ///   - deviceID: sent with each enrolment; a random ID kept on the device when `nil`.
    public convenience init(tenantID: String, baseURL: String, deviceID: String? = nil) {
        #if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS))
        // No runtime check: this class needs iOS 18, macOS 15 and visionOS 2, past the platform one's iOS 16,
        // macOS 13 and visionOS 1.
        let authenticator: any AuthsignalPasskeyAuthenticator = PlatformAuthsignalAuthenticator()
        #elseif canImport(AuthenticationServices)
        let authenticator: any AuthsignalPasskeyAuthenticator = UnsupportedAuthsignalAuthenticator()
        #else
        let authenticator: any AuthsignalPasskeyAuthenticator = SoftwareAuthsignalAuthenticator()
        #endif
        self.init(tenantID: tenantID, baseURL: baseURL, deviceID: deviceID, authenticator: authenticator)
    }

    /// Creates the passkey API with every collaborator given (tests, other authenticators).
    /// - Parameters:
    ///   - authenticator: what runs the ceremonies on the device.
    ///   - storage: where the enrolled credential IDs and the device ID are kept (`UserDefaults.standard` by default).
    ///   - transport: what carries the calls (`URLSession.shared` by default).
    ///   - tokenCache: the current token (the process-wide ``AuthsignalTokenCache/shared`` by default).
    public init(tenantID: String, baseURL: String, deviceID: String? = nil, authenticator: any AuthsignalPasskeyAuthenticator,
                storage: any AuthsignalStorage = UserDefaultsAuthsignalStorage(), transport: any AuthsignalTransport = URLSessionAuthsignalTransport(),
                tokenCache: AuthsignalTokenCache = .shared) {
        api = AuthsignalAPIClient(tenantID: tenantID, baseURL: baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL, transport: transport)
        self.authenticator = authenticator
        self.storage = storage
        tokens = tokenCache
        deviceIDOverride = deviceID
    }

    /// The ID sent with enrolments: the one given at creation, else one made once and kept.
    var deviceID: String {
        if let deviceIDOverride { return deviceIDOverride }
        if let stored = storage.string(forKey: Self.deviceKey) { return stored }
        let made = UUID().uuidString
        storage.set(made, forKey: Self.deviceKey)
        return made
    }

    // MARK: Sign-up

    /// Creates a passkey for the user the token names (registration options, the device's ceremony, verification).
    /// - Parameters:
    ///   - token: a track token from the backend; the cached token (``Authsignal/setToken(token:)``, or the result of
    ///     an earlier ceremony) when `nil`, else `token_not_set` without any request.
    ///   - ignorePasskeyAlreadyExistsError: answer an empty success instead of `matched_excluded_credential`.
    ///   - syncCredentials: accepted for source compatibility; there is no system credential manager to tell.
    /// - Returns: the result token (also cached), or the failure's `error` and `errorCode`.
    public func signUp(token: String? = nil, username: String? = nil, displayName: String? = nil, ignorePasskeyAlreadyExistsError: Bool = false,
                       syncCredentials: Bool = false) async -> AuthsignalResponse<SignUpResponse> {
        guard let token = token ?? tokens.token else {
            return AuthsignalResponse(error: "A token has not been set. Call 'setToken' first.", errorCode: SdkErrorCode.tokenNotSet.rawValue)
        }
        guard begin() else { return Self.inProgress() }
        defer { end() }
        var body: [String: Any] = [:]
        body["username"] = username
        body["displayName"] = displayName
        let started: [String: Any]
        switch await api.post("/user-authenticators/passkey/registration-options", body, .token(token)) {
        case .failure(let failure): return AuthsignalResponse(data: nil, error: failure.error, errorCode: failure.errorCode)
        case .success(let object): started = object
        }
        guard let challengeID = started["challengeId"] as? String,
              let options = Self.decode(PublicKeyCredentialCreationOptionsJSON.self, started["options"])
        else { return AuthsignalResponse(error: "The registration options are invalid.", errorCode: SdkErrorCode.sdkError.rawValue) }
        let credential: RegistrationResponseJSON
        do { credential = try await authenticator.register(options) } catch {
            if error == .matchedExcludedCredential, ignorePasskeyAlreadyExistsError { return AuthsignalResponse(data: nil) }
            return Self.failure(error)
        }
        guard let credentialObject = Self.object(credential) else {
            return AuthsignalResponse(error: "The credential cannot be encoded.", errorCode: SdkErrorCode.sdkError.rawValue)
        }
        let added: [String: Any]
        switch await api.post("/user-authenticators/passkey",
                              ["challengeId": challengeID, "registrationCredential": credentialObject, "deviceId": deviceID], .token(token)) {
        case .failure(let failure): return AuthsignalResponse(data: nil, error: failure.error, errorCode: failure.errorCode)
        case .success(let object): added = object
        }
        guard let result = added["accessToken"] as? String else { return AuthsignalResponse(error: "Add authenticator error.") }
        tokens.token = result
        storage.set(credential.id, forKey: Self.credentialKey)
        if let username { storage.set(credential.id, forKey: Self.credentialKey + "_" + username) }
        return AuthsignalResponse(data: SignUpResponse(token: result))
    }

    // MARK: Sign-in

    /// Signs in with a passkey: usernameless for a named `action` (tenant credentials, no token), else for the
    /// token's user (`token`, or the cached one; usernameless under the server's default action without either).
    /// - Parameters:
    ///   - autofill: offer the passkey in the keyboard's suggestions (iOS 16) instead of a sheet.
    ///   - preferImmediatelyAvailableCredentials: fail fast when no passkey is on this device (`user_canceled`).
    ///   - syncCredentials: accepted for source compatibility.
    /// - Returns: whether the passkey verified, the result token (also cached) and who it was; or the failure.
    public func signIn(token: String? = nil, action: String? = nil, autofill: Bool = false, preferImmediatelyAvailableCredentials: Bool = true,
                       syncCredentials: Bool = false) async -> AuthsignalResponse<SignInResponse> {
        guard begin() else { return Self.inProgress() }
        defer { end() }
        var credential = AuthsignalAPIClient.Credential.tenant
        var body: [String: Any] = [:]
        if let action {
            // As the iOS SDK does, a failed challenge start is not fatal: the options call starts one itself.
            if case .success(let started) = await api.post("/challenge", ["action": action], .tenant) { body["challengeId"] = started["challengeId"] }
        } else if let token = token ?? tokens.token {
            credential = .token(token)
        }
        let started: [String: Any]
        switch await api.post("/user-authenticators/passkey/authentication-options", body, credential) {
        case .failure(let failure): return AuthsignalResponse(data: nil, error: failure.error, errorCode: failure.errorCode)
        case .success(let object): started = object
        }
        guard let challengeID = started["challengeId"] as? String,
              let options = Self.decode(PublicKeyCredentialRequestOptionsJSON.self, started["options"])
        else { return AuthsignalResponse(error: "The authentication options are invalid.", errorCode: SdkErrorCode.sdkError.rawValue) }
        let assertion: AuthenticationResponseJSON
        do {
            assertion = try await authenticator.authenticate(options, autofill: autofill,
                                                             preferImmediatelyAvailableCredentials: preferImmediatelyAvailableCredentials)
        } catch {
            return Self.failure(error)
        }
        guard let assertionObject = Self.object(assertion) else {
            return AuthsignalResponse(error: "The assertion cannot be encoded.", errorCode: SdkErrorCode.sdkError.rawValue)
        }
        let verified: [String: Any]
        switch await api.post("/verify/passkey", ["challengeId": challengeID, "authenticationCredential": assertionObject, "deviceId": deviceID],
                              credential) {
        case .failure(let failure): return AuthsignalResponse(data: nil, error: failure.error, errorCode: failure.errorCode)
        case .success(let object): verified = object
        }
        let result = verified["accessToken"] as? String
        if let result { tokens.token = result }
        return AuthsignalResponse(data: SignInResponse(
            isVerified: verified["isVerified"] as? Bool ?? false, token: result, userId: verified["userId"] as? String,
            userAuthenticatorId: verified["userAuthenticatorId"] as? String, username: verified["username"] as? String,
            displayName: verified["userDisplayName"] as? String
        ))
    }

    // MARK: Device

    /// Cancels the ceremony in flight, if any.
    public func cancel() { authenticator.cancel() }

    /// Whether the device can run passkeys (the seed's property form).
    ///
    /// authsignal-ios 2.13.0 declares a method, `isSupported()`; that spelling still compiles, deprecated, and
    /// answers this property (see `Bool.callAsFunction()`).
    public var isSupported: Bool { authenticator.isSupported }

    /// Whether to offer creating a passkey: `true` when this device enrolled none (for `username`, when given) or the
    /// server no longer knows it (`invalid_credential`), `false` when it does; any other failure is `false` with its
    /// `error` and `errorCode` kept. The seed's `Bool` usage is `response.data ?? false`.
    public func shouldPromptToCreatePasskey(username: String? = nil) async -> AuthsignalResponse<Bool> {
        let key = username.map { Self.credentialKey + "_" + $0 } ?? Self.credentialKey
        guard let credentialID = storage.string(forKey: key) else { return AuthsignalResponse(data: true) }
        switch await api.get("/user-authenticators/passkey", query: [URLQueryItem(name: "credentialId", value: credentialID)], .tenant) {
        case .success: return AuthsignalResponse(data: false)
        case .failure(let failure) where failure.errorCode == "invalid_credential": return AuthsignalResponse(data: true)
        case .failure(let failure): return AuthsignalResponse(data: false, error: failure.error, errorCode: failure.errorCode)
        }
    }

    /// Whether this device enrolled a passkey.
    @available(*, deprecated, message: "Use shouldPromptToCreatePasskey(username:)")
    public func isAvailableOnDevice() async -> AuthsignalResponse<Bool> {
        AuthsignalResponse(data: storage.string(forKey: Self.credentialKey) != nil)
    }

    // MARK: Helpers

    private func begin() -> Bool {
        inFlight.withLock { running in
            guard !running else { return false }
            running = true
            return true
        }
    }

    private func end() { inFlight.withLock { $0 = false } }

    private static func inProgress<T>() -> AuthsignalResponse<T> {
        AuthsignalResponse(error: "A passkey operation is already in progress.", errorCode: SdkErrorCode.sdkError.rawValue)
    }

    private static func failure<T>(_ error: AuthsignalAuthenticatorError) -> AuthsignalResponse<T> {
        switch error {
        case .canceled: AuthsignalResponse(error: "The user canceled the passkey request.", errorCode: SdkErrorCode.userCanceled.rawValue)
        case .matchedExcludedCredential:
            AuthsignalResponse(error: "A passkey for this account is already on the device.", errorCode: SdkErrorCode.matchedExcludedCredential.rawValue)
        case .notSupported: AuthsignalResponse(error: "Passkeys are not supported on this device.", errorCode: SdkErrorCode.notSupported.rawValue)
        case .failed: AuthsignalResponse(error: "The passkey request failed.", errorCode: SdkErrorCode.sdkError.rawValue)
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ value: Any?) -> T? {
        guard let value, let data = try? JSONSerialization.data(withJSONObject: value) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    private static func object(_ value: some Encodable) -> Any? {
        guard let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }
}
