import Foundation
import SesameHTTP

/// SplitMix64: small, fast, and the same sequence for the same seed on every machine.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}

/// Builds one request for an operation: mostly well-formed with real IDs and credentials, with a few parts broken in
/// the ways hostile clients break them (wrong JSON types, huge and fractional numbers, NULs, deep nesting, long
/// strings, bad UTF-8, broken JSON, garbage headers).
struct RequestGenerator {
    let world: World
    var random: SeededRandom

    /// Numbers that have trapped or could trap a careless conversion.
    static let hostileNumbers = [
        "1e300", "-1e300", "123456789012345678901234567890123456789", "-123456789012345678901234567890123456789",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "4294967296",
        "2147483648", "-2147483649", "1.5", "-0", "0", "-1", "1e-400", "1E400", "0.000001", "65536", "3600.5", "1e19",
    ]

    /// Strings that break naive handling.
    static let hostileStrings = [
        "", " ", "\\u0000", "a\\u0000b", "fuzz@example.org\\u0000", "\\ud800", "\\udfff\\ud800", "..", "../../etc/passwd",
        "%00", "%", "unique()", "recent()", "current", "' OR 1=1 --", "\\\"", "\\\\", "<script>", "\\u202e", "é",
        "\\uFFFF", "𝕏", "\\n", "\\r\\n", "a@b", "@", "a@b.", "-", "_", ".", "*", "null", "true", "0", "-1", "1e300",
    ]

    init(world: World, seed: UInt64) {
        self.world = world
        random = SeededRandom(seed: seed)
    }

    mutating func request(for operation: Operation) -> HTTPRequest {
        var path = operation.path
        var pathParameters: [String: String] = [:]
        for name in operation.pathParameters {
            let value = random.chance(75) ? goodValue(name) : hostileText()
            pathParameters[name] = value
            path = path.replacingOccurrences(of: "{\(name)}", with: value)
        }
        var method = operation.method
        if random.chance(2) { method = random.pick(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "BREW", ""]) }

        var query: [String: String] = [:]
        for name in operation.queryParameters where random.chance(85) {
            query[name] = random.chance(75) ? goodValue(name) : hostileText()
        }
        if method == "GET" && random.chance(60) { addQueries(to: &query) }
        if random.chance(5) { query[hostileText()] = hostileText() }
        if random.chance(5) { query["total"] = random.pick(["false", "true", "", "0", "\u{0}"]) }

