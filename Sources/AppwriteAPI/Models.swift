import Foundation
import SesameCore

/// Appwrite datetimes: ISO 8601 with milliseconds and a numeric offset, `2020-10-15T06:38:00.000+00:00`.
enum AppwriteDate {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func string(_ date: Date) -> String {
        var text = date.formatted(style)
        if text.hasSuffix("Z") { text = String(text.dropLast()) + "+00:00" }
        return text
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
        emailVerification = false
        phoneVerification = false
        mfa = false
        labels = []
        targets = []
        prefs = [:]
    }
}

/// The Session model (spec §2.6): every field present; `secret` only for API-key callers.
struct SessionModel: Encodable {
    let id, createdAt, updatedAt, userId, expire, provider, providerUid, providerAccessToken: String
    let providerAccessTokenExpiry, providerRefreshToken, ip, osCode, osName, osVersion, clientType, clientCode: String
    let clientName, clientVersion, clientEngine, clientEngineVersion, deviceName, deviceBrand, deviceModel: String
    let countryCode, countryName, secret, mfaUpdatedAt: String
    let current: Bool
    let factors: [String]

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt", updatedAt = "$updatedAt"
        case userId, expire, provider, providerUid, providerAccessToken, providerAccessTokenExpiry, providerRefreshToken, ip
        case osCode, osName, osVersion, clientType, clientCode, clientName, clientVersion, clientEngine, clientEngineVersion
        case deviceName, deviceBrand, deviceModel, countryCode, countryName, secret, mfaUpdatedAt, current, factors
    }

    init(_ session: Session, current: Bool, secret: String = "") {
        id = session.id
        createdAt = AppwriteDate.string(session.createdAt)
        updatedAt = AppwriteDate.string(session.updatedAt)
        userId = session.userID
        expire = AppwriteDate.string(session.expiresAt)
        provider = session.provider
        providerUid = ""
        providerAccessToken = ""
        providerAccessTokenExpiry = ""
        providerRefreshToken = ""
        ip = session.ip
        (osCode, osName, osVersion) = ("", "", "")
        (clientType, clientCode, clientName, clientVersion, clientEngine, clientEngineVersion) = ("", "", "", "", "", "")
        (deviceName, deviceBrand, deviceModel) = ("", "", "")
        (countryCode, countryName) = ("", "")
        self.secret = secret
        mfaUpdatedAt = AppwriteDate.string(session.mfaUpdatedAt)
        self.current = current
        factors = session.factors
    }
}

/// SessionList: `{"total", "sessions"}`.
struct SessionListModel: Encodable {
    let total: Int
    let sessions: [SessionModel]
}
