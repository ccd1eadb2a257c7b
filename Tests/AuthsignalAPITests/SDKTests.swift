import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import SesameServer
import SesameTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Swift SDK's Authsignal passkey surface (authsignal-ios 2.13.0's names) against a live server over loopback,
/// with the software authenticator.
@Suite struct SDKTests {
    /// A loopback server over a harness, and SDK instances pointed at it.
    final class Live: @unchecked Sendable {
        // @unchecked Sendable: set up once, then only read.
        let harness: Harness
        let server: HTTPServer
        let requests = Counter()

        init(_ backend: Backend) throws {
            harness = try Harness(backend)
            var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
            configuration.threadCount = 4
            server = harness.application.makeServer(configuration: configuration)
            try server.start()
        }

        deinit { server.shutdown() }

        var baseURL: String { "http://127.0.0.1:\(server.boundPort)/authsignal/v1" }

        /// An app install: its own authenticator (origin https://shop.example, as an iOS app's), storage and token cache.
        func app(delay: Duration? = nil, authenticator: SoftwareAuthenticator = SoftwareAuthenticator()) -> Authsignal {
            Authsignal(passkey: AuthsignalPasskey(
                tenantID: harness.tenantID, baseURL: baseURL, authenticator: SoftwareAuthsignalAuthenticator(authenticator),
                storage: MemoryAuthsignalStorage(), transport: CountingTransport(counter: requests, delay: delay), tokenCache: AuthsignalTokenCache()
            ))
        }
    }

    @Test("signUp without a token answers token_not_set and sends nothing", arguments: Backend.allCases)
    func tokenNotSet(backend: Backend) async throws {
        let live = try Live(backend)
        let response = await live.app().passkey.signUp(username: "jane")
        #expect(response.data == nil && response.errorCode == "token_not_set" && response.error?.isEmpty == false)
        #expect(live.requests.value == 0)
    }