        let headers = headers(for: operation, method: method)
        let body = body(for: operation, method: method)
        let address = random.chance(90) ? "127.0.\(random.pick([0, 1, 2]))." + String(Int.random(in: 1...250, using: &random))
            : random.pick(["", "::1", "not an address", "999.1.1.1"])
        return HTTPRequest(method: HTTPMethod(rawValue: method), path: path, query: query, headers: headers, body: body,
                           remoteAddress: address)
    }

    // MARK: Parts

    private mutating func goodValue(_ name: String) -> String {
        if let values = world.values[name], !values.isEmpty { return random.pick(values) }
        return random.pick(["x", "abc", "1", world.userID])
    }

    /// A hostile string, as raw text (the JSON escapes of `hostileStrings` decoded where they stand for characters).
    private mutating func hostileText() -> String {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return String(repeating: random.pick(["a", "é", "%", "/"]), count: random.pick([37, 129, 1000, 5000]))
        case 1: return random.pick(Self.hostileNumbers)
        case 2: return "\u{0}" + random.pick(["", "a", world.userID])
        default:
            let raw = random.pick(Self.hostileStrings)
            return raw.replacingOccurrences(of: "\\u0000", with: "\u{0}").replacingOccurrences(of: "\\n", with: "\n")
                .replacingOccurrences(of: "\\r", with: "\r").replacingOccurrences(of: "\\\\", with: "\\")
                .replacingOccurrences(of: "\\\"", with: "\"")
        }
    }

    /// Appwrite list queries: well-formed ones on real attributes, and broken ones.
    private mutating func addQueries(to query: inout [String: String]) {
        let count = random.pick([1, 1, 2, 3, 101])
        let indexed = random.chance(50)
        for index in 0..<count {
            let key = indexed ? "queries[\(index)]" : "queries[]"
            query[key] = queryJSON()
        }
    }

    private mutating func queryJSON() -> String {
        let method = random.pick(["limit", "offset", "equal", "notEqual", "orderAsc", "orderDesc", "cursorAfter", "cursorBefore",
                                  "search", "", "\u{0}"])
        let attribute = random.pick(["name", "name", "$id", "$createdAt", "email", "hostname", "accessedAt", "nope", ""])
        var values: [String] = []
        for _ in 0..<random.pick([0, 1, 1, 2, 30]) {
            values.append(random.chance(50) ? random.pick(Self.hostileNumbers) : jsonValue(depth: 0))
        }
        if random.chance(10) { return random.pick(["{", "[]", "null", "1e300", "\"limit\"", "{\"method\":1e300}", ""]) }
        var members = ["\"method\":\(jsonString(method))"]
        if random.chance(80) { members.append("\"attribute\":\(jsonString(attribute))") }
        if random.chance(90) { members.append("\"values\":[\(values.joined(separator: ","))]") }
        return "{" + members.joined(separator: ",") + "}"
    }

    private mutating func headers(for operation: Operation, method: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if operation.face == .appwrite {
            headers.add("X-Appwrite-Project", random.chance(90) ? world.projectID : hostileText())
            // Mostly the credential the operation asks for, so requests get past authentication to the code behind it.
            let wanted = operation.security.contains("appwriteSession") ? 0 : operation.security.contains("appwriteKey") ? 4 : nil
            switch random.chance(75) ? wanted ?? Int.random(in: 0..<10, using: &random) : Int.random(in: 0..<10, using: &random) {
            case 0...3: headers.add("X-Appwrite-Session", world.sessionSecret)
            case 4...6: headers.add("X-Appwrite-Key", random.chance(90) ? world.apiKey : hostileText())
            case 7: headers.add("X-Appwrite-JWT", random.pick(["a.b.c", "eyJ.eyJ.x", hostileText(), String(repeating: "a.", count: 3000)]))
            case 8: headers.add("Cookie", "a_session_\(world.projectID)=\(random.chance(50) ? world.sessionSecret : hostileText())")
            default: headers.add("X-Fallback-Cookies", random.pick(["{", "[]", "{\"a_session_\(world.projectID)\":1e300}",
                                                                    "{\"a_session_\(world.projectID)\":\"\(world.sessionSecret)\"}"]))
            }
        } else if operation.path.hasPrefix("/operations/sdk") || operation.path.hasPrefix("/operations/verification") {
            let credential = random.chance(85) ? random.pick([world.partnerKey, world.grant]) : hostileText()
            if random.chance(90) { headers.add("Authorization", "Bearer " + credential) }
        } else if operation.face == .authsignal {
            headers.add("Authorization", authsignalAuthorization(client: operation.path.hasPrefix("/authsignal/v1/client")))
        } else if operation.path.hasPrefix("/api/v1") {
            if random.chance(90) { headers.add("Authorization", "Bearer " + (random.chance(85) ? world.apiKey : hostileText())) }
        }
        if method != "GET" || random.chance(10) {
            headers.add("Content-Type", random.chance(90) ? "application/json" : random.pick(["text/plain", "", "application/json; charset=\u{0}",
                                                                                            "multipart/form-data", "application/x-www-form-urlencoded"]))
        }
        if random.chance(30) {
            headers.add("Origin", random.pick([World.origin, "https://evil.example", "http://localhost:3000", "null", hostileText()]))
        }
        if random.chance(10) { headers.add("X-Forwarded-Proto", random.pick(["https", "http", hostileText()])) }
        if random.chance(10) { headers.add("User-Agent", hostileText()) }
        if random.chance(5) { headers.add("Host", random.pick([World.rpID, "", hostileText()])) }
        if random.chance(3) { headers.add("Content-Length", random.pick(["-1", "abc", "99999999999999999999"])) }
        return headers
    }

    /// Mostly a good credential of the Authsignal face: the tenant secret (server API), or a track token or the tenant
    /// ID in the iOS, Android or web encoding (client API).
    private mutating func authsignalAuthorization(client: Bool) -> String {
        guard random.chance(85) else { return random.pick(["Basic " + hostileText(), "Bearer " + hostileText(), "Basic", "Bearer a.b.c", ""]) }
        guard client else { return "Basic " + Data("\(world.authsignalSecret):".utf8).base64EncodedString() }
        let tenant = Data("\(world.projectID):".utf8).base64EncodedString()
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return "Bearer " + world.authsignalToken
        case 1: return "Basic " + tenant
        case 2: return "Basic " + tenant.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        default: return "Basic " + Data(world.projectID.utf8).base64EncodedString()
        }
    }

    private mutating func body(for operation: Operation, method: String) -> [UInt8] {
        if random.chance(4) { return rawBody() }
        guard let properties = operation.bodyProperties else {
            return random.chance(80) ? [] : Array(jsonValue(depth: 0).utf8)
        }
        var members: [String] = []
        for (name, type) in properties where random.chance(85) {
            let value: String
            if name == "credential" || name == "response", random.chance(70), !world.credentials.isEmpty {
                value = mutatedCredential()
            } else if random.chance(75) {
                value = typedValue(name: name, type: type)
            } else {
                value = jsonValue(depth: 0)
            }
            members.append("\(jsonString(name)):\(value)")
        }
        if random.chance(5) { members.append("\(jsonString(hostileText())):\(jsonValue(depth: 0))") }
        if random.chance(5), let first = members.first { members.append(first) }  // a duplicate key
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }

    /// A value of the schema's type, usually a good one.
    private mutating func typedValue(name: String, type: String) -> String {
        switch type {
        case "number", "integer":
            return random.chance(50) ? random.pick(["6", "60", "900", "3600", "300", "10", "128", "4"]) : random.pick(Self.hostileNumbers)
        case "boolean": return random.pick(["true", "false"])
        case "array": return "[" + (0..<random.pick([0, 1, 2])).map { _ in jsonString(random.chance(70) ? "AB:CD" : hostileText()) }
            .joined(separator: ",") + "]"
        case "object": return random.chance(50) ? "{}" : jsonValue(depth: 0)
        default: return jsonString(random.chance(70) ? goodValue(name) : hostileText())
        }
    }

    /// Any JSON value, often hostile.
    private mutating func jsonValue(depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 8), using: &random) {
        case 0: return random.pick(Self.hostileNumbers)
        case 1: return "\"" + random.pick(Self.hostileStrings) + "\""
        case 2: return random.pick(["true", "false", "null"])
        case 3: return jsonString(goodValue(random.pick(Array(world.values.keys).sorted())))
        case 4: return "\"" + String(repeating: "x", count: random.pick([64, 4097, 60_000])) + "\""
        case 5: return "[" + (0..<random.pick([0, 1, 3])).map { _ in jsonValue(depth: depth + 1) }.joined(separator: ",") + "]"
        case 6: return "{" + (0..<random.pick([0, 1, 3])).map { _ in
            "\(jsonString(random.pick(["id", "rawId", "type", "response", "clientDataJSON", "a"]))):\(jsonValue(depth: depth + 1))"
        }.joined(separator: ",") + "}"
        default:
            let depth = random.pick([64, 1000, 20_000])
            return String(repeating: random.chance(50) ? "[" : "{\"a\":", count: depth)
        }
    }

    /// A body that is not a JSON object at all.
    private mutating func rawBody() -> [UInt8] {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return [0xFF, 0xFE, 0x7B, 0x7D]
        case 1: return Array("\u{FEFF}{}".utf8)
        case 2: return Array("{\"a\":".utf8)
        case 3: return [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D]  // invalid UTF-8 inside a key
        case 4: return Array(String(repeating: "[", count: 32_000).utf8)
        default: return Array(random.pick(["[]", "null", "1e300", "\"text\"", "{}{}", "{\"a\":1}garbage"]).utf8)
        }
    }

    /// One of the genuine WebAuthn responses, sometimes with one part swapped or damaged.
    private mutating func mutatedCredential() -> String {
        var text = random.pick(world.credentials)
        guard random.chance(60) else { return text }
        let fields = ["\"id\"", "\"rawId\"", "\"type\"", "\"clientDataJSON\"", "\"authenticatorData\"", "\"signature\"",
                      "\"userHandle\"", "\"attestationObject\"", "\"transports\"", "\"authenticatorAttachment\""]
        let field = random.pick(fields)
        guard let range = text.range(of: field + ":") else { return text }
        // Replace the value that follows the key up to the next comma or brace with something else.
        let rest = text[range.upperBound...]
        let end = rest.firstIndex(where: { $0 == "," || $0 == "}" }) ?? rest.endIndex
        text.replaceSubrange(range.upperBound..<end, with: jsonValue(depth: 2))
        return text
    }

    /// `text` as a JSON string literal (control characters escaped, so NULs travel as `\u0000`).
    private func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
