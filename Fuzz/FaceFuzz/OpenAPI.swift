import Foundation

/// One operation of the server's OpenAPI document: what the fuzzer needs to build requests for it.
struct Operation: CustomStringConvertible {
    let method: String
    /// The path as OpenAPI writes it, with `{name}` parameters.
    let path: String
    let pathParameters: [String]
    let queryParameters: [String]
    /// The JSON body's properties and their schema types, when the operation takes a body.
    let bodyProperties: [(name: String, type: String)]?
    /// The security alternatives' scheme names (empty: public).
    let security: Set<String>

    var description: String { "\(method) \(path)" }

    /// The face whose error shape the operation's answers use.
    var face: Face { Face(path: path) }
}

/// The wire APIs, each with its own error shape.
enum Face: String {
    /// `/v1`: `{"message","code","type","version"}`, `code` equal to the status.
    case appwrite
    /// `/operations/request`, `/operations/handoff` and `/operations/widget`: always HTTP 200, `{"data":{...}}`.
    case inlinePublic
    /// The rest of `/operations`: `{"error":{"statusCode","code","message"}}` with the real status.
    case inlinePartner
    /// `/api/v1` and the platform routes: `{"error":{"code","message"}}`.
    case platform
    /// `/authsignal/v1`: `{"error","errorCode","errorDescription"}` with the real status, `Content-Type` exactly `application/json`.
    case authsignal

    init(path: String) {
        if path.hasPrefix("/authsignal/") {
            self = .authsignal
        } else if path == "/v1" || path.hasPrefix("/v1/") {
            self = .appwrite
        } else if path.hasPrefix("/operations/request/") || path.hasPrefix("/operations/handoff/") || path.hasPrefix("/operations/widget/") {
            self = .inlinePublic
        } else if path.hasPrefix("/operations/") {
            self = .inlinePartner
        } else {
            self = .platform
        }
    }
}

/// Reads the operations out of an OpenAPI 3.1 document (the one the server serves at `/openapi.json`).
func loadOperations(from document: [UInt8]) throws -> [Operation] {
    struct Invalid: Error, CustomStringConvertible { let description: String }
    guard let root = try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any],
          let paths = root["paths"] as? [String: [String: Any]] else { throw Invalid(description: "no paths in the OpenAPI document") }
    let schemas = (root["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]

    func resolve(_ schema: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String, let name = reference.split(separator: "/").last,
              let resolved = schemas[String(name)] as? [String: Any] else { return schema }
        return resolved
    }

    var operations: [Operation] = []
    for (path, methods) in paths.sorted(by: { $0.key < $1.key }) {
        for (method, value) in methods.sorted(by: { $0.key < $1.key }) {
            guard let operation = value as? [String: Any] else { continue }
            let parameters = operation["parameters"] as? [[String: Any]] ?? []
            let named = { (place: String) in parameters.filter { $0["in"] as? String == place }.compactMap { $0["name"] as? String } }
            var body: [(String, String)]?
            if let requestBody = operation["requestBody"] as? [String: Any],
               let content = requestBody["content"] as? [String: Any],
               let json = content["application/json"] as? [String: Any],
               let schema = json["schema"] as? [String: Any] {
                let properties = resolve(schema)["properties"] as? [String: Any] ?? [:]
                body = properties.sorted(by: { $0.key < $1.key }).map { name, property in
                    (name, ((property as? [String: Any]).map(resolve)?["type"] as? String) ?? "string")
                }
            }
            let security = (operation["security"] as? [[String: Any]] ?? []).reduce(into: Set<String>()) { $0.formUnion($1.keys) }
            operations.append(Operation(method: method.uppercased(), path: path, pathParameters: named("path"),
                                        queryParameters: named("query"), bodyProperties: body, security: security))
        }
    }
    guard !operations.isEmpty else { throw Invalid(description: "the OpenAPI document has no operations") }
    return operations
}
