import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// The project routes (spec §3.5), for API keys: auth methods, the passkey policy (relying party ID) and platforms.
/// Sesame's `project.read` and `project.write` scopes stand for Appwrite's project, policies and platforms scopes.
enum ProjectRoutes {
    static func add(to router: inout Router, sesame: Sesame) {
        router.add(.GET, "/v1/project", cors: true) { request in
            let caller = try keyed(request, sesame, .projectRead)
            return AppwriteAPI.json(ProjectModel(caller.project))
        }

        // P1: switch an authentication method on or off.
        router.add(.PATCH, "/v1/project/auth-methods/:methodId", cors: true) { request in
            let caller = try keyed(request, sesame, .projectWrite)
            let method = request.pathParameters["methodId"] ?? ""
            guard authMethodIDs.contains(method) else {
                throw HTTPError.appwrite(.generalArgumentInvalid, "Invalid methodId param: Value must be one of (\(authMethodIDs.joined(separator: ", "))).")
            }
            let enabled = try AppwriteAPI.required(try decodeJSONBody(AuthMethodBody.self, from: request).enabled, "enabled")
            let project = try AppwriteAPI.call { () throws(SesameError) in
                try sesame.projects.setAuthMethod(projectID: caller.project.id, method: method, enabled: enabled)
            }
            return AppwriteAPI.json(ProjectModel(project))
        }

        // P2, P3: the passkey policy. Changing the relying party ID while passkeys exist is general_argument_invalid.
        router.add(.PATCH, "/v1/project/policies/passkey", cors: true) { request in
            let caller = try keyed(request, sesame, .projectWrite)
            let rpID = try AppwriteAPI.required(try decodeJSONBody(PolicyBody.self, from: request).rpId, "rpId")
            let project: Project
            do throws(SesameError) {
                project = try sesame.projects.setRelyingPartyID(projectID: caller.project.id, rpID)
            } catch where error.code == .conflict {
                throw HTTPError.appwrite(.generalArgumentInvalid,
                                         "The relying party ID cannot change while users have passkeys or registrations in progress.")
            } catch {
                throw appwriteError(error)
            }
            return AppwriteAPI.json(ProjectModel(project))
        }
        router.add(.GET, "/v1/project/policies/passkey", cors: true) { request in
            let caller = try keyed(request, sesame, .projectRead)
            return AppwriteAPI.json(policy(caller.project, sesame))
        }
        router.add(.GET, "/v1/project/policies", cors: true) { request in
            let caller = try keyed(request, sesame, .projectRead)
            return AppwriteAPI.json(PolicyListModel(total: 1, policies: [policy(caller.project, sesame)]))
        }

        // P4: platforms.
        router.add(.GET, "/v1/project/platforms", cors: true) { request in
            let caller = try keyed(request, sesame, .projectRead)
            let platforms = caller.project.platforms.map(PlatformModel.init)
            let (page, total) = try AppwriteAPI.page(request, platforms, attributes: ["$id", "type", "name", "hostname", "bundleIdentifier", "applicationId"],
                                                     id: \.entry.id) { model, attribute in
                switch (attribute, model.entry.platform) {
                case ("type", let platform): platform.kind
                case ("name", _): model.entry.name
                case ("hostname", .web(let host)): host
                case ("bundleIdentifier", .apple(_, let bundle)): bundle
                case ("applicationId", .android(let package, _)): package
                case ("$id", _): model.entry.id
                default: ""
                }
            }
            return AppwriteAPI.json(PlatformListModel(total: total, platforms: page))
        }
        router.add(.GET, "/v1/project/platforms/:platformId", cors: true) { request in
            let caller = try keyed(request, sesame, .projectRead)
            guard let entry = caller.project.platforms.first(where: { $0.id == request.pathParameters["platformId"] }) else {
                throw HTTPError.appwrite(.platformNotFound)
            }
            return AppwriteAPI.json(PlatformModel(entry: entry))
        }
        router.add(.DELETE, "/v1/project/platforms/:platformId", cors: true) { request in
            let caller = try keyed(request, sesame, .projectWrite)
            try AppwriteAPI.call(notFound: .platformNotFound) { () throws(SesameError) in
                try sesame.projects.removePlatform(projectID: caller.project.id, platformID: request.pathParameters["platformId"] ?? "")
            }
            return .noContent()
        }
        router.add(.PUT, "/v1/project/platforms/web/:platformId", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            return try update(request, sesame, body, .web(hostname: try AppwriteAPI.required(body.hostname, "hostname")))
        }
        router.add(.PUT, "/v1/project/platforms/android/:platformId", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            let package = try AppwriteAPI.required(body.applicationId, "applicationId")
            let caller = try keyed(request, sesame, .projectWrite)
            // Omitted fingerprints keep the list; `[]` clears it (which Sesame refuses: no origin without one).
            var fingerprints: [[UInt8]] = []
            if let texts = body.fingerprints {
                for text in texts {
                    fingerprints.append(try AppwriteAPI.call { () throws(SesameError) in try PlatformValidation.sha256Fingerprint(text) })
                }
            } else if case .android(_, let kept) = caller.project.platforms.first(where: { $0.id == request.pathParameters["platformId"] })?.platform {
                fingerprints = kept
            }
            return try update(request, sesame, body, .android(packageName: package, sha256Fingerprints: fingerprints))
        }
        router.add(.PUT, "/v1/project/platforms/apple/:platformId", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            return try update(request, sesame, body, .apple(teamID: "", bundleID: try AppwriteAPI.required(body.bundleIdentifier, "bundleIdentifier")))
        }
        router.add(.POST, "/v1/project/platforms/web", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            return try create(request, sesame, body, .web(hostname: try AppwriteAPI.required(body.hostname, "hostname")))
        }
        router.add(.POST, "/v1/project/platforms/android", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            let package = try AppwriteAPI.required(body.applicationId, "applicationId")
            var fingerprints: [[UInt8]] = []
            for text in body.fingerprints ?? [] {
                fingerprints.append(try AppwriteAPI.call { () throws(SesameError) in try PlatformValidation.sha256Fingerprint(text) })
            }
            return try create(request, sesame, body, .android(packageName: package, sha256Fingerprints: fingerprints))
        }
        router.add(.POST, "/v1/project/platforms/apple", cors: true) { request in
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            return try create(request, sesame, body, .apple(teamID: "", bundleID: try AppwriteAPI.required(body.bundleIdentifier, "bundleIdentifier")))
        }
    }

