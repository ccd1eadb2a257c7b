import Foundation
import SesameStore

/// A project: the owner of one relying party, its platforms and its API keys.
public struct Project: Sendable, Hashable {
    public let id: String
    public var name: String
    public var relyingPartyID: String
    public var relyingPartyName: String
    /// Authentication methods switched on or off (for example `passkey`, `email-password`).
    public var authMethods: [String: Bool]
    public var platforms: [PlatformEntry]
    public let createdAt: Date
    /// What the project accepts of the authenticators that register (``AttestationPolicy/default`` until set).
    public var attestationPolicy: AttestationPolicy = .default
    /// Set when the stored policy no longer reads (edited by hand, or written by a newer build): registrations are
    /// then refused (`attestation_policy_unreadable`) rather than judged by a weaker policy.
    var attestationPolicyUnreadable = false

    /// The attestation policy to judge registrations by, and to show.
    /// - Throws: `internal_failure` with reason `attestation_policy_unreadable` when the stored policy no longer
    ///   reads (it is then neither applied as the default nor shown as it).
    public func readableAttestationPolicy() throws(SesameError) -> AttestationPolicy {
        guard !attestationPolicyUnreadable else {
            throw SesameError(.internalFailure, "the project's stored attestation policy does not read; set it again",
                              reason: "attestation_policy_unreadable")
        }
        return attestationPolicy
    }

    /// What ceremonies and well-known files are computed from.
    public var configuration: ProjectConfiguration {
        ProjectConfiguration(relyingPartyID: relyingPartyID, relyingPartyName: relyingPartyName,
                             platforms: platforms.map(\.platform))
    }
}

/// A platform registered on a project.
public struct PlatformEntry: Sendable, Hashable {
    public let id: String
    public var name: String
    public var platform: Platform
    public let createdAt: Date
}

/// Creates projects and manages their relying party and platforms.
public struct ProjectService: Sendable {
    let store: Store
    let clock: any SesameClock
    let cache: ConfigurationCache

    /// Creates a project; its relying party ID is checked and lowercased.
    /// - Parameter id: a fixed ID (for the bootstrap project); a random one by default.
    /// - Throws: `invalid_argument`, or `conflict` when `id` is taken.
    public func create(id: String = Identifiers.unique(), name: String, relyingPartyID: String, relyingPartyName: String? = nil,
                       authMethods: [String: Bool] = ["passkey": true]) throws(SesameError) -> Project {
        let name = try Self.checkName(name)
        let rpID = try PlatformValidation.relyingPartyID(relyingPartyID)
        let now = clock.now()
        let record = ProjectRecord(id: id, name: name, rpID: rpID, rpName: relyingPartyName ?? name,
                                   authMethods: authMethods, createdAt: now, updatedAt: now)
        try StoreErrors.map { () throws(StoreError) in try store.projects.create(record) }
        cache.noteChange()
        return Project(record: record, platforms: [])
    }

    /// The project with `id`.
    /// - Throws: `not_found`.
    public func get(_ id: String) throws(SesameError) -> Project {
        guard let project = try list().first(where: { $0.id == id }) else { throw SesameError(.notFound, "project") }
        return project
    }

    /// Every project, oldest first (from the configuration cache while no project or platform changed).
    public func list() throws(SesameError) -> [Project] {
        try cache.projects(store) { () throws(SesameError) -> [Project] in
            try StoreErrors.map { () throws(StoreError) -> [Project] in
                let platforms = Dictionary(grouping: try store.platforms.listAll(), by: \.projectID)
                return try store.projects.list().map { record in
                    Project(record: record, platforms: (platforms[record.id] ?? []).compactMap(PlatformEntry.init))
                }
            }
        }
    }

    /// Sets the relying party. The ID is permanent once a passkey or a pending registration exists.
    /// - Throws: `invalid_argument` for a bad ID, `conflict` when the ID is in use, `not_found`.
    public func setRelyingParty(projectID: String, id: String, name: String) throws(SesameError) -> Project {
        let rpID = try PlatformValidation.relyingPartyID(id)
        let name = try Self.checkName(name)
        do {
            try store.projects.setRelyingParty(projectID: projectID, rpID: rpID, rpName: name, at: clock.now())
        } catch where error.code == .conflict {
            throw SesameError(.conflict, "the relying party ID cannot change once passkeys or pending registrations exist")
        } catch {
            throw StoreErrors.translate(error)
        }
        cache.noteChange()
        return try get(projectID)
    }

