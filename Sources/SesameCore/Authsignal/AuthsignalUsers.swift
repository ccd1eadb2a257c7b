import Foundation
import SesameCrypto
import SesameStore

/// Users by the integrator's user ID, and their authenticators (passkeys and verified contacts).
extension AuthsignalService {
    /// The verification methods the backend may enrol as verified contacts.
    public static let contactMethods: Set<String> = ["EMAIL_OTP", "SMS"]

    /// The user, or an unknown user that is not enrolled.
    public func user(project: Project, userID: String) throws(SesameError) -> AuthsignalUser {
        let id = try Self.checkIdentifier(userID, "userId")
        let record = try StoreErrors.map { () throws(StoreError) in try store.authsignal.user(projectID: project.id, externalID: id) }
        return try describe(record, externalID: id)
    }

    /// Sets the given attributes, creating the user if it is unknown; returns the stored user.
    /// - Throws: `invalid_argument`.
    public func updateUser(project: Project, userID: String, attributes: AuthsignalUserAttributes) throws(SesameError) -> AuthsignalUser {
        let record = try ensureUser(project: project, userID: userID)
        let updated = try StoreErrors.map { () throws(StoreError) -> AuthsignalUserRecord in
            var record = try store.authsignal.user(projectID: project.id, externalID: record.externalID) ?? record
            record.apply(attributes, at: clock.now())
            try store.authsignal.updateUser(record)
            return record
        }
        return try describe(updated, externalID: updated.externalID)
    }

    /// Deletes the user with its passkeys, verified contacts and actions; an unknown user is no error.
    public func deleteUser(project: Project, userID: String) throws(SesameError) {
        let id = try Self.checkIdentifier(userID, "userId")
        try StoreErrors.map { () throws(StoreError) in
            try store.transaction { transaction throws(StoreError) in
                if let record = try transaction.authsignal.user(projectID: project.id, externalID: id) {
                    _ = try transaction.users.delete(projectID: project.id, id: record.userID)
                }
                try transaction.authsignal.deleteActions(projectID: project.id, externalUserID: id)
            }
        }
    }

    /// The user's authenticators: passkeys first, then verified contacts, each oldest first.
    public func authenticators(project: Project, userID: String) throws(SesameError) -> [AuthsignalAuthenticator] {
        let id = try Self.checkIdentifier(userID, "userId")
        guard let record = try StoreErrors.map({ () throws(StoreError) in try store.authsignal.user(projectID: project.id, externalID: id) })
        else { return [] }
        return try authenticators(of: record)
    }

    /// Enrols a verified contact (`EMAIL_OTP` with an email, `SMS` with a phone number), creating the user if needed.
    /// - Throws: `invalid_argument` for another method (a passkey is enrolled through the client API) or a missing contact.
    public func enrollContact(project: Project, userID: String, verificationMethod: String, email: String?, phoneNumber: String?)
        throws(SesameError) -> AuthsignalAuthenticator
    {
        guard Self.contactMethods.contains(verificationMethod) else {
            throw SesameError(.invalidArgument, "only EMAIL_OTP and SMS can be enrolled by the server; passkeys come from the client API")
        }
        let email = try email.map { text throws(SesameError) in try Self.checkAttribute(text, "email") }
        let phone = try phoneNumber.map { text throws(SesameError) in try Self.checkAttribute(text, "phoneNumber") }
        if verificationMethod == "EMAIL_OTP", email == nil { throw SesameError(.invalidArgument, "EMAIL_OTP needs an email") }
        if verificationMethod == "SMS", phone == nil { throw SesameError(.invalidArgument, "SMS needs a phoneNumber") }
        let user = try ensureUser(project: project, userID: userID)
        let contact = AuthsignalContactRecord(id: Identifiers.unique(), userID: user.userID, verificationMethod: verificationMethod,
                                              email: verificationMethod == "EMAIL_OTP" ? email : nil,
                                              phoneNumber: verificationMethod == "SMS" ? phone : nil, createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.authsignal.createContact(contact) }
        return AuthsignalAuthenticator(contact, user: user)
    }

    /// Deletes one of the user's authenticators (a passkey or a verified contact).
    /// - Throws: `not_found`.
    public func deleteAuthenticator(project: Project, userID: String, authenticatorID: String) throws(SesameError) {
        let id = try Self.checkIdentifier(userID, "userId")
        let deleted = try StoreErrors.map { () throws(StoreError) -> Bool in
            guard let record = try store.authsignal.user(projectID: project.id, externalID: id) else { return false }
            if try store.credentials.delete(userID: record.userID, id: authenticatorID) { return true }
            return try store.authsignal.deleteContact(userID: record.userID, id: authenticatorID)
        }
        guard deleted else { throw SesameError(.notFound, "authenticator") }
    }

    // MARK: Shared

