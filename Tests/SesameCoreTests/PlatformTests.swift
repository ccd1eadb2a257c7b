import Foundation
import Testing
@testable import SesameCore
import WebAuthn

@Suite struct PlatformValidationTests {
    @Test("normalises hostnames and accepts one leading wildcard only where allowed")
    func hostnames() throws {
        #expect(try PlatformValidation.hostname("Login.Example.COM", allowWildcard: false) == "login.example.com")
        #expect(try PlatformValidation.hostname("*.example.com", allowWildcard: true) == "*.example.com")
        #expect(try PlatformValidation.relyingPartyID("localhost") == "localhost")
        for bad in ["", "exa mple.com", "https://example.com", "example.com:443", "-a.example.com", "a..b", "*.com",
                    "a.*.example.com", "example.com/", "é.example.com", String(repeating: "a", count: 64) + ".com"] {
            #expect(throws: SesameError.self, "\(bad)") { try PlatformValidation.hostname(bad, allowWildcard: true) }
        }
        #expect(throws: SesameError.self) { try PlatformValidation.relyingPartyID("*.example.com") }
    }

    @Test("checks Android package names and SHA-256 fingerprints")
    func android() throws {
        #expect(try PlatformValidation.androidPackageName("com.example.app_2") == "com.example.app_2")
        for bad in ["app", "com..app", "1com.app", "com.app-x", "com.app."] {
            #expect(throws: SesameError.self, "\(bad)") { try PlatformValidation.androidPackageName(bad) }
        }
        let text = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
        let bytes = try PlatformValidation.sha256Fingerprint(text)
        #expect(bytes == Array(0..<32))
        #expect(PlatformValidation.fingerprintText(bytes) == text)
        #expect(try PlatformValidation.sha256Fingerprint(text.replacingOccurrences(of: ":", with: "").lowercased()) == bytes)
        for bad in ["AB:CD", String(repeating: "G", count: 64), String(repeating: "A", count: 66)] {
            #expect(throws: SesameError.self) { try PlatformValidation.sha256Fingerprint(bad) }
        }
    }

    @Test("checks Apple team and bundle IDs")
    func apple() throws {
        #expect(try PlatformValidation.appleTeamID("ABCDE12345") == "ABCDE12345")
        #expect(try PlatformValidation.appleBundleID("com.example.App-1") == "com.example.App-1")
        for bad in ["ABCDE1234", "abcde12345", "ABCDE12345X"] {
            #expect(throws: SesameError.self) { try PlatformValidation.appleTeamID(bad) }
        }
        for bad in ["", ".com.app", "com..app", "com.app_x"] {
            #expect(throws: SesameError.self) { try PlatformValidation.appleBundleID(bad) }
        }
    }
}

@Suite struct RelyingPartyTests {
    static let fingerprint = Array(repeating: UInt8(0xAB), count: 32)
    static let configuration = ProjectConfiguration(
        relyingPartyID: "example.com", relyingPartyName: "Example",
        platforms: [.web(hostname: "example.com"), .web(hostname: "*.example.com"), .web(hostname: "example.com"),
                    .android(packageName: "com.example.app", sha256Fingerprints: [fingerprint]),
                    .apple(teamID: "ABCDE12345", bundleID: "com.example.App")])

