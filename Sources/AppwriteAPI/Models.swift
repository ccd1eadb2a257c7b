import Foundation
import SesameCore
import WebAuthn

/// Appwrite datetimes: ISO 8601 with milliseconds and a numeric offset, `2020-10-15T06:38:00.000+00:00`.
enum AppwriteDate {
    static func string(_ date: Date) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(29)
        Timestamps.appendRFC3339(date, to: &text)
        text.removeLast()  // "Z": Appwrite writes the offset
        text.append(contentsOf: "+00:00".utf8)
        return String(decoding: text, as: UTF8.self)
    }

    static func string(_ date: Date?) -> String { date.map(string) ?? "" }
}

/// The User model (spec §2.8): every field present, `prefs` an object, never null.
struct UserModel: Encodable {
    let id, createdAt, updatedAt, name, registration, passwordUpdate, email, phone, accessedAt: String
    let status, emailVerification, phoneVerification, mfa: Bool
    let labels: [String]
    let targets: [String]
    let prefs: [String: String]

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt", updatedAt = "$updatedAt"
        case name, registration, passwordUpdate, email, phone, accessedAt, status, emailVerification, phoneVerification, mfa
        case labels, targets, prefs
    }

    init(_ user: User) {
        id = user.id
        createdAt = AppwriteDate.string(user.createdAt)
        updatedAt = AppwriteDate.string(user.updatedAt)
        name = user.name
        registration = createdAt
        // Passwords are set at sign-up and cannot change yet, so the sign-up time is the last password update.
        passwordUpdate = user.hasPassword ? createdAt : ""
        email = user.email ?? ""
        phone = ""
        accessedAt = ""
        status = user.isActive
        emailVerification = user.emailVerified
        phoneVerification = false
        mfa = user.mfa
        labels = []
        targets = []
        prefs = [:]
    }
}

/// The Session model (spec §2.6): every field present; `secret` only for API-key callers. Written by hand (the last
/// step of a sign-in), members in name order.
struct SessionModel: JSONWritable {
    let session: Session
    let current: Bool
    let secret: String

    init(_ session: Session, current: Bool, secret: String = "") {
        self.session = session
        self.current = current
        self.secret = secret
    }

    func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("$createdAt", AppwriteDate.string(session.createdAt))
            object.member("$id", session.id)
            object.member("$updatedAt", AppwriteDate.string(session.updatedAt))
            // Client, device and country are not detected: empty, as Appwrite leaves what it cannot tell.
            for name in ["clientCode", "clientEngine", "clientEngineVersion", "clientName", "clientType", "clientVersion", "countryCode",
                         "countryName"] {
                object.member(name, "")
            }
            object.member("current", current)
            for name in ["deviceBrand", "deviceModel", "deviceName"] { object.member(name, "") }
            object.member("expire", AppwriteDate.string(session.expiresAt))
            object.member("factors", strings: session.factors)
            object.member("ip", session.ip)
            object.member("mfaUpdatedAt", AppwriteDate.string(session.mfaUpdatedAt))
            for name in ["osCode", "osName", "osVersion"] { object.member(name, "") }
            object.member("provider", session.provider)
            for name in ["providerAccessToken", "providerAccessTokenExpiry", "providerRefreshToken", "providerUid"] { object.member(name, "") }
            object.member("secret", secret)
            object.member("userId", session.userID)
        }
    }
}

/// SessionList: `{"sessions", "total"}`.
struct SessionListModel: JSONWritable {
    let total: Int
    let sessions: [SessionModel]

    func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("sessions", sessions)
            object.member("total", total)
        }
    }
}

/// The Passkey model (spec §2.1): no credential ID, key or counters on the wire.
struct PasskeyModel: Encodable {
    let id, createdAt, updatedAt, name, accessedAt: String

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt", updatedAt = "$updatedAt"
        case name, accessedAt
    }

    init(_ passkey: Passkey) {
        id = passkey.id
        createdAt = AppwriteDate.string(passkey.createdAt)
        updatedAt = AppwriteDate.string(passkey.updatedAt)
        name = passkey.name
        accessedAt = AppwriteDate.string(passkey.lastUsedAt)
    }
}

/// PasskeyList: `{"total", "passkeys"}`.
struct PasskeyListModel: Encodable {
    let total: Int
    let passkeys: [PasskeyModel]
}

/// The PasskeyChallenge model (spec §2.3): `publicKey` holds the WebAuthn options in their JSON form. Written by
/// hand (a ceremony's hot path), members in name order.
struct PasskeyChallengeModel<Options: JSONWritable>: JSONWritable {
    let id, createdAt, passkeyId, expire: String
    let publicKey: Options

    func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("$createdAt", createdAt)
            object.member("$id", id)
            object.member("expire", expire)
            object.member("passkeyId", passkeyId)
            object.member("publicKey", publicKey)
        }
    }
}

/// The Token model (spec §2.5), as `users.create_token` answers it to an API key: the secret filled.
struct TokenModel: Encodable {
    let id, createdAt, userId, secret, expire, phrase: String

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt"
        case userId, secret, expire, phrase
    }
}

/// The TokenSecret model (spec §2.4): `secret` always filled, `phrase` always empty. Written by hand (a ceremony's hot
/// path), members in name order.
struct TokenSecretModel: JSONWritable {
    let id, createdAt, userId, secret, expire, phrase: String

    func write(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("$createdAt", createdAt)
            object.member("$id", id)
            object.member("expire", expire)
            object.member("phrase", phrase)
            object.member("secret", secret)
            object.member("userId", userId)
        }
    }

    init(_ token: SignInToken) {
        id = token.id
        createdAt = AppwriteDate.string(token.createdAt)
        userId = token.userID
        secret = token.secret
        expire = AppwriteDate.string(token.expiresAt)
        phrase = ""
    }
}

/// UserList: `{"total", "users"}`.
struct UserListModel: Encodable {
    let total: Int
    let users: [UserModel]
}
