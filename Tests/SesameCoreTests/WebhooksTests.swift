import Foundation
import Testing
@testable import SesameCore

@Suite struct StandardWebhooksTests {
    /// The vector of the Standard Webhooks reference libraries (standard-webhooks/standard-webhooks, libraries/*).
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let timestamp = 1_614_265_330
    static let body = Array(#"{"test": 2432232314}"#.utf8)
    static let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    static let now = Date(timeIntervalSince1970: TimeInterval(timestamp))

    @Test("reproduces the published signature vector and verifies it")
    func vector() throws {
        let key = try StandardWebhooks.key(fromSecret: Self.secret)
        #expect(key.count == 24)
        #expect(StandardWebhooks.signature(key: key, id: Self.id, timestamp: Self.timestamp, body: Self.body) == Self.expected)
        #expect(StandardWebhooks.verify(body: Self.body, id: Self.id, timestamp: String(Self.timestamp),
                                        signature: Self.expected, secrets: [Self.secret], now: Self.now))
        // The reference tests' "invalid signature": the last base64 digit changed.
        #expect(!StandardWebhooks.verify(body: Self.body, id: Self.id, timestamp: String(Self.timestamp),
                                         signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=",
                                         secrets: [Self.secret], now: Self.now))
    }

    @Test("a tampered body, another ID, another timestamp or another secret fails")
    func tampering() {
        func verify(body: [UInt8] = Self.body, id: String = Self.id, timestamp: String = String(Self.timestamp),
                    secrets: [String] = [Self.secret]) -> Bool {
            StandardWebhooks.verify(body: body, id: id, timestamp: timestamp, signature: Self.expected, secrets: secrets,
                                    now: Self.now)
        }
        #expect(verify())
        #expect(!verify(body: Array(#"{"test": 2432232315}"#.utf8)))
        #expect(!verify(body: Array(#"{"test":2432232314}"#.utf8)))
        #expect(!verify(body: Self.body + [0x0a]))
        #expect(!verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJel"))
        #expect(!verify(timestamp: String(Self.timestamp + 1)))
        #expect(!verify(secrets: [StandardWebhooks.newSecret()]))
        #expect(!verify(secrets: []))
    }

    @Test("rejects timestamps outside the tolerance, in both directions, and malformed ones")
    func tolerance() throws {
        let key = try StandardWebhooks.key(fromSecret: Self.secret)
        func verify(timestamp: Int, now: TimeInterval, tolerance: TimeInterval = 300) -> Bool {
            let signature = StandardWebhooks.signature(key: key, id: Self.id, timestamp: timestamp, body: Self.body)
            return StandardWebhooks.verify(body: Self.body, id: Self.id, timestamp: String(timestamp), signature: signature,
                                           secrets: [Self.secret], now: Date(timeIntervalSince1970: now),
                                           tolerance: tolerance)
        }
        let t = Self.timestamp
        #expect(verify(timestamp: t, now: TimeInterval(t + 300)))
        #expect(verify(timestamp: t, now: TimeInterval(t - 300)))
        #expect(!verify(timestamp: t, now: TimeInterval(t + 301)))
        #expect(!verify(timestamp: t, now: TimeInterval(t - 301)))
        #expect(verify(timestamp: t, now: TimeInterval(t + 3_000), tolerance: 3_600))
        for bad in ["", "hello", "+1614265330", "-1614265330", "1614265330.0", " 1614265330", "99999999999999999999"] {
            #expect(!StandardWebhooks.verify(body: Self.body, id: Self.id, timestamp: bad, signature: Self.expected,
                                             secrets: [Self.secret], now: Self.now), "\(bad)")
        }
    }

    @Test("missing headers and malformed or foreign signature entries fail; a matching entry among others passes")
    func headers() {
        func verify(id: String? = Self.id, timestamp: String? = String(Self.timestamp), signature: String?) -> Bool {
            StandardWebhooks.verify(body: Self.body, id: id, timestamp: timestamp, signature: signature,
                                    secrets: [Self.secret], now: Self.now)
        }
        #expect(!verify(id: nil, signature: Self.expected))
        #expect(!verify(id: "", signature: Self.expected))
        #expect(!verify(timestamp: nil, signature: Self.expected))
        #expect(!verify(signature: nil))
        #expect(!verify(signature: ""))
        #expect(!verify(signature: "v1a," + Self.expected.dropFirst(3)))
        #expect(!verify(signature: "v2," + Self.expected.dropFirst(3)))
        #expect(!verify(signature: "v1,not base64"))
        #expect(!verify(signature: String(Self.expected.dropFirst(3))))
        // As in the reference tests: the valid entry among invalid ones, of several versions.
        let several = ["v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
                       Self.expected, "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg=="]
        #expect(verify(signature: several.joined(separator: " ")))
    }

    @Test("two secrets give two signatures; either secret alone verifies the header (rotation)")
    func rotation() throws {
        let old = StandardWebhooks.newSecret()
        let new = StandardWebhooks.newSecret()
        let keys = [try StandardWebhooks.key(fromSecret: new), try StandardWebhooks.key(fromSecret: old)]
        let id = StandardWebhooks.newMessageID()
        let header = StandardWebhooks.signatureHeader(keys: keys, id: id, timestamp: Self.timestamp, body: Self.body)
        let entries = header.split(separator: " ").map(String.init)
        #expect(entries.count == 2)
        #expect(entries[0] == StandardWebhooks.signature(key: keys[0], id: id, timestamp: Self.timestamp, body: Self.body))
        #expect(entries[1] == StandardWebhooks.signature(key: keys[1], id: id, timestamp: Self.timestamp, body: Self.body))
        #expect(entries[0] != entries[1])
        #expect(entries.allSatisfy { $0.hasPrefix("v1,") && $0.count == 3 + 44 })
        for secrets in [[old], [new], [old, new], [StandardWebhooks.newSecret(), new]] {
            #expect(StandardWebhooks.verify(body: Self.body, id: id, timestamp: String(Self.timestamp), signature: header,
                                            secrets: secrets, now: Self.now))
        }
        #expect(!StandardWebhooks.verify(body: Self.body, id: id, timestamp: String(Self.timestamp), signature: header,
                                         secrets: [StandardWebhooks.newSecret()], now: Self.now))
        #expect(StandardWebhooks.signatureHeader(keys: [keys[0]], id: id, timestamp: Self.timestamp, body: Self.body)
                == entries[0])
    }

    @Test("new secrets are whsec_ + base64 of 32 random bytes; keys must decode to 24...64 bytes")
    func secrets() throws {
        let a = StandardWebhooks.newSecret()
        let b = StandardWebhooks.newSecret()
        #expect(a != b)
        #expect(a.hasPrefix("whsec_") && a.count == 6 + 44)
        #expect(try StandardWebhooks.key(fromSecret: a).count == 32)
        func secret(_ count: Int) -> String { "whsec_" + Data(repeating: 7, count: count).base64EncodedString() }
        #expect(try StandardWebhooks.key(fromSecret: secret(24)).count == 24)
        #expect(try StandardWebhooks.key(fromSecret: secret(64)).count == 64)
        // Missing padding is tolerated.
        let unpadded = secret(32).replacingOccurrences(of: "=", with: "")
        #expect(try StandardWebhooks.key(fromSecret: unpadded) == Array(repeating: 7, count: 32))
        let tooLong = secret(65)
        for bad in [secret(23), tooLong, "", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!",
                    "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] {
            #expect(throws: SesameError.code(.invalidArgument), "\(bad)") { try StandardWebhooks.key(fromSecret: bad) }
            do {
                _ = try StandardWebhooks.key(fromSecret: bad)
            } catch {
                #expect(bad.count < 12 || !error.debugDescription.contains(bad.dropFirst(6)))
            }
        }
    }

    @Test("message IDs are msg_ + 32 lowercase hex digits, unique, without dots")
    func messageIDs() {
        let ids = (0..<100).map { _ in StandardWebhooks.newMessageID() }
        #expect(Set(ids).count == 100)
        for id in ids {
            #expect(id.hasPrefix("msg_"))
            #expect(id.count == 36)
            #expect(id.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) })
        }
    }
}