    /// The tenant's user with this ID, created (with a Sesame user behind it) when unknown; concurrent first uses
    /// agree on one.
    func ensureUser(project: Project, userID: String) throws(SesameError) -> AuthsignalUserRecord {
        let id = try Self.checkIdentifier(userID, "userId")
        return try StoreErrors.map { () throws(StoreError) -> AuthsignalUserRecord in
            if let existing = try store.authsignal.user(projectID: project.id, externalID: id) { return existing }
            let now = clock.now()
            let record = AuthsignalUserRecord(projectID: project.id, externalID: id, userID: Identifiers.unique(), createdAt: now, updatedAt: now)
            do throws(StoreError) {
                try store.transaction { transaction throws(StoreError) in
                    try transaction.users.create(UserRecord(id: record.userID, projectID: project.id, userHandle: SecureRandom.bytes(count: 32),
                                                            createdAt: now, updatedAt: now))
                    try transaction.authsignal.createUser(record)
                }
                return record
            } catch where error.code == .conflict {
                // Another request created it first.
                guard let existing = try store.authsignal.user(projectID: project.id, externalID: id) else { throw error }
                return existing
            }
        }
    }

    /// The user as the server API shows it; `nil` is an unknown user.
    func describe(_ record: AuthsignalUserRecord?, externalID: String) throws(SesameError) -> AuthsignalUser {
        let methods = try record.map { record throws(SesameError) in try enrolledMethods(of: record) } ?? []
        return AuthsignalUser(userID: externalID, email: record?.email, emailVerified: record?.emailVerified ?? false,
                              phoneNumber: record?.phoneNumber, phoneNumberVerified: record?.phoneNumberVerified ?? false,
                              username: record?.username, displayName: record?.displayName, custom: record?.custom, locale: record?.locale,
                              enrolledVerificationMethods: methods)
    }

    func enrolledMethods(of record: AuthsignalUserRecord) throws(SesameError) -> [String] {
        var methods: [String] = []
        for authenticator in try authenticators(of: record) where !methods.contains(authenticator.verificationMethod) {
            methods.append(authenticator.verificationMethod)
        }
        return methods
    }

    func authenticators(of record: AuthsignalUserRecord) throws(SesameError) -> [AuthsignalAuthenticator] {
        try StoreErrors.map { () throws(StoreError) -> [AuthsignalAuthenticator] in
            var all: [AuthsignalAuthenticator] = []
            for credential in try store.credentials.list(userID: record.userID) {
                let details = try store.authsignal.passkeyDetails(credentialRowID: credential.id)
                all.append(AuthsignalAuthenticator(credential, details: details, user: record))
            }
            return all + (try store.authsignal.contacts(userID: record.userID).map { AuthsignalAuthenticator($0, user: record) })
        }
    }

    /// A stored text attribute: at most 256 bytes.
    static func checkAttribute(_ text: String, _ name: String) throws(SesameError) -> String {
        guard text.utf8.count <= 256 else { throw SesameError(.invalidArgument, "\(name) is at most 256 bytes") }
        return text
    }
}

extension AuthsignalUserRecord {
    mutating func apply(_ attributes: AuthsignalUserAttributes, at time: Date) {
        if let email = attributes.email { self.email = email }
        if let verified = attributes.emailVerified { emailVerified = verified }
        if let phone = attributes.phoneNumber { phoneNumber = phone }
        if let verified = attributes.phoneNumberVerified { phoneNumberVerified = verified }
        if let username = attributes.username { self.username = username }
        if let displayName = attributes.displayName { self.displayName = displayName }
        if let custom = attributes.custom { self.custom = custom }
        if let locale = attributes.locale { self.locale = locale }
        updatedAt = time
    }
}

extension AuthsignalAuthenticator {
    init(_ credential: SesameStore.CredentialRecord, details: AuthsignalPasskeyDetails?, user: AuthsignalUserRecord) {
        self.init(userID: user.externalID, id: credential.id, verificationMethod: passkeyVerificationMethod, createdAt: credential.createdAt,
                  lastVerifiedAt: credential.lastUsedAt, username: details?.username ?? user.username,
                  displayName: details?.displayName ?? user.displayName, email: nil, phoneNumber: nil,
                  passkey: Passkey(credentialID: credential.credentialID, deviceID: details?.deviceID,
                                   name: credential.name.flatMap { $0.isEmpty ? nil : $0 }, aaguid: credential.aaguid,
                                   backupEligible: credential.backupEligible, backedUp: credential.backedUp, transports: credential.transports))
    }

    init(_ contact: AuthsignalContactRecord, user: AuthsignalUserRecord) {
        self.init(userID: user.externalID, id: contact.id, verificationMethod: contact.verificationMethod, createdAt: contact.createdAt,
                  lastVerifiedAt: nil, username: user.username, displayName: user.displayName, email: contact.email,
                  phoneNumber: contact.phoneNumber, passkey: nil)
    }
}
