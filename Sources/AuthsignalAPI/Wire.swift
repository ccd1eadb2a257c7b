import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The face's JSON shapes of domain values (spec §2, §3), and the reading of request members.
enum Wire {
    /// ISO-8601 UTC with milliseconds, as Authsignal writes timestamps.
    static func timestamp(_ date: Date) -> String { Timestamps.rfc3339(date) }

    static func user(_ user: AuthsignalUser) -> [String: Any] {
        var object: [String: Any] = [
            "isEnrolled": user.isEnrolled, "emailVerified": user.emailVerified, "phoneNumberVerified": user.phoneNumberVerified,
            "enrolledVerificationMethods": user.enrolledVerificationMethods, "allowedVerificationMethods": allowedMethods(user),
        ]
        object["email"] = user.email
        object["phoneNumber"] = user.phoneNumber
        object["username"] = user.username
        object["displayName"] = user.displayName
        object["locale"] = user.locale
        if let custom = user.custom, let parsed = try? JSONSerialization.jsonObject(with: Data(custom.utf8)) { object["custom"] = parsed }
        if let first = user.enrolledVerificationMethods.first { object["defaultVerificationMethod"] = first }
        return object
    }

    /// Passkeys are always allowed; the user's other enrolled methods too.
    static func allowedMethods(_ user: AuthsignalUser) -> [String] {
        [passkeyVerificationMethod] + user.enrolledVerificationMethods.filter { $0 != passkeyVerificationMethod }
    }

    static func action(_ action: AuthsignalAction) -> [String: Any] {
        var object: [String: Any] = [
            "state": action.state.rawValue, "stateUpdatedAt": timestamp(action.stateUpdatedAt), "createdAt": timestamp(action.createdAt),
            "rules": [Any](), "output": [String: Any](),
        ]
        object["verificationMethod"] = action.verificationMethod
        return object
    }

    static func authenticator(_ authenticator: AuthsignalAuthenticator) -> [String: Any] {
        var object: [String: Any] = [
            "userId": authenticator.userID, "userAuthenticatorId": authenticator.id, "verificationMethod": authenticator.verificationMethod,
            "createdAt": timestamp(authenticator.createdAt), "verifiedAt": timestamp(authenticator.createdAt),
        ]
        object["lastVerifiedAt"] = authenticator.lastVerifiedAt.map(timestamp)
        object["username"] = authenticator.username
        object["displayName"] = authenticator.displayName
        object["email"] = authenticator.email
        object["phoneNumber"] = authenticator.phoneNumber
        if let passkey = authenticator.passkey {
            var credential: [String: Any] = [
                "credentialId": Base64URL.encode(passkey.credentialID), "credentialBackedUp": passkey.backedUp,
                "credentialDeviceType": passkey.backupEligible ? "multiDevice" : "singleDevice", "transports": passkey.transports,
            ]
            credential["deviceId"] = passkey.deviceID
            credential["name"] = passkey.name
            credential["aaguid"] = passkey.aaguid
            object["webauthnCredential"] = credential
        }
        return object
    }

    /// `challengeId` as `challenge_id`.
    private static func snakeCase(_ name: String) -> String {
        var snake = ""
        for character in name {
            if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
        }
        return snake
    }

    /// The name a strictly read body carries the member under (camelCase, else snake_case), or `nil` when it is absent
    /// or `null` under both.
    private static func present(_ members: JSONObjectMembers, _ name: String) -> String? {
        if !members.isAbsentOrNull(name) { return name }
        let snake = snakeCase(name)
        return members.isAbsentOrNull(snake) ? nil : snake
    }

    /// An optional string member of a strictly read body (the client API's).
    /// - Throws: 400 `invalid_request` when present and not a string of at most `limit` bytes.
    static func string(_ members: JSONObjectMembers, _ name: String, limit: Int = 256) throws(HTTPError) -> String? {
        guard let key = present(members, name) else { return nil }
        guard let text = members.string(key), text.utf8.count <= limit else {
            throw AuthsignalAPI.invalidRequest("\(name) must be a string of at most \(limit) bytes.")
        }
        return text
    }

    /// A required object member of a strictly read body, as its JSON text as sent (a credential for the ceremony engine).
    /// - Throws: 400 `invalid_request` when absent or not an object.
    static func object(_ members: JSONObjectMembers, _ name: String) throws(HTTPError) -> [UInt8] {
        guard let key = present(members, name), let object = members.object(key) else {
            throw AuthsignalAPI.invalidRequest("\(name) must be a JSON object.")
        }
        return object
    }

    /// An optional boolean member of a strictly read body.
    /// - Throws: 400 `invalid_request` when present and not a boolean.
    static func bool(_ members: JSONObjectMembers, _ name: String) throws(HTTPError) -> Bool? {
        guard let key = present(members, name) else { return nil }
        guard let flag = members.bool(key) else { throw AuthsignalAPI.invalidRequest("\(name) must be a boolean.") }
        return flag
    }

    /// The user attributes of a track or user update.
    /// - Throws: 400 `invalid_request` for a member of the wrong type, or `custom` that is not a flat object of at most 2 KB
    ///   (as compact JSON, members in name order, as it is kept).
    static func attributes(_ members: JSONObjectMembers) throws(HTTPError) -> AuthsignalUserAttributes {
        var attributes = AuthsignalUserAttributes(
            email: try string(members, "email"), emailVerified: try bool(members, "emailVerified"), phoneNumber: try string(members, "phoneNumber"),
            phoneNumberVerified: try bool(members, "phoneNumberVerified"), username: try string(members, "username"),
            displayName: try string(members, "displayName"), locale: try string(members, "locale", limit: 32)
        )
        if let key = present(members, "custom") {
            guard let text = members.object(key), case .object(let flat)? = try? JSONValue(jsonEncoded: text),
                  flat.values.allSatisfy({ value in
                      switch value {
                      case .array, .object: false
                      default: true
                      }
                  }),
                  let compact = try? JSONValue.object(flat).jsonEncoded(), compact.count <= 2048
            else { throw AuthsignalAPI.invalidRequest("custom must be a flat JSON object of at most 2 KB.") }
            attributes.custom = String(decoding: compact, as: UTF8.self)
        }
        return attributes
    }
}