@Suite struct EndpointAddressPolicyTests {
    typealias Policy = EndpointAddressPolicy

    /// (address, public?) — each refused range at its edges, and its public neighbours just outside.
    static let ipv4: [(String, Bool)] = [
        ("0.0.0.0", false), ("0.255.255.255", false), ("1.0.0.0", true),
        ("9.255.255.255", true), ("10.0.0.0", false), ("10.1.2.3", false), ("10.255.255.255", false), ("11.0.0.0", true),
        ("100.63.255.255", true), ("100.64.0.0", false), ("100.127.255.255", false), ("100.128.0.0", true),
        ("126.255.255.255", true), ("127.0.0.1", false), ("127.255.255.255", false), ("128.0.0.0", true),
        ("169.253.255.255", true), ("169.254.0.0", false), ("169.254.169.254", false), ("169.254.255.255", false),
        ("169.255.0.0", true),
        ("172.15.255.255", true), ("172.16.0.0", false), ("172.31.255.255", false), ("172.32.0.0", true),
        ("191.255.255.255", true), ("192.0.0.0", false), ("192.0.0.255", false), ("192.0.1.0", true),
        ("192.0.2.1", false), ("192.88.99.1", false), ("192.88.100.1", true),
        ("192.167.255.255", true), ("192.168.0.0", false), ("192.168.255.255", false), ("192.169.0.0", true),
        ("198.17.255.255", true), ("198.18.0.0", false), ("198.19.255.255", false), ("198.20.0.0", true),
        ("198.51.100.7", false), ("203.0.113.7", false), ("203.0.114.0", true),
        ("223.255.255.255", true), ("224.0.0.0", false), ("239.255.255.255", false), ("240.0.0.0", false),
        ("255.255.255.254", false), ("255.255.255.255", false),
        ("93.184.215.14", true), ("8.8.8.8", true), ("1.1.1.1", true),
    ]

