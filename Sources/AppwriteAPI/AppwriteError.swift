import SesameCore
import SesameHTTP

/// The error types of the Appwrite wire API this face produces, with their HTTP statuses (spec §5, seed error table).
///
/// Handlers throw ``HTTPError`` whose `code` is the raw value; ``AppwriteErrorRenderer`` renders it.
public enum AppwriteErrorType: String, CaseIterable, Sendable {
    case generalArgumentInvalid = "general_argument_invalid"
    case generalQueryInvalid = "general_query_invalid"
    case generalCursorNotFound = "general_cursor_not_found"
    case generalRouteNotFound = "general_route_not_found"
    case generalUnauthorizedScope = "general_unauthorized_scope"
    case generalRateLimitExceeded = "general_rate_limit_exceeded"
    case generalServerError = "general_server_error"
    case generalUnknown = "general_unknown"
    case projectNotFound = "project_not_found"
    case userAlreadyExists = "user_already_exists"
    case userInvalidCredentials = "user_invalid_credentials"
    case userBlocked = "user_blocked"
    case generalUnknownOrigin = "general_unknown_origin"
    case userJWTInvalid = "user_jwt_invalid"
    case userMoreFactorsRequired = "user_more_factors_required"
    case userJWTAndCookieSet = "user_jwt_and_cookie_set"
    case userNotFound = "user_not_found"
    case userSessionNotFound = "user_session_not_found"
    case userAuthMethodUnsupported = "user_auth_method_unsupported"
    case userReauthenticationRequired = "user_reauthentication_required"
    case userInvalidToken = "user_invalid_token"
    case userPasskeyInvalid = "user_passkey_invalid"
    case userPasskeyLimitExceeded = "user_passkey_limit_exceeded"
    case userPasskeyAlreadyExists = "user_passkey_already_exists"
    case userPasskeyNotFound = "user_passkey_not_found"
    case platformNotFound = "platform_not_found"
    case platformAlreadyExists = "platform_already_exists"
    case platformMethodUnsupported = "platform_method_unsupported"

    /// The HTTP status Appwrite answers this type with.
    public var status: Int {
        switch self {
        case .generalArgumentInvalid, .generalQueryInvalid, .generalCursorNotFound, .userPasskeyLimitExceeded,
            .platformMethodUnsupported: 400
        case .generalUnauthorizedScope, .userInvalidCredentials, .userJWTInvalid, .userMoreFactorsRequired, .userReauthenticationRequired, .userInvalidToken,
            .userPasskeyInvalid: 401
        case .userBlocked, .generalUnknownOrigin, .userJWTAndCookieSet: 403
        case .generalRouteNotFound, .projectNotFound, .userNotFound, .userSessionNotFound, .userPasskeyNotFound,
            .platformNotFound: 404
        case .userAlreadyExists, .userPasskeyAlreadyExists, .platformAlreadyExists: 409
        case .generalRateLimitExceeded: 429
        case .generalServerError, .generalUnknown: 500
        case .userAuthMethodUnsupported: 501
        }
    }

    /// A message safe for clients, close to Appwrite's own.
    public var defaultMessage: String {
        switch self {
        case .generalArgumentInvalid: "The request contains one or more invalid arguments."
        case .generalQueryInvalid: "The query is invalid."
        case .generalCursorNotFound: "The cursor was not found."
        case .generalRouteNotFound: "The requested route was not found. Please refer to the API docs and try again."
        case .generalUnauthorizedScope: "The current user or API key is not authorized to perform the requested action."
        case .generalRateLimitExceeded: "Rate limit for the current endpoint has been exceeded. Please try again after some time."
        case .generalServerError: "An internal server error occurred."
        case .generalUnknown: "An unknown error has occurred. Please check the logs for more information."
        case .projectNotFound: "Project with the requested ID could not be found. Please check the value of the X-Appwrite-Project header."
        case .userAlreadyExists: "A user with the same id, email, or phone already exists in this project."
        case .userInvalidCredentials: "Invalid credentials. Please check the email and password."
        case .userBlocked: "The current user has been blocked."
        case .userJWTInvalid: "The JWT is invalid or expired."
        case .userMoreFactorsRequired: "More factors are required to complete the sign in process."
        case .userJWTAndCookieSet: "Pass either a JWT or a session, not both."
        case .generalUnknownOrigin: "Invalid Origin. Register your new client as a new web platform on your project."
        case .userNotFound: "User with the requested ID could not be found."
        case .userSessionNotFound: "The current user session could not be found."
        case .userAuthMethodUnsupported: "The requested authentication method is either disabled or unsupported."
        case .userReauthenticationRequired: "This action needs a session that signed in or completed MFA within the last 10 minutes."
        case .userInvalidToken: "Invalid token passed in the request."
        case .userPasskeyInvalid: "The passkey credential failed verification."
        case .userPasskeyLimitExceeded: "The user already has the maximum number of passkeys, counting registrations in progress."
        case .userPasskeyAlreadyExists: "This credential, or a passkey with this ID, is already registered."
        case .userPasskeyNotFound: "No passkey with the requested ID belongs to the user, or the registration is no longer pending."
        case .platformNotFound: "Platform with the requested ID could not be found."
        case .platformAlreadyExists: "Platform with the requested ID already exists."
        case .platformMethodUnsupported: "The platform is of another type; use the update method of its type."
        }
    }
}

