import Foundation
import SesameCore
import SesameHTTP

/// Who is calling: the project named by `X-Appwrite-Project`, and an API key, a user session, or nobody (a guest).
///
/// The session is read, in this order, from the cookie `a_session_<projectId>` (or `a_session_<projectId>_legacy`),
/// the `X-Appwrite-Session` header (what the Python SDK sends), and the `X-Fallback-Cookies` JSON header (browser
/// SDKs without third-party cookies). An unknown or expired session leaves the caller a guest, as in Appwrite.
/// An `X-Appwrite-JWT` header stands for the session it was issued for.
struct Caller {
    let project: Project
    /// The `X-Appwrite-Key` secret, checked by ``requireSessionsWrite(_:)`` and refused by ``requireUser()``.
    let keySecret: String?
    /// The signed-in session and its user, when the caller presented a live one and no API key.
    let signedIn: (session: Session, user: User)?

    /// Resolves the caller of `request`.
    /// - Throws: 404 `project_not_found` for a missing, empty or unknown `X-Appwrite-Project`.
    init(_ request: HTTPRequest, _ sesame: Sesame) throws(HTTPError) {
        let projectID = request.headers["X-Appwrite-Project"] ?? ""
        guard !projectID.isEmpty, projectID.utf8.count <= 64 else { throw .appwrite(.projectNotFound) }
        do {
            project = try sesame.projects.get(projectID)
        } catch where error.code == .notFound {
            throw .appwrite(.projectNotFound)
        } catch {
            throw appwriteError(error)
        }
        let key = request.headers["X-Appwrite-Key"].flatMap { $0.isEmpty ? nil : $0 }
        keySecret = key
        // Browsers send Origin; only the project's web platforms may call with the user's cookies (keys are servers').
        if key == nil, let origin = request.headers["Origin"], !origin.isEmpty, !Self.isAllowed(origin: origin, project) {
            throw .appwrite(.generalUnknownOrigin)
        }
        guard key == nil else {
            signedIn = nil
            return
        }
        var session: (session: Session, user: User)?
        if let secret = Self.sessionSecret(request, projectID: projectID) {
            do { session = try sesame.sessions.authenticate(projectID: projectID, secret: secret) } catch { throw appwriteError(error) }
        }
        // A JWT stands for its session; sending one next to a live session is ambiguous and refused.
        if let jwt = request.headers["X-Appwrite-JWT"], !jwt.isEmpty {
            guard session == nil else { throw .appwrite(.userJWTAndCookieSet) }
            do { session = try sesame.jwts.verify(projectID: projectID, token: jwt) } catch { throw appwriteError(error) }
        }
        signedIn = session
    }

    /// The signed-in user; API keys never hold the `account` scope. A session that still owes a second factor may
    /// only end itself (`allowingPendingMFA`).
    /// - Throws: 401 `general_unauthorized_scope` for guests and API keys, 401 `user_more_factors_required`.
    func requireUser(allowingPendingMFA: Bool = false) throws(HTTPError) -> (session: Session, user: User) {
        guard keySecret == nil, let signedIn else {
            throw .appwrite(.generalUnauthorizedScope, "User (role: guests) missing scope (account)")
        }
        if !allowingPendingMFA, signedIn.user.needsMoreFactors(signedIn.session) { throw .appwrite(.userMoreFactorsRequired) }
        return signedIn
    }

    /// Checks the `sessions.write` scope: guests and users hold it; an API key needs Sesame's `users.write` and must
    /// belong to the project. Returns whether the caller used an API key (which unlocks session secrets).
    /// - Throws: 401 `general_unauthorized_scope` for a bad key or one without the scope.
    @discardableResult
    func requireSessionsWrite(_ sesame: Sesame) throws(HTTPError) -> Bool {
        guard keySecret != nil else { return false }
        try requireKey(sesame, .usersWrite)
        return true
    }

    /// The caller's API key, which must belong to the project and hold `scope`.
    /// - Throws: 401 `general_unauthorized_scope` without a key, or with a bad key or one lacking the scope.
    @discardableResult
    func requireKey(_ sesame: Sesame, _ scope: APIKey.Scope) throws(HTTPError) -> APIKey {
        guard let keySecret else {
            throw .appwrite(.generalUnauthorizedScope, "User (role: guests) missing scope (\(scope.rawValue))")
        }
        let key: APIKey
        do { key = try sesame.apiKeys.authenticate(keySecret, requiring: scope) } catch { throw appwriteError(error) }
        guard key.projectID == project.id else { throw .appwrite(.generalUnauthorizedScope) }
        return key
    }

    /// Whether a browser `Origin` belongs to one of the project's web platforms (``ProjectConfiguration/allowsBrowserOrigin(_:)``).
    static func isAllowed(origin: String, _ project: Project) -> Bool {
        project.configuration.allowsBrowserOrigin(origin)
    }

    /// The session secret the request presents, if any.
    static func sessionSecret(_ request: HTTPRequest, projectID: String) -> String? {
        let name = cookieName(projectID)
        let cookies = parseCookies(request.headers.values("Cookie"))
        if let value = cookies[name] ?? cookies[name + "_legacy"], !value.isEmpty { return value }
        if let value = request.headers["X-Appwrite-Session"], !value.isEmpty { return value }
        if let fallback = request.headers["X-Fallback-Cookies"], fallback.utf8.count <= 4096,
           let object = try? JSONSerialization.jsonObject(with: Data(fallback.utf8)) as? [String: Any],
           let value = object[name] as? String, !value.isEmpty {
            return value
        }
        return nil
    }

    /// The session cookie of a project: `a_session_<projectId>`.
    static func cookieName(_ projectID: String) -> String { "a_session_\(projectID)" }

    /// `name=value` pairs of `Cookie` headers; the first value of a name wins.
    static func parseCookies(_ headers: [String]) -> [String: String] {
        var cookies: [String: String] = [:]
        for header in headers {
            for pair in header.split(separator: ";") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
                let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if cookies[name] == nil { cookies[name] = value }
            }
        }
        return cookies
    }
}