    static let ipv6: [(String, Bool)] = [
        ("::", false), ("::1", false), ("::2", false), ("::a9fe:a9fe", false),  // ::/96 (IPv4-compatible) too
        ("fc00::", false), ("fd12:3456::1", false), ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("fe80::", false), ("fe80::1", false), ("febf:ffff::1", false), ("fec0::1", false),
        ("ff00::", false), ("ff02::1", false), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("100::1", false), ("1fff:ffff::1", false), ("4000::1", false),
        ("2001:db8::", false), ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false), ("2001:db9::1", true),
        ("2001:db7:ffff::1", true), ("2001::1", false), ("2001:0:4136:e378::1", false), ("2001:1ff::1", false),
        ("2001:200::1", true), ("3fff::1", false), ("3fff:fff::1", false), ("3fff:1000::1", true),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", true), ("2a00:1450:4001:80b::200e", true), ("2000::1", true),
        ("3ffe:ffff::1", true),
        // IPv4-mapped: judged by the IPv4 address.
        ("::ffff:127.0.0.1", false), ("::ffff:10.1.2.3", false), ("::ffff:169.254.169.254", false),
        ("::ffff:7f00:1", false), ("::ffff:93.184.215.14", true), ("::ffff:8.8.8.8", true),
        // NAT64 64:ff9b::/96: judged by the embedded IPv4 address; the local-use /48 is refused.
        ("64:ff9b::127.0.0.1", false), ("64:ff9b::a9fe:a9fe", false), ("64:ff9b::c0a8:101", false),
        ("64:ff9b::93.184.215.14", true), ("64:ff9b::808:808", true), ("64:ff9b:1::808:808", false),
        // 6to4 2002::/16: judged by the embedded IPv4 address.
        ("2002:7f00:1::1", false), ("2002:a01:203::1", false), ("2002:5db8:d70e::1", true),
    ]

    @Test("classifies IPv4 literals", arguments: ipv4)
    func classifyIPv4(_ address: String, _ expected: Bool) throws {
        let parsed = try #require(Policy.IPAddress(address))
        guard case .v4(let bytes) = parsed else { Issue.record("not IPv4: \(address)"); return }
        #expect(bytes.count == 4)
        #expect(Policy.isPublic(parsed) == expected, "\(address)")
        #expect(Policy.isPublic(address) == expected)
        #expect(Policy.isPublic(.v6(Array(repeating: 0, count: 10) + [0xff, 0xff] + bytes)) == expected, "mapped \(address)")
    }

    @Test("classifies IPv6 literals", arguments: ipv6)
    func classifyIPv6(_ address: String, _ expected: Bool) throws {
        let parsed = try #require(Policy.IPAddress(address))
        guard case .v6(let bytes) = parsed else { Issue.record("not IPv6: \(address)"); return }
        #expect(bytes.count == 16)
        #expect(Policy.isPublic(parsed) == expected, "\(address)")
    }

    @Test("parses only numeric literals and prints them canonically")
    func literals() {
        for text in ["localhost", "example.com", "1.2.3", "127.1", "0x7f.0.0.1", "2130706433", "[::1]", "::1%eth0",
                     "1.2.3.4.5", "256.0.0.1", "", " 1.2.3.4", "::ffff:1.2.3.4.5"] {
            #expect(Policy.IPAddress(text) == nil, "\(text)")
            #expect(!Policy.isPublic(text))
        }
        #expect(Policy.IPAddress("0:0:0:0:0:0:0:1")?.description == "::1")
        #expect(Policy.IPAddress("2001:DB8:0:0::1")?.description == "2001:db8::1")
        #expect(Policy.IPAddress("::ffff:127.0.0.1")?.description == "::ffff:127.0.0.1")
        #expect(Policy.IPAddress("93.184.215.14")?.description == "93.184.215.14")
        #expect(Policy.IPAddress("93.184.215.14") == .v4([93, 184, 215, 14]))
    }

    static let refusedURLs = [
        "https://localhost/hook", "https://LOCALHOST./hook", "https://api.localhost/hook", "https://127.0.0.1/",
        "https://127.0.0.1:8443/hook", "https://[::1]/", "https://[::1]:443/", "https://10.1.2.3/",
        "https://169.254.169.254/latest/meta-data/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:a9fe:a9fe]/",
        "https://[64:ff9b::a9fe:a9fe]/", "https://[fe80::1]/", "https://[fd00::1]/", "https://0.0.0.0/",
        "https://192.168.1.1/", "https://172.16.0.1/", "https://100.64.0.1/", "https://224.0.0.1/",
        "https://255.255.255.255/", "https://[2001:db8::1]/", "https://[::]/", "https://127.1/", "https://2130706433/",
    ]

    @Test("refuses loopback, private, link-local and reserved hosts", arguments: refusedURLs)
    func refusesPrivate(_ url: String) {
        #expect(throws: SesameError.code(.invalidArgument)) {
            try Policy.check(url: url, allowPrivate: false, allowHTTP: false)
        }
    }

    @Test("accepts public literals without any lookup and returns them")
    func acceptsPublic() throws {
        #expect(try Policy.check(url: "https://93.184.215.14/hook?x=1#f", allowPrivate: false, allowHTTP: false)
                == ["93.184.215.14"])
        #expect(try Policy.check(url: "HTTPS://93.184.215.14:8443", allowPrivate: false, allowHTTP: false)
                == ["93.184.215.14"])
        #expect(try Policy.check(url: "https://[2606:2800:21F:cb07:6820:80da:af6b:8b2c]:443/a/b",
                                 allowPrivate: false, allowHTTP: false) == ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"])
        #expect(try Policy.check(url: URL(string: "https://[::ffff:93.184.215.14]/")!, allowPrivate: false,
                                 allowHTTP: false) == ["::ffff:93.184.215.14"])
        // Every character RFC 3986 allows after the authority; the webhook worker's `URL(string:)` takes it too.
        let everyCharacter = "https://93.184.215.14/AZaz09-._~!$&'()*+,;=:@/%2F%a0%Ff?q=/?:@#frag/?:@"
        #expect(try Policy.endpoint(url: everyCharacter, allowPrivate: false, allowHTTP: false).target
                == "/AZaz09-._~!$&'()*+,;=:@/%2F%a0%Ff?q=/?:@")
        #expect(URL(string: everyCharacter) != nil)
    }

    @Test("returns the checked URL in the parts a client connects with: host, port, request target, Host header")
    func endpointParts() throws {
        let named = try Policy.endpoint(url: "HTTPS://93.184.215.14/hook?x=1&y=%20#fragment", allowPrivate: false, allowHTTP: false)
        #expect(named == Policy.Endpoint(isSecure: true, host: "93.184.215.14", port: 443, target: "/hook?x=1&y=%20",
                                         addresses: ["93.184.215.14"]))
        #expect(named.hostHeader == "93.184.215.14")
        let v6 = try Policy.endpoint(url: "https://[2606:2800:21F:cb07::1]:8443?q", allowPrivate: false, allowHTTP: false)
        #expect(v6.host == "2606:2800:21f:cb07::1" && v6.port == 8443 && v6.target == "/?q")
        #expect(v6.hostHeader == "[2606:2800:21f:cb07::1]:8443")
        let plain = try Policy.endpoint(url: "http://127.0.0.1:80", allowPrivate: true, allowHTTP: true)
        #expect(!plain.isSecure && plain.port == 80 && plain.target == "/" && plain.hostHeader == "127.0.0.1")
        let explicit = try Policy.endpoint(url: "https://93.184.215.14:443#", allowPrivate: false, allowHTTP: false)
        #expect(explicit.target == "/" && explicit.hostHeader == "93.184.215.14")
    }

    @Test("requires https unless http is allowed")
    func schemes() throws {
        #expect(throws: SesameError.code(.invalidArgument)) {
            try Policy.check(url: "http://93.184.215.14/", allowPrivate: false, allowHTTP: false)
        }
        #expect(try Policy.check(url: "http://93.184.215.14/", allowPrivate: false, allowHTTP: true) == ["93.184.215.14"])
        for url in ["ftp://93.184.215.14/", "ws://93.184.215.14/", "file:///etc/passwd", "gopher://93.184.215.14/",
                    "javascript://93.184.215.14/"] {
            #expect(throws: SesameError.code(.invalidArgument), "\(url)") {
                try Policy.check(url: url, allowPrivate: true, allowHTTP: true)
            }
        }
    }

    @Test("refuses malformed URLs, user information, bad ports and overlong URLs")
    func malformed() throws {
        let bad = [
            "", "/hook", "93.184.215.14/hook", "//93.184.215.14/hook", "https:93.184.215.14/hook", "https:///hook",
            "https://", "https://:443/", "https://user@93.184.215.14/", "https://user:pw@93.184.215.14/",
            "https://a@127.0.0.1:80@93.184.215.14/", "https://@93.184.215.14/", "https://93.184.215.14:0/",
            "https://93.184.215.14:65536/", "https://93.184.215.14:/", "https://93.184.215.14:80a/",
            "https://93.184.215.14:-1/", "https://exa mple.com/", "https://93.184.215.14\\@evil.example/",
            "https://[::1%25eth0]/", "https://[93.184.215.14]/", "https://[::1/", "https://[2606:2800::1]x/",
            "https://%39%33.184.215.14/", "https://93.184.215.14/\u{7f}", "https://exämple.com/",
            "https://93.184.215.14/a b", "https://93.184.215.14/\n",
            // Not RFC 3986 characters after the authority, bad percent-encodings, a second fragment mark.
            "https://93.184.215.14/<x>", "https://93.184.215.14/\"", "https://93.184.215.14/{a}",
            "https://93.184.215.14/a|b", "https://93.184.215.14/a^b", "https://93.184.215.14/a`b",
            "https://93.184.215.14/[a]", "https://93.184.215.14?q=]", "https://93.184.215.14/%zz",
            "https://93.184.215.14/%2", "https://93.184.215.14/a%", "https://93.184.215.14/%g0",
            "https://93.184.215.14/#a#b",
        ]
        for url in bad {
            #expect(throws: SesameError.code(.invalidArgument), "\(url)") {
                try Policy.check(url: url, allowPrivate: true, allowHTTP: true)
            }
        }
        let prefix = "https://93.184.215.14/"
        let longest = prefix + String(repeating: "a", count: 2048 - prefix.count)
        #expect(try Policy.check(url: longest, allowPrivate: false, allowHTTP: false) == ["93.184.215.14"])
        #expect(throws: SesameError.code(.invalidArgument)) {
            try Policy.check(url: longest + "a", allowPrivate: false, allowHTTP: false)
        }
    }

    @Test("private addresses pass when allowed (development)")
    func allowPrivate() throws {
        #expect(try Policy.check(url: "http://127.0.0.1:8080/hook", allowPrivate: true, allowHTTP: true) == ["127.0.0.1"])
        #expect(try Policy.check(url: "https://[::1]/", allowPrivate: true, allowHTTP: false) == ["::1"])
        #expect(try Policy.check(url: "https://10.1.2.3/", allowPrivate: true, allowHTTP: false) == ["10.1.2.3"])
        // localhost comes from /etc/hosts, not from external DNS.
        let local = try Policy.check(url: "https://localhost:8443/", allowPrivate: true, allowHTTP: false)
        #expect(!local.isEmpty && local.allSatisfy { !Policy.isPublic($0) })
    }

    @Test("errors name at most the host, never the path, query or user information")
    func genericErrors() {
        let urls = ["https://10.1.2.3/hook?token=s3cr3t-value", "https://user:s3cr3t-value@93.184.215.14/",
                    "http://93.184.215.14/s3cr3t-value", "https://[::1]/s3cr3t-value#s3cr3t-value"]
        for url in urls {
            do {
                try Policy.check(url: url, allowPrivate: false, allowHTTP: false)
                Issue.record("accepted \(url)")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(!error.debugDescription.contains("s3cr3t"), "\(error.debugDescription)")
            }
        }
        do {
            try Policy.check(url: "https://10.1.2.3/x", allowPrivate: false, allowHTTP: false)
        } catch {
            #expect(error.detail.contains("10.1.2.3"))
        }
    }

    @Test("resolves literals to themselves and localhost through the system resolver (no external DNS)")
    func resolution() throws {
        #expect(try Policy.resolve(host: "93.184.215.14") == ["93.184.215.14"])
        #expect(try Policy.resolve(host: "2001:DB8::1") == ["2001:db8::1"])
        let local = try Policy.resolve(host: "localhost")
        #expect(local.contains("127.0.0.1") || local.contains("::1"))
    }
}