    @Test("computes accepted origins from platforms, without duplicates")
    func origins() {
        #expect(Self.configuration.acceptedOrigins == [
            "https://example.com", "https://*.example.com", "android:apk-key-hash:q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s",
        ])
    }

    @Test("gives http://localhost requests the separate localhost relying party when a localhost web platform exists")
    func localhost() throws {
        // The localhost relying party needs its web platform (Appwrite's spec §4.4), as ceremonies always required.
        var configuration = Self.configuration
        #expect(try RelyingParties.policy(for: configuration, requestOrigin: "http://localhost:5173").id == "example.com")
        configuration.platforms.append(.web(hostname: "localhost"))
        let local = try RelyingParties.policy(for: configuration, requestOrigin: "http://localhost:5173")
        #expect(local.id == "localhost" && local.origins == ["http://localhost:5173"])
        #expect(try RelyingParties.policy(for: configuration, requestOrigin: "http://localhost").id == "localhost")
        #expect(try RelyingParties.policy(for: configuration, requestOrigin: "http://localhost:65535").id == "localhost")
        for other in ["https://localhost:5173", "http://localhost.evil.com", "http://localhost:", "http://localhost:99999",
                      "http://localhost:80/x", "http://localhost:\u{663}\u{660}\u{660}\u{660}", "http://localhost:123456", "http://localhost:65536",
                      "https://example.com", nil] {
            #expect(try RelyingParties.policy(for: configuration, requestOrigin: other).id == "example.com", "\(other ?? "nil")")
        }
        #expect(configuration.acceptedOrigins.last == "http://localhost")
    }

    @Test("lists exactly what a ceremony accepts: a web platform on another domain contributes nothing")
    func acceptedIsWhatCeremoniesAccept() throws {
        var configuration = Self.configuration
        configuration.platforms += [.web(hostname: "shop.example.net"), .web(hostname: "*.example.net")]
        let policy = try RelyingParties.policy(for: configuration, requestOrigin: "https://shop.example.net")
        #expect(policy.id == "example.com" && Set(policy.origins) == Set(configuration.acceptedOrigins))
        #expect(!configuration.acceptedOrigins.contains { $0.contains("example.net") }, "\(configuration.acceptedOrigins)")
        // CORS still lets any web platform's browser call the account API.
        #expect(configuration.allowsBrowserOrigin("https://shop.example.net") && configuration.allowsBrowserOrigin("https://a.example.net"))
        #expect(!configuration.allowsBrowserOrigin("https://example.net") && !configuration.allowsBrowserOrigin("https://evil.example"))
    }

    @Test("no usable relying party is no_relying_party, saying which web platform to add")
    func noRelyingParty() throws {
        let offDomain = ProjectConfiguration(relyingPartyID: "shop.example", relyingPartyName: "Shop", platforms: [.web(hostname: "other.example")])
        let error = try #require(throws: SesameError.self) { try RelyingParties.policy(for: offDomain, requestOrigin: "https://other.example") }
        #expect(error.code == .noRelyingParty && error.detail.contains("Web platform for shop.example"), "\(error.debugDescription)")
        #expect(offDomain.acceptedOrigins.isEmpty)
        let noID = ProjectConfiguration(relyingPartyID: "", relyingPartyName: "Shop", platforms: [.web(hostname: "shop.example")])
        #expect(throws: SesameError.code(.noRelyingParty)) { try RelyingParties.policy(for: noID, requestOrigin: nil) }
        #expect(noID.acceptedOrigins.isEmpty)
    }
}

@Suite struct WellKnownFileTests {
    func json(_ bytes: [UInt8]) -> Any { try! JSONSerialization.jsonObject(with: Data(bytes)) }

    @Test("apple-app-site-association lists the Apple apps as webcredentials")
    func aasa() {
        let object = json(WellKnownFiles.appleAppSiteAssociation(RelyingPartyTests.configuration)) as! [String: [String: [String]]]
        #expect(object["webcredentials"]?["apps"] == ["ABCDE12345.com.example.App"])
    }

    @Test("assetlinks.json grants get_login_creds and handle_all_urls to each Android app")
    func assetLinks() {
        let statements = json(WellKnownFiles.assetLinks(RelyingPartyTests.configuration)) as! [[String: Any]]
        #expect(statements.count == 1)
        #expect(statements[0]["relation"] as? [String] == [
            "delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls",
        ])
        let target = statements[0]["target"] as! [String: Any]
        #expect(target["namespace"] as? String == "android_app")
        #expect(target["package_name"] as? String == "com.example.app")
        #expect(target["sha256_cert_fingerprints"] as? [String] == [PlatformValidation.fingerprintText(RelyingPartyTests.fingerprint)])
    }
}