extension HTTPError {
    /// An Appwrite error of `type`, with its status and `message` (the type's default message when `nil`).
    static func appwrite(_ type: AppwriteErrorType, _ message: String? = nil) -> HTTPError {
        HTTPError(status: type.status, code: type.rawValue, message: message ?? type.defaultMessage)
    }
}

/// Renders every error under `/v1` as Appwrite's `{"message", "code", "type", "version"}` (spec §1.6).
///
/// Errors thrown with an ``AppwriteErrorType`` code keep it. Errors from the router and HTTP layer are translated,
/// keeping their status: 404 and 405 become `general_route_not_found`, 413, 415 and malformed JSON
/// `general_argument_invalid`, 429 `general_rate_limit_exceeded`, 5xx `general_server_error`.
public struct AppwriteErrorRenderer: HTTPErrorRenderer {
    /// Creates the renderer.
    public init() {}

    /// Renders `error` in Appwrite's shape with `Content-Type: application/json; charset=UTF-8`.
    public func render(_ error: HTTPError, for request: HTTPRequest) -> HTTPResponse {
        let (type, message) = Self.translate(error)
        let body = ErrorBody(message: message, code: error.status, type: type, version: AppwriteAPI.version)
        var response = HTTPResponse.json(body, status: error.status)
        response.headers.set("Content-Type", AppwriteAPI.jsonContentType)
        return response
    }

    static func translate(_ error: HTTPError) -> (type: String, message: String) {
        if AppwriteErrorType(rawValue: error.code) != nil { return (error.code, error.message) }
        let type: AppwriteErrorType
        switch error.status {
        case 404, 405: type = .generalRouteNotFound
        case 429: type = .generalRateLimitExceeded
        case 500...: type = .generalServerError
        default: type = .generalArgumentInvalid
        }
        // Messages of the HTTP layer are client-safe (they never echo input), and more precise than the defaults.
        return (type.rawValue, error.status >= 500 ? type.defaultMessage : error.message)
    }

    private struct ErrorBody: Encodable {
        let message: String
        let code: Int
        let type: String
        let version: String
    }
}

/// Translates a domain error into this face's errors; `context` picks the type for codes whose meaning depends on
/// the route (a conflict is `user_already_exists` on sign-up, `user_passkey_already_exists` on registration).
func appwriteError(_ error: SesameError, notFound: AppwriteErrorType = .generalRouteNotFound,
                   conflict: AppwriteErrorType = .generalArgumentInvalid) -> HTTPError {
    switch error.code {
    case .invalidArgument: .appwrite(.generalArgumentInvalid, error.detail.isEmpty ? nil : "Invalid argument: \(error.detail).")
    case .notFound: .appwrite(notFound)
    case .conflict: .appwrite(conflict)
    case .invalidCredentials: .appwrite(.userInvalidCredentials)
    case .blocked: .appwrite(.userBlocked)
    case .unauthorized, .forbidden: .appwrite(.generalUnauthorizedScope)
    case .rateLimited:
        {
            var limited = HTTPError.appwrite(.generalRateLimitExceeded)
            if let decision = error.rateLimit { AppwriteAPI.setRateLimitHeaders(&limited.headers, decision) }
            return limited
        }()
    case .expired: .appwrite(.userInvalidToken)
    case .limitReached: .appwrite(.userPasskeyLimitExceeded)
    case .unsupported: .appwrite(.userAuthMethodUnsupported)
    // As Appwrite does for an unregistered client: say which web platform to add (the project's own data only).
    case .noRelyingParty: .appwrite(.generalUnknownOrigin, "Invalid Origin. \(error.detail)")
    case .reauthenticationRequired: .appwrite(.userReauthenticationRequired)
    case .verificationFailed: .appwrite(.userPasskeyInvalid)
    case .invalidJWT: .appwrite(.userJWTInvalid)
    default: .appwrite(.generalServerError)
    }
}