@Suite struct WebhookScheduleTests {
    @Test("follows the Standard Webhooks example schedule and then gives up")
    func schedule() {
        let expected: [TimeInterval] = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600,
                                        24 * 3600]
        #expect(WebhookSchedule.maximumAttempts == 10)
        for (attempt, delay) in expected.enumerated() {
            #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: attempt, jitter: 0) == delay)
        }
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 10, jitter: 0) == nil)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 11, jitter: 0) == nil)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: -1, jitter: 0) == nil)
        // 75:35:05 from the first to the last attempt, as in the spec's table.
        let total = (0..<10).compactMap { WebhookSchedule.nextAttemptDelay(afterAttempt: $0, jitter: 0) }.reduce(0, +)
        #expect(total == 75 * 3600 + 35 * 60 + 5)
    }

    @Test("applies at most ±10% jitter")
    func jitter() {
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 1, jitter: 0.1) == 5.5)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 1, jitter: -0.1) == 4.5)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 9, jitter: 0.05) == 86_400 * 1.05)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 2, jitter: 0.5) == 330)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 2, jitter: -3) == 270)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 2, jitter: .nan) == 300)
        #expect(WebhookSchedule.nextAttemptDelay(afterAttempt: 0, jitter: 0.1) == 0)
        for _ in 0..<1000 {
            let jitter = WebhookSchedule.randomJitter()
            #expect(jitter >= -0.1 && jitter <= 0.1)
        }
    }

    @Test("2xx is delivered, 410 disables the endpoint, anything else retries")
    func classify() {
        for status in [200, 201, 202, 204, 299] { #expect(WebhookSchedule.classify(status: status) == .delivered) }
        #expect(WebhookSchedule.classify(status: 410) == .disableEndpoint)
        for status in [100, 199, 300, 301, 302, 304, 307, 308, 400, 401, 404, 409, 429, 500, 502, 503, 504] {
            #expect(WebhookSchedule.classify(status: status) == .retry, "\(status)")
        }
        #expect(WebhookSchedule.classify(status: nil) == .retry)
    }
}
