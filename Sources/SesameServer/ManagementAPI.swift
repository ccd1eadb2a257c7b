import Foundation
import SesameCore
import SesameHTTP
import WebAuthn

/// Sesame's own management API under `/api/v1`, authenticated with a project API key
/// (`Authorization: Bearer sesame_sk_...`): the project, its relying party and platforms, and challenges.
enum ManagementAPI {
    static func add(to router: inout Router, sesame: Sesame) {
        router.mount("/api/v1", errorRenderer: DefaultErrorRenderer())

        router.add(.GET, "/api/v1/project") { request in
            let key = try authenticate(request, sesame, .projectRead)
            return .json(ProjectBody(try call { () throws(SesameError) in try sesame.projects.get(key.projectID) }))
        }
        router.add(.PUT, "/api/v1/project/relying-party") { request in
            let key = try authenticate(request, sesame, .projectWrite)
            let body = try decodeJSONBody(RelyingPartyBody.self, from: request)
            let project = try call { () throws(SesameError) in
                try sesame.projects.setRelyingParty(projectID: key.projectID, id: body.id, name: body.name ?? body.id)
            }
            return .json(ProjectBody(project))
        }
        router.add(.GET, "/api/v1/project/attestation-policy") { request in
            let key = try authenticate(request, sesame, .projectRead)
            return policyResponse(try call { () throws(SesameError) in try sesame.projects.get(key.projectID).readableAttestationPolicy() })
        }
        router.add(.PUT, "/api/v1/project/attestation-policy") { request in
            let key = try authenticate(request, sesame, .projectWrite)
            guard !request.body.isEmpty else { throw HTTPError.badRequest(code: "invalid_json", message: "The request body is empty.") }
            // The whole policy, read strictly (unknown members refused); what GET answers.
            let policy = try call { () throws(SesameError) in try AttestationPolicy(jsonEncoded: request.body) }
            let project = try call { () throws(SesameError) in try sesame.projects.setAttestationPolicy(projectID: key.projectID, policy) }
            return policyResponse(project.attestationPolicy)
        }
        router.add(.GET, "/api/v1/project/platforms") { request in
            let key = try authenticate(request, sesame, .projectRead)
            return .json(PlatformList(platforms: try call { () throws(SesameError) in try sesame.projects.get(key.projectID) }.platforms.map(PlatformBody.init)))
        }
        router.add(.POST, "/api/v1/project/platforms") { request in
            let key = try authenticate(request, sesame, .projectWrite)
            let body = try decodeJSONBody(PlatformBody.self, from: request)
            let platform = try body.platform()
            let entry = try call { () throws(SesameError) in
                try sesame.projects.addPlatform(projectID: key.projectID, platform, name: body.name)
            }
            return .json(PlatformBody(entry), status: 201)
        }
        router.add(.DELETE, "/api/v1/project/platforms/:platformId") { request in
            let key = try authenticate(request, sesame, .projectWrite)
            try call { () throws(SesameError) in
                try sesame.projects.removePlatform(projectID: key.projectID, platformID: request.pathParameters["platformId"] ?? "")
            }
            return .noContent()
        }
        router.add(.POST, "/api/v1/challenges") { request in
            let key = try authenticate(request, sesame, .challengesWrite)
            let body = try decodeJSONBody(ChallengeRequest.self, from: request)
            guard let lifetime = (body.ttlSeconds ?? ClientNumber(300)).seconds() else {
                throw HTTPError.badRequest(code: "invalid_argument", message: "ttlSeconds must be a whole number of seconds.")
            }
            let issued = try call { () throws(SesameError) in
                try sesame.challenges.issue(projectID: key.projectID, purpose: body.purpose, lifetime: lifetime)
            }
            return .json(ChallengeBody(id: issued.id, challenge: Base64URL.encode(issued.bytes), purpose: issued.purpose,
                                       expiresAt: issued.expiresAt), status: 201)
        }
        router.add(.POST, "/api/v1/challenges/:challengeId/consume") { request in
            let key = try authenticate(request, sesame, .challengesWrite)
            let body = try decodeJSONBody(ConsumeRequest.self, from: request)
            let consumed = try call { () throws(SesameError) in
                try sesame.challenges.consume(id: request.pathParameters["challengeId"] ?? "", projectID: key.projectID, purpose: body.purpose)
            }
            return .json(ChallengeBody(id: consumed.id, challenge: Base64URL.encode(consumed.bytes), purpose: consumed.purpose, expiresAt: nil))
        }
    }

