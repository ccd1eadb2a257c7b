import Foundation
import SesameCore

/// The authentication method IDs the Appwrite SDK knows (spec §2.12); Sesame runs `email-password` and `passkey`.
let authMethodIDs = ["email-password", "magic-url", "email-otp", "anonymous", "invites", "jwt", "phone", "passkey"]

/// Whether a method is on: the two Sesame runs are on unless switched off, the others only when switched on.
func isMethodEnabled(_ project: Project, _ method: String) -> Bool {
    project.authMethods[method] ?? (method == "email-password" || method == "passkey")
}

/// The Project model (spec §2.12): every field present, enums only with IDs the SDK accepts.
struct ProjectModel: Encodable {
    struct Method: Encodable {
        let id: String
        let enabled: Bool
        enum CodingKeys: String, CodingKey {
            case id = "$id"
            case enabled
        }
    }

    let id, createdAt, updatedAt, name, teamId, region, status: String
    let smtpEnabled: Bool
    let smtpSenderName, smtpSenderEmail, smtpReplyToName, smtpReplyToEmail, smtpHost, smtpUsername, smtpPassword, smtpSecure: String
    let smtpPort, pingCount: Int
    let pingedAt, consoleAccessedAt: String
    let labels: [String]
    let onboarding: [String: String]
    let authMethods: [Method]
    let services, protocols: [Method]
    let blocks: [String]

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt", updatedAt = "$updatedAt"
        case name, teamId, region, status, smtpEnabled, smtpSenderName, smtpSenderEmail, smtpReplyToName, smtpReplyToEmail, smtpHost
        case smtpUsername, smtpPassword, smtpSecure, smtpPort, pingCount, pingedAt, consoleAccessedAt, labels, onboarding
        case authMethods, services, protocols, blocks
    }

    init(_ project: Project) {
        id = project.id
        createdAt = AppwriteDate.string(project.createdAt)
        updatedAt = createdAt
        name = project.name
        (teamId, region, status) = ("", "", "active")
        smtpEnabled = false
        (smtpSenderName, smtpSenderEmail, smtpReplyToName, smtpReplyToEmail, smtpHost) = ("", "", "", "", "")
        (smtpUsername, smtpPassword, smtpSecure) = ("", "", "")
        (smtpPort, pingCount) = (0, 0)
        (pingedAt, consoleAccessedAt) = ("", "")
        labels = []
        onboarding = [:]
        authMethods = authMethodIDs.map { Method(id: $0, enabled: isMethodEnabled(project, $0)) }
        services = []
        protocols = []
        blocks = []
    }
}

/// The PolicyPasskey model (spec §2.10): `$id` is exactly `passkey`.
struct PasskeyPolicyModel: Encodable {
    let id = "passkey"
    let rpId: String
    let origins: [String]

    enum CodingKeys: String, CodingKey {
        case id = "$id"
        case rpId, origins
    }
}

/// PolicyList: `{"total", "policies"}`; Sesame has only the passkey policy.
struct PolicyListModel: Encodable {
    let total: Int
    let policies: [PasskeyPolicyModel]
}

/// PlatformWeb, PlatformAndroid or PlatformApple (spec §2.11), by `type`.
struct PlatformModel: Encodable {
    let entry: PlatformEntry

    enum CodingKeys: String, CodingKey {
        case id = "$id", createdAt = "$createdAt", updatedAt = "$updatedAt"
        case name, type, hostname, applicationId, fingerprints, bundleIdentifier
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let stamp = AppwriteDate.string(entry.createdAt)
        try container.encode(entry.id, forKey: .id)
        try container.encode(stamp, forKey: .createdAt)
        try container.encode(stamp, forKey: .updatedAt)
        try container.encode(entry.name, forKey: .name)
        try container.encode(entry.platform.kind, forKey: .type)
        switch entry.platform {
        case .web(let hostname): try container.encode(hostname, forKey: .hostname)
        case .android(let package, let fingerprints):
            try container.encode(package, forKey: .applicationId)
            try container.encode(fingerprints.map(PlatformValidation.fingerprintText), forKey: .fingerprints)
        case .apple(_, let bundle): try container.encode(bundle, forKey: .bundleIdentifier)
        }
    }
}

/// PlatformList: `{"total", "platforms"}`.
struct PlatformListModel: Encodable {
    let total: Int
    let platforms: [PlatformModel]
}