    /// The caller, which must use an API key of the project holding `scope`.
    private static func keyed(_ request: HTTPRequest, _ sesame: Sesame, _ scope: APIKey.Scope) throws(HTTPError) -> Caller {
        let caller = try Caller(request, sesame)
        try caller.requireKey(sesame, scope)
        return caller
    }

    /// The passkey policy: the relying party ID and the origins the platforms give (none when passkeys cannot run),
    /// plus `http://localhost` (any port) when a `localhost` web platform exists.
    private static func policy(_ project: Project, _ sesame: Sesame) -> PasskeyPolicyModel {
        let accepted = project.configuration.acceptedOrigins
        let origins = project.authMethods["passkey"] == false ? accepted.filter { $0 == "http://localhost" } : accepted
        return PasskeyPolicyModel(rpId: project.relyingPartyID, origins: origins)
    }

    private static func update(_ request: HTTPRequest, _ sesame: Sesame, _ body: PlatformBody, _ platform: Platform) throws(HTTPError)
        -> HTTPResponse
    {
        let caller = try keyed(request, sesame, .projectWrite)
        let name = try AppwriteAPI.required(body.name, "name")
        let entry = try AppwriteAPI.call(notFound: .platformNotFound, conflict: .platformMethodUnsupported) { () throws(SesameError) in
            try sesame.projects.updatePlatform(projectID: caller.project.id, platformID: request.pathParameters["platformId"] ?? "",
                                               platform, name: name)
        }
        return AppwriteAPI.json(PlatformModel(entry: entry))
    }

    private static func create(_ request: HTTPRequest, _ sesame: Sesame, _ body: PlatformBody, _ platform: Platform) throws(HTTPError)
        -> HTTPResponse
    {
        let caller = try keyed(request, sesame, .projectWrite)
        let id = try AppwriteAPI.required(body.platformId, "platformId")
        let name = try AppwriteAPI.required(body.name, "name")
        let entry = try AppwriteAPI.call(conflict: .platformAlreadyExists) { () throws(SesameError) in
            try sesame.projects.addPlatform(projectID: caller.project.id, platform, name: name, id: id)
        }
        return AppwriteAPI.json(PlatformModel(entry: entry), status: 201)
    }
}

private struct AuthMethodBody: Decodable {
    let enabled: Bool?
}

private struct PolicyBody: Decodable {
    let rpId: String?
}

private struct PlatformBody: Decodable {
    let platformId: String?
    let name: String?
    let hostname: String?
    let applicationId: String?
    let fingerprints: [String]?
    let bundleIdentifier: String?
}