    /// A policy in its JSON form (``AttestationPolicy/jsonText``), every member written.
    static func policyResponse(_ policy: AttestationPolicy) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": HTTPResponse.jsonContentType], body: Array(policy.jsonText.utf8))
    }

    /// The API key in `Authorization: Bearer ...`, which must hold `scope`.
    static func authenticate(_ request: HTTPRequest, _ sesame: Sesame, _ scope: APIKey.Scope) throws(HTTPError) -> APIKey {
        guard let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else {
            throw HTTPError(SesameError(.unauthorized, "no bearer token"))
        }
        return try call { () throws(SesameError) in try sesame.apiKeys.authenticate(String(header.dropFirst(7)), requiring: scope) }
    }

    /// Runs a domain call, answering its error over HTTP.
    static func call<T>(_ body: () throws(SesameError) -> T) throws(HTTPError) -> T {
        do { return try body() } catch { throw HTTPError(error) }
    }
}

private struct RelyingPartyBody: Decodable {
    let id: String
    let name: String?
}

private struct ChallengeRequest: Decodable {
    let purpose: String
    let ttlSeconds: ClientNumber?
}

private struct ConsumeRequest: Decodable {
    let purpose: String
}

private struct ChallengeBody: Encodable {
    let id: String
    let challenge: String
    let purpose: String
    let expiresAt: Date?
}

private struct ProjectBody: Encodable {
    let id: String
    let name: String
    let relyingPartyId: String
    let relyingPartyName: String
    let authMethods: [String: Bool]
    let origins: [String]
    let platforms: [PlatformBody]

    init(_ project: Project) {
        id = project.id
        name = project.name
        relyingPartyId = project.relyingPartyID
        relyingPartyName = project.relyingPartyName
        authMethods = project.authMethods
        origins = project.configuration.acceptedOrigins
        platforms = project.platforms.map(PlatformBody.init)
    }
}

private struct PlatformList: Encodable {
    let platforms: [PlatformBody]
}

/// A platform on the wire: `type` is `web`, `android` or `apple`, with that type's fields.
struct PlatformBody: Codable {
    var id: String?
    var type: String
    var name: String?
    var hostname: String?
    var packageName: String?
    var sha256Fingerprints: [String]?
    var teamId: String?
    var bundleId: String?

    init(_ entry: PlatformEntry) {
        id = entry.id
        name = entry.name
        type = entry.platform.kind
        switch entry.platform {
        case .web(let host): hostname = host
        case .android(let package, let fingerprints):
            packageName = package
            sha256Fingerprints = fingerprints.map(PlatformValidation.fingerprintText)
        case .apple(let team, let bundle):
            teamId = team
            bundleId = bundle
        }
    }

    /// The platform this body describes.
    /// - Throws: 400 for a missing field or unknown type.
    func platform() throws(HTTPError) -> Platform {
        func missing(_ field: String) -> HTTPError {
            HTTPError.badRequest(code: "invalid_argument", message: "A \(type) platform needs \(field).")
        }
        switch type {
        case "web":
            guard let hostname else { throw missing("hostname") }
            return .web(hostname: hostname)
        case "android":
            guard let packageName else { throw missing("packageName") }
            guard let texts = sha256Fingerprints, !texts.isEmpty else { throw missing("sha256Fingerprints") }
            var fingerprints: [[UInt8]] = []
            for text in texts {
                do { fingerprints.append(try PlatformValidation.sha256Fingerprint(text)) } catch { throw HTTPError(error) }
            }
            return .android(packageName: packageName, sha256Fingerprints: fingerprints)
        case "apple":
            guard let teamId else { throw missing("teamId") }
            guard let bundleId else { throw missing("bundleId") }
            return .apple(teamID: teamId, bundleID: bundleId)
        default:
            throw HTTPError.badRequest(code: "invalid_argument", message: "type must be web, android or apple.")
        }
    }
}
