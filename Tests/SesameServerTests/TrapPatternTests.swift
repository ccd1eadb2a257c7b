import Foundation
import Testing

/// Keeps trap-prone code out of the modules request data flows through (see CONTRIBUTING.md, "Request data never
/// traps"). Swift cannot catch a trap, and one kills the whole server, so these patterns are refused in source:
///
/// - `try!`, `as!` and postfix `!` (force unwrap): state an invariant with `precondition`/`preconditionFailure`, or
///   handle the `nil`/error;
/// - `unsafelyUnwrapped` and `numericCast`;
/// - an integer initializer (`Int(…)`, `Int64(…)`, `UInt32(…)`, …) whose argument looks like a floating-point value
///   (a `Double`, `TimeInterval`, seconds, lifetime, duration, number, `rounded`, `* 1000`): `Int(1e300)` traps.
///   Client numbers go through `ClientNumber` instead; a conversion of a server-side value may stay when its line
///   says why it cannot trap, in a `// trap-safe: <reason>` comment.
///
/// The check is textual, so it is a net, not a proof: the face fuzzer (`sesame-face-fuzz`) is the second line.
@Suite struct TrapPatternTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources")
        .standardized
    /// Every module a request's data passes through: HTTP, the faces, the server assembly, the domain and storage; and
    /// the Swift ML-DSA verifier, which decodes client-supplied keys and signatures itself (no OpenSSL in between).
    static let modules = ["SesameHTTP", "AppwriteAPI", "BotShieldAPI", "AuthsignalAPI", "SesameServer", "SesameCore", "SesameStore", "SesameCrypto/MLDSA"]
    /// The one place a client number becomes an integer.
    static let exempt: Set<String> = ["SesameHTTP/ClientNumber.swift"]

    struct Finding: CustomStringConvertible {
        let file: String, line: Int, rule: String, text: String
        var description: String { "\(file):\(line): \(rule): \(text)" }
    }

    /// The findings in one line of Swift, after string literals and comments are blanked out.
    static func findings(in rawLine: String) -> [String] {
        if rawLine.contains("trap-safe:") { return [] }
        let code = stripCommentsAndStrings(rawLine)
        var rules: [String] = []
        if code.contains("try!") { rules.append("try!") }
        if code.contains("as!") { rules.append("as!") }
        if code.contains("unsafelyUnwrapped") || code.contains("numericCast(") { rules.append("unchecked conversion") }
        if code.contains(/[A-Za-z0-9_)\]]![^=]|[A-Za-z0-9_)\]]!$/) { rules.append("force unwrap") }
        for match in code.matches(of: /(?:^|[^A-Za-z0-9_.])U?Int(?:8|16|32|64)?\(/) {
            let argument = balancedArgument(code[match.range.upperBound...])
            if argument.contains(/^\s*(exactly|truncatingIfNeeded|clamping|bitPattern|ascii):/) { continue }
            if argument.contains(/(?i)double|float|timeinterval|rounded|seconds|lifetime|duration|number|\*\s*1000|\/\s*1000/) {
                rules.append("integer from a floating-point value")
            }
        }
        return rules
    }

    /// `line` with the contents of string literals emptied and any `//` comment removed.
    static func stripCommentsAndStrings(_ line: String) -> String {
        var out = ""
        var inString = false, escaped = false
        var previous: Character = " "
        for character in line {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" {
                    inString = false
                    out.append(character)
                }
            } else if character == "\"" {
                inString = true
                out.append(character)
            } else if character == "/" && previous == "/" {
                out.removeLast()
                break
            } else {
                out.append(character)
            }
            previous = character
        }
        return out
    }

    /// The text up to the parenthesis that closes the one just opened.
    static func balancedArgument(_ rest: Substring) -> Substring {
        var depth = 1
        var end = rest.startIndex
        while end < rest.endIndex {
            if rest[end] == "(" { depth += 1 } else if rest[end] == ")" {
                depth -= 1
                if depth == 0 { break }
            }
            end = rest.index(after: end)
        }
        return rest[rest.startIndex..<end]
    }

    @Test("no trap-prone pattern in the modules request data flows through")
    func noTrapPatterns() throws {
        var findings: [Finding] = []
        var scanned = 0
        for module in Self.modules {
            let folder = Self.sources.appendingPathComponent(module)
            let files = try #require(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            for file in files.sorted() where file.hasSuffix(".swift") && !Self.exempt.contains("\(module)/\(file)") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                scanned += 1
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    for rule in Self.findings(in: String(line)) {
                        findings.append(Finding(file: "\(module)/\(file)", line: index + 1, rule: rule,
                                                text: line.trimmingCharacters(in: .whitespaces)))
                    }
                }
            }
        }
        #expect(scanned > 50, "the scan found only \(scanned) files: is the path right?")
        #expect(findings.isEmpty, "\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test("the scan catches each pattern it promises to catch, and spares the checked forms", arguments: [
        ("let n = Int(number)", true), ("x = Int(body.length!)", true), ("let v = try! decode()", true),
        ("let c = value as! String", true), ("let t = Int64(date.timeIntervalSince1970)", true),
        ("let m = Int((seconds * 1000).rounded())", true), ("let p = pointer.unsafelyUnwrapped", true),
        ("let w = Int(exactly: number)", false), ("let b = UInt8(ascii: \"a\")", false), ("if a != b {}", false),
        ("let s = \"wow!\" // really!", false), ("let t = Int64(now.timeIntervalSince1970)  // trap-safe: server clock", false),
        ("let n = Int(text)", false), ("let u = Int(byte >> 4)", false), ("guard !flag else { return }", false),
    ])
    func scannerSelfTest(line: String, flagged: Bool) {
        #expect(Self.findings(in: line).isEmpty != flagged, "\(line): \(Self.findings(in: line))")
    }
}
