// sesame-face-fuzz: structured requests, most of them hostile, through the router into every route of every face, in
// process, against a real SQLite database. Every operation comes from the server's own OpenAPI document, so a new
// route is fuzzed as soon as it is documented (and OpenAPITests keeps the document complete).
//
//   sesame-face-fuzz [--seconds N] [--seed S] [--count N] [--last FILE]
//
// Checks each answer (see Oracle.swift): no 5xx, a Content-Type, errors in the face's shape. A trap cannot be caught:
// it ends this process (exit 132 or 133), and FILE (default .build/face-fuzz-last-request.txt) then holds the request
// that caused it. The same seed gives the same requests, so `--seed S --count N` replays a run. Exit 0 when every
// answer passed, 1 when any failed, 2 for a usage or setup error.
import Foundation
import SesameHTTP
import SesameServer

#if canImport(Glibc)
import Glibc
#endif

struct Options {
    var seconds = 60.0
    var seed = UInt64.random(in: 1...UInt64(UInt32.max))
    var count = Int.max
    var last = ".build/face-fuzz-last-request.txt"

    init(_ arguments: [String]) {
        var rest = arguments[...]
        func value() -> String {
            guard let next = rest.popFirst() else { Self.usage() }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--seconds":
                guard let number = Double(value()), number >= 0 else { Self.usage() }
                seconds = number
            case "--seed":
                guard let number = UInt64(value()) else { Self.usage() }
                seed = number
            case "--count":
                guard let number = Int(value()), number > 0 else { Self.usage() }
                count = number
            case "--last": last = value()
            default: Self.usage()
            }
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: sesame-face-fuzz [--seconds N] [--seed S] [--count N] [--last FILE]\n".utf8))
        exit(2)
    }
}

/// Keeps the request being answered in a file, so the one that trapped the process is there after it died.
struct LastRequest {
    let descriptor: Int32
    init(path: String) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    }
    func record(_ text: String) {
        guard descriptor >= 0 else { return }
        let bytes = Array(text.utf8)
        _ = ftruncate(descriptor, 0)
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}

/// The request as a replayable text: method, path, query, headers, then the body.
func describe(_ request: HTTPRequest, index: Int, seed: UInt64) -> String {
    var text = "# seed \(seed), request \(index + 1)\n\(request.method.rawValue) \(request.path.debugDescription)\n"
    for (name, value) in request.query.sorted(by: { $0.key < $1.key }) { text += "query \(name.debugDescription)=\(value.debugDescription)\n" }
    for (name, value) in request.headers { text += "header \(name): \(value.debugDescription)\n" }
    text += "remote \(request.remoteAddress.debugDescription)\n\n" + String(decoding: request.body, as: UTF8.self).debugDescription + "\n"
    return text
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
/// The largest body the server accepts by default: anything longer is answered 413 before the router sees it.
let maximumBody = HTTPServer.Configuration().maximumBodySize

let world: World
do {
    world = try World()
} catch {
    FileHandle.standardError.write(Data("sesame-face-fuzz: setup failed: \(error)\n".utf8))
    exit(2)
}
defer { world.tearDown() }

let document = world.application.router.respond(to: HTTPRequest(method: .GET, path: "/openapi.json")).body
let operations: [Operation]
do {
    operations = try loadOperations(from: document)
} catch {
    FileHandle.standardError.write(Data("sesame-face-fuzz: \(error)\n".utf8))
    exit(2)
}

print("sesame-face-fuzz: \(operations.count) operations from /openapi.json, seed \(options.seed), \(options.seconds) s")
var generator = RequestGenerator(world: world, seed: options.seed)
let last = LastRequest(path: options.last)
let deadline = Date().addingTimeInterval(options.seconds)
var statuses: [Int: Int] = [:]
var answeredPerOperation: [String: Int] = [:]
var failures: [(String, String)] = []
var failureCount = 0
var sent = 0

while sent < options.count && (sent % 64 != 0 || Date() < deadline) {
    let operation = operations[sent % operations.count]
    var request = generator.request(for: operation)
    if request.body.count > maximumBody { request.body = Array(request.body.prefix(maximumBody)) }
    let description = describe(request, index: sent, seed: options.seed)
    last.record(description)
    let response = world.application.router.respond(to: request)
    sent += 1
    statuses[response.status, default: 0] += 1
    answeredPerOperation[operation.description, default: 0] += 1
    if let problem = check(response, face: operation.face, request: request) {
        failureCount += 1
        if failures.count < 20 {
            failures.append((problem, description + "-> \(response.status) " + String(decoding: response.body.prefix(400), as: UTF8.self)))
        }
    }
}
last.record("# the run ended normally after \(sent) requests\n")

let histogram = statuses.sorted(by: { $0.key < $1.key }).map { "\($0.key):\($0.value)" }.joined(separator: " ")
print("sesame-face-fuzz: \(sent) requests, \(answeredPerOperation.count)/\(operations.count) operations, statuses \(histogram)")
for (problem, text) in failures {
    print("---- FAILED: \(problem)\n\(text)")
}
print("sesame-face-fuzz: \(failureCount == 0 ? "ok" : "FAILED"), \(failureCount) of \(sent) answers broke a rule")
exit(failureCount == 0 ? 0 : 1)