    /// Switches an authentication method on or off.
    public func setAuthMethod(projectID: String, method: String, enabled: Bool) throws(SesameError) -> Project {
        var project = try get(projectID)
        project.authMethods[method] = enabled
        let record = ProjectRecord(id: project.id, name: project.name, rpID: project.relyingPartyID, rpName: project.relyingPartyName,
                                   authMethods: project.authMethods, createdAt: project.createdAt, updatedAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.projects.update(record) }
        cache.noteChange()
        return project
    }

    /// Sets or, with `""`, clears the relying party ID, keeping the relying party name. The ID is permanent once a
    /// passkey or a pending registration exists; sending the current one again changes nothing.
    /// - Throws: `invalid_argument` for a bad ID, `conflict` when the ID is in use, `not_found`.
    public func setRelyingPartyID(projectID: String, _ id: String) throws(SesameError) -> Project {
        let project = try get(projectID)
        let rpID = id.isEmpty ? "" : try PlatformValidation.relyingPartyID(id)
        guard rpID != project.relyingPartyID else { return project }
        do {
            try store.projects.setRelyingParty(projectID: projectID, rpID: rpID, rpName: project.relyingPartyName, at: clock.now())
        } catch where error.code == .conflict {
            throw SesameError(.conflict, "the relying party ID cannot change once passkeys or pending registrations exist")
        } catch {
            throw StoreErrors.translate(error)
        }
        cache.noteChange()
        return try get(projectID)
    }

    /// Replaces the project's attestation policy; the next registration of the project on any node is judged by it
    /// (the change moves the configuration version). The default policy is stored as none.
    /// - Parameter policy: the new policy; its lists are normalized (``AttestationPolicy/validated()``).
    /// - Returns: the project with its new policy.
    /// - Throws: `invalid_argument` for a policy that does not validate, `not_found`.
    public func setAttestationPolicy(projectID: String, _ policy: AttestationPolicy) throws(SesameError) -> Project {
        let policy = try policy.validated()
        try StoreErrors.map { () throws(StoreError) in
            try store.projects.setAttestationPolicy(projectID: projectID, json: policy == .default ? nil : policy.jsonText, at: clock.now())
        }
        cache.noteChange()
        return try get(projectID)
    }

    /// Adds a platform after checking its fields.
    /// - Parameter id: a custom ID (Appwrite's rules), or `nil` for a new one.
    /// - Throws: `invalid_argument`; `conflict` when the ID is taken; `not_found`.
    public func addPlatform(projectID: String, _ platform: Platform, name: String? = nil, id: String? = nil) throws(SesameError) -> PlatformEntry {
        _ = try get(projectID)
        let entry = PlatformEntry(id: try UserService.checkID(id), name: try Self.checkName(name ?? platform.kind),
                                  platform: try Self.validated(platform), createdAt: clock.now())
        try StoreErrors.map { () throws(StoreError) in try store.platforms.add(entry.record(projectID: projectID)) }
        cache.noteChange()
        return entry
    }

    /// Replaces a platform's name and fields; its kind cannot change.
    /// - Throws: `invalid_argument`; `not_found` when the project has no such platform; `conflict` when it is of
    ///   another kind.
    public func updatePlatform(projectID: String, platformID: String, _ platform: Platform, name: String) throws(SesameError)
        -> PlatformEntry
    {
        guard let existing = try get(projectID).platforms.first(where: { $0.id == platformID }) else {
            throw SesameError(.notFound, "platform")
        }
        guard existing.platform.kind == platform.kind else { throw SesameError(.conflict, "the platform is of another kind") }
        let entry = PlatformEntry(id: platformID, name: try Self.checkName(name), platform: try Self.validated(platform),
                                  createdAt: existing.createdAt)
        _ = try StoreErrors.map { () throws(StoreError) in try store.platforms.update(entry.record(projectID: projectID)) }
        cache.noteChange()
        return entry
    }

    /// Removes a platform.
    /// - Throws: `not_found` when the project has no such platform.
    public func removePlatform(projectID: String, platformID: String) throws(SesameError) {
        let removed = try StoreErrors.map { () throws(StoreError) in try store.platforms.remove(projectID: projectID, id: platformID) }
        cache.noteChange()
        guard removed else { throw SesameError(.notFound, "platform") }
    }