    @Test("sign-up with a track token, prompt checks, named-action and step-up sign-ins, each validated by the backend",
          arguments: Backend.allCases)
    func fullFlow(backend: Backend) async throws {
        let live = try Live(backend)
        let harness = live.harness
        let authsignal = live.app()
        #expect(await authsignal.passkey.shouldPromptToCreatePasskey(username: "jane").data == true, "nothing enrolled on this device")
        authsignal.setToken(token: try #require(harness.track("user-1", "createPasskey")["token"] as? String))
        authsignal.setToken(token: "")  // ignored
        let signedUp = await authsignal.passkey.signUp(username: "jane", displayName: "Jane")
        let result = try #require(signedUp.data?.token, "\(signedUp.error ?? "")")
        #expect(harness.validate(result, user: "user-1", action: "createPasskey")["isValid"] as? Bool == true)
        #expect(await authsignal.passkey.shouldPromptToCreatePasskey(username: "jane").data == false)
        #expect(await authsignal.passkey.shouldPromptToCreatePasskey().data == false)
        #expect(await authsignal.passkey.shouldPromptToCreatePasskey(username: "john").data == true)

        let signedIn = await authsignal.passkey.signIn(action: "signInWithPasskey")
        let data = try #require(signedIn.data, "\(signedIn.error ?? "")")
        #expect(data.isVerified && data.userId == "user-1" && data.username == "jane" && data.displayName == "Jane" && data.userAuthenticatorId != nil)
        let validated = harness.validate(try #require(data.token), action: "signInWithPasskey")
        #expect(validated["isValid"] as? Bool == true && validated["userId"] as? String == "user-1")

        let stepUp = try #require(harness.track("user-1", "withdrawFunds")["token"] as? String)
        let confirmed = await authsignal.passkey.signIn(token: stepUp)
        #expect(confirmed.data?.isVerified == true)
        #expect(harness.validate(try #require(confirmed.data?.token), user: "user-1", action: "withdrawFunds")["isValid"] as? Bool == true)
        #expect(authsignal.passkey.isSupported)
        #expect(await authsignal.getDeviceID() == (await authsignal.getDeviceID()), "a stable device ID")
    }

    @Test("shouldPromptToCreatePasskey is true again once the server forgot the passkey (invalid_credential)", arguments: Backend.allCases)
    func promptAfterDeletion(backend: Backend) async throws {
        let live = try Live(backend)
        let authsignal = live.app()
        let token = try #require(live.harness.track("user-2", "createPasskey")["token"] as? String)
        #expect(await authsignal.passkey.signUp(token: token).data?.token != nil)
        #expect(await authsignal.passkey.shouldPromptToCreatePasskey().data == false)
        let listed = live.harness.send(.GET, "/users/user-2/authenticators", authorization: live.harness.serverAuthorization)
        let id = try #require((listed.json as? [[String: Any]])?.first?["userAuthenticatorId"] as? String)
        #expect(live.harness.send(.DELETE, "/users/user-2/authenticators/\(id)", authorization: live.harness.serverAuthorization).status == 200)
        let prompt = await authsignal.passkey.shouldPromptToCreatePasskey()
        #expect(prompt.data == true && prompt.error == nil)
        // And signing in with the forgotten passkey is the server's unknown_credential.
        let refused = await authsignal.passkey.signIn(action: "signIn")
        #expect(refused.data == nil && refused.errorCode == "unknown_credential" && refused.error?.isEmpty == false)
    }

    @Test("a second ceremony while one runs is refused with sdk_error; the first one finishes", arguments: Backend.allCases)
    func oneAtATime(backend: Backend) async throws {
        let live = try Live(backend)
        let authsignal = live.app(delay: .milliseconds(300))
        let token = try #require(live.harness.track("user-3", "createPasskey")["token"] as? String)
        async let first = authsignal.passkey.signUp(token: token)
        try await Task.sleep(for: .milliseconds(100))
        let second = await authsignal.passkey.signIn(action: "signIn")
        #expect(second.data == nil && second.errorCode == "sdk_error" && second.error?.contains("in progress") == true)
        #expect(await first.data?.token != nil)
    }

    @Test("device outcomes: no passkey is user_canceled, an existing one matched_excluded_credential or an empty success",
          arguments: Backend.allCases)
    func deviceOutcomes(backend: Backend) async throws {
        let live = try Live(backend)
        #expect(await live.app().passkey.signIn(action: "signIn").errorCode == "user_canceled")
        let device = SoftwareAuthenticator()
        let authsignal = live.app(authenticator: device)
        #expect(await authsignal.passkey.signUp(token: try #require(live.harness.track("user-4", "createPasskey")["token"] as? String)).data != nil)
        let again = try #require(live.harness.track("user-4", "addPasskey", ["scope": "add:authenticators"])["token"] as? String)
        #expect(await authsignal.passkey.signUp(token: again).errorCode == "matched_excluded_credential")
        let ignored = await authsignal.passkey.signUp(token: again, ignorePasskeyAlreadyExistsError: true)
        #expect(ignored.data == nil && ignored.error == nil && ignored.errorCode == nil)
        // A device without passkeys.
        let unsupported = AuthsignalPasskey(tenantID: live.harness.tenantID, baseURL: live.baseURL, authenticator: UnsupportedAuthsignalAuthenticator(),
                                            storage: MemoryAuthsignalStorage(), tokenCache: AuthsignalTokenCache())
        #expect(!unsupported.isSupported)
        #expect(await unsupported.signUp(token: again).errorCode == "not_supported")
        #expect(await unsupported.signIn(action: "signIn").errorCode == "not_supported")
    }

    @Test("server errors pass through with their code: an expired token, a token lacking add:authenticators", arguments: Backend.allCases)
    func serverErrors(backend: Backend) async throws {
        let live = try Live(backend)
        let token = try #require(live.harness.track("user-5", "createPasskey")["token"] as? String)
        live.harness.clock.advance(by: 601)
        let expired = await live.app().passkey.signUp(token: token)
        #expect(expired.errorCode == "expired_token" && expired.error?.isEmpty == false)
        let app = live.app()
        #expect(await app.passkey.signUp(token: try #require(live.harness.track("user-5", "createPasskey")["token"] as? String)).data != nil)
        let plain = try #require(live.harness.track("user-5", "addPasskey")["token"] as? String)
        #expect(await live.app().passkey.signUp(token: plain).errorCode == "forbidden")
        // Nothing listens here: network_error.
        let nowhere = Authsignal(passkey: AuthsignalPasskey(tenantID: "t", baseURL: "http://127.0.0.1:9/authsignal/v1",
                                                            authenticator: SoftwareAuthsignalAuthenticator(), storage: MemoryAuthsignalStorage(),
                                                            tokenCache: AuthsignalTokenCache()))
        #expect(await nowhere.passkey.signIn(action: "signIn").errorCode == "network_error")
    }

    @Test("isSupported() (authsignal-ios's method spelling) compiles and answers the isSupported property")
    func isSupportedMethodSpelling() {
        let software = AuthsignalPasskey(tenantID: "t", baseURL: "http://127.0.0.1:9/authsignal/v1",
                                         authenticator: SoftwareAuthsignalAuthenticator(), storage: MemoryAuthsignalStorage(),
                                         tokenCache: AuthsignalTokenCache())
        let unsupported = AuthsignalPasskey(tenantID: "t", baseURL: "http://127.0.0.1:9/authsignal/v1",
                                            authenticator: UnsupportedAuthsignalAuthenticator(), storage: MemoryAuthsignalStorage(),
                                            tokenCache: AuthsignalTokenCache())
        let spelling: any RealSDKSpelling = DeprecatedSpelling()
        #expect(software.isSupported)
        #expect(spelling.isSupportedCall(software) == software.isSupported)
        #expect(!unsupported.isSupported)
        #expect(spelling.isSupportedCall(unsupported) == unsupported.isSupported)
    }

    @Test("public initialisers let apps fake responses")
    func fakes() {
        let ok = AuthsignalResponse(data: SignInResponse(isVerified: true, token: "t", userId: "u"))
        #expect(ok.data?.userId == "u" && ok.error == nil)
        let failed = AuthsignalResponse<SignUpResponse>(data: nil, error: "e", errorCode: "c")
        #expect(failed.error == "e" && failed.errorCode == "c")
        #expect(UserActionState.challengeSucceeded == "CHALLENGE_SUCCEEDED" && SdkErrorCode.tokenNotSet.rawValue == "token_not_set")
    }
}

/// Calls `passkey.isSupported()` as code written against authsignal-ios does. The call is deprecated and the test
/// build treats warnings as errors, so it sits in a deprecated witness reached through a protocol requirement.
protocol RealSDKSpelling {
    func isSupportedCall(_ passkey: AuthsignalPasskey) -> Bool
}

/// The deprecated `isSupported()` call, wrapped so the test build stays free of warnings.
struct DeprecatedSpelling: RealSDKSpelling {
    @available(*, deprecated, message: "calls the deprecated isSupported() spelling on purpose")
    func isSupportedCall(_ passkey: AuthsignalPasskey) -> Bool { passkey.isSupported() }
}

/// Counts the SDK's requests, optionally slowing each down.
struct CountingTransport: AuthsignalTransport {
    let counter: Counter
    let delay: Duration?
    let inner = URLSessionAuthsignalTransport()

    func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        counter.increment()
        if let delay { try await Task.sleep(for: delay) }
        return try await inner.send(request)
    }
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
