import Foundation

/// Decodes a JSON body into `T`, mapping failures to a 400 `invalid_json` error whose message never echoes the body.
///
/// The message names the missing or mistyped field (from `T`'s own coding keys) when there is one.
/// - Parameters:
///   - type: The type to decode.
///   - request: The request whose body to read.
/// - Returns: The decoded value.
/// - Throws: ``HTTPError`` with status 400 and code `invalid_json`.
public func decodeJSONBody<T: Decodable>(_ type: T.Type, from request: HTTPRequest) throws(HTTPError) -> T {
    if request.body.isEmpty {
        throw HTTPError.badRequest(code: "invalid_json", message: "The request body is empty.")
    }
    do {
        return try JSONDecoder().decode(T.self, from: Data(request.body))
    } catch let error as DecodingError {
        throw HTTPError.badRequest(code: "invalid_json", message: jsonFailureMessage(error))
    } catch {
        throw HTTPError.badRequest(code: "invalid_json", message: "The request body is not valid JSON.")
    }
}

/// A client-safe description of a decoding failure: the coding path only, never values from the body.
private func jsonFailureMessage(_ error: DecodingError) -> String {
    // Dictionary keys come from the body, so a path with anything unusual in it is left out.
    func path(_ keys: [any CodingKey]) -> String? {
        let parts = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        let safe = parts.allSatisfy { part in
            part.utf8.count <= 64 && part.utf8.allSatisfy(isSafeKeyByte)
        }
        return safe ? parts.joined(separator: ".") : nil
    }
    switch error {
    case .keyNotFound(let key, let context):
        return path(context.codingPath + [key]).map { "Missing field '\($0)'." } ?? "A required field is missing."
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
        guard !context.codingPath.isEmpty, let field = path(context.codingPath) else {
            return "The request body has the wrong JSON type."
        }
        return "Field '\(field)' has the wrong type."
    case .dataCorrupted(let context):
        guard !context.codingPath.isEmpty, let field = path(context.codingPath) else {
            return "The request body is not valid JSON."
        }
        return "Field '\(field)' has an invalid value."
    @unknown default:
        return "The request body is not valid JSON."
    }
}

/// ASCII letters, digits, `_`, `[` and `]`.
private func isSafeKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "_"), UInt8(ascii: "["), UInt8(ascii: "]"):
        return true
    default:
        return false
    }
}
