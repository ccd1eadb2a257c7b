import Foundation
import SesameHTTP

/// What every answer must be, whatever was asked: no 5xx (the store is healthy here, so no outage excuses one), a
/// `Content-Type`, and for errors the face's own shape. The one 5xx a wire contract names is allowed: Appwrite's 501
/// `user_auth_method_unsupported` for a sign-in method the project turned off (the fuzzer toggles them).
/// - Returns: what is wrong with `response`, or `nil` when nothing is.
func check(_ response: HTTPResponse, face: Face, request: HTTPRequest) -> String? {
    let contract501 = face == .appwrite && response.status == 501
        && String(decoding: response.body, as: UTF8.self).contains(#""type":"user_auth_method_unsupported""#)
    if response.status >= 500 && !contract501 { return "status \(response.status)" }
    guard let contentType = response.headers["Content-Type"], !contentType.isEmpty else { return "no Content-Type" }
    let isJSON = contentType.hasPrefix("application/json")
    if response.status == 204 || request.method == .HEAD { return nil }
    // Every Authsignal answer with a body (a CORS preflight's 204 has none) is labelled exactly so (spec §1.2).
    if face == .authsignal, contentType != "application/json" { return "an Authsignal answer labelled \(contentType)" }
    let parsed = isJSON ? try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed]) : nil
    if isJSON && parsed == nil { return "a body labelled JSON that is not JSON" }
    guard response.status >= 400 || face == .inlinePublic else { return nil }
    guard let object = parsed as? [String: Any] else { return "an error without a JSON object body" }

    switch face {
    case .appwrite:
        guard Set(object.keys) == ["message", "code", "type", "version"], object["code"] as? Int == response.status,
              let message = object["message"] as? String, !message.isEmpty, object["type"] is String else {
            return "not the Appwrite error shape"
        }
        guard contentType == "application/json; charset=UTF-8" else { return "Appwrite error labelled \(contentType)" }
    case .inlinePublic:
        guard response.status == 200 else { return "a public inline endpoint answered HTTP \(response.status)" }
        guard let data = object["data"] as? [String: Any], data["data"] is [String: Any] || data["error"] is [String: Any] else {
            return "not the public inline shape {data:{data|error}}"
        }
        if let error = data["error"] as? [String: Any], error["statusCode"] as? Int == 500 { return "a public inline 500" }
    case .inlinePartner:
        guard let error = object["error"] as? [String: Any], error["statusCode"] as? Int == response.status,
              error["code"] is String, error["message"] is String else { return "not the partner error shape" }
    case .authsignal:
        guard let code = object["error"] as? String, object["errorCode"] as? String == code,
              let description = object["errorDescription"] as? String, !description.isEmpty else { return "not the Authsignal error shape" }
    case .platform:
        guard let error = object["error"] as? [String: Any], error["code"] is String, error["message"] is String else {
            return "not the default error shape"
        }
    }
    return nil
}