    /// The project whose relying party ID is `host` (without port), or the only project when there is one.
    public func project(servingHost host: String) throws(SesameError) -> Project? {
        let name = host.split(separator: ":").first.map { String($0).lowercased() } ?? ""
        let projects = try list()
        return projects.first { $0.relyingPartyID == name } ?? (projects.count == 1 ? projects[0] : nil)
    }

    static func validated(_ platform: Platform) throws(SesameError) -> Platform {
        switch platform {
        case .web(let hostname):
            return .web(hostname: try PlatformValidation.hostname(hostname, allowWildcard: true))
        case .android(let package, let fingerprints):
            guard !fingerprints.isEmpty, fingerprints.allSatisfy({ $0.count == 32 }) else {
                throw SesameError(.invalidArgument, "an Android platform needs at least one SHA-256 fingerprint")
            }
            return .android(packageName: try PlatformValidation.androidPackageName(package), sha256Fingerprints: fingerprints)
        case .apple(let team, let bundle):
            // The team ID may be unknown (Appwrite's Apple platforms carry only the bundle); such apps still get the
            // `https://<rpId>` origin, but no apple-app-site-association entry.
            let teamID = team.isEmpty ? "" : try PlatformValidation.appleTeamID(team)
            return .apple(teamID: teamID, bundleID: try PlatformValidation.appleBundleID(bundle))
        }
    }

    static func checkName(_ name: String) throws(SesameError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        // Control characters (NUL above all, which the store refuses) have no place in a displayed name.
        let control = trimmed.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard !trimmed.isEmpty, trimmed.count <= 128, !control else {
            throw SesameError(.invalidArgument, "a name is 1 to 128 characters, without control characters")
        }
        return trimmed
    }
}

extension Project {
    init(record: ProjectRecord, platforms: [PlatformEntry]) {
        self.init(id: record.id, name: record.name, relyingPartyID: record.rpID, relyingPartyName: record.rpName,
                  authMethods: record.authMethods, platforms: platforms, createdAt: record.createdAt)
        if let json = record.attestationPolicy {
            // Written only after validation; a row that no longer reads fails closed (see attestationPolicyUnreadable).
            if let policy = try? AttestationPolicy(jsonEncoded: Array(json.utf8)) {
                attestationPolicy = policy
            } else {
                attestationPolicyUnreadable = true
            }
        }
    }
}

extension PlatformEntry {
    /// A stored platform; nil for a row whose fields no longer validate (it is then ignored, not served).
    init?(record: PlatformRecord) {
        let platform: Platform
        switch record.kind {
        case "web":
            guard let host = record.hostname else { return nil }
            platform = .web(hostname: host)
        case "android":
            guard let package = record.packageName,
                  let fingerprints = try? record.sha256Fingerprints.map(PlatformValidation.sha256Fingerprint) else { return nil }
            platform = .android(packageName: package, sha256Fingerprints: fingerprints)
        case "apple":
            guard let team = record.teamID, let bundle = record.bundleID else { return nil }
            platform = .apple(teamID: team, bundleID: bundle)
        default:
            return nil
        }
        self.init(id: record.id, name: record.name ?? record.kind, platform: platform, createdAt: record.createdAt)
    }

    func record(projectID: String) -> PlatformRecord {
        var record = PlatformRecord(id: id, projectID: projectID, kind: platform.kind, name: name, createdAt: createdAt)
        switch platform {
        case .web(let hostname): record.hostname = hostname
        case .android(let package, let fingerprints):
            record.packageName = package
            record.sha256Fingerprints = fingerprints.map(PlatformValidation.fingerprintText)
        case .apple(let team, let bundle):
            record.teamID = team
            record.bundleID = bundle
        }
        return record
    }
}

/// Maps storage failures to domain errors.
enum StoreErrors {
    static func translate(_ error: StoreError) -> SesameError {
        switch error.code {
        case .notFound: SesameError(.notFound, error.detail)
        case .conflict: SesameError(.conflict, error.detail)
        case .limitReached: SesameError(.limitReached, error.detail)
        case .unavailable: SesameError(.unavailable, error.detail)
        // Text with a NUL is bad input wherever it came from (PostgreSQL cannot store it; SQLite would cut it).
        case .unstorableValue: SesameError(.invalidArgument, "text must not contain a NUL character")
        default: SesameError(.internalFailure, error.debugDescription)
        }
    }

    /// Runs a storage call, translating its error.
    static func map<T>(_ body: () throws(StoreError) -> T) throws(SesameError) -> T {
        do { return try body() } catch { throw translate(error) }
    }
}
