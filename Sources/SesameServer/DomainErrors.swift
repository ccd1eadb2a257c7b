import SesameCore
import SesameHTTP

extension HTTPError {
    /// The HTTP answer to a domain error, in Sesame's own codes; `detail` is never sent (it could be an oracle).
    init(_ error: SesameError) {
        switch error.code {
        case .invalidArgument: self.init(status: 400, code: "invalid_argument", message: Self.publicMessage(error))
        case .notFound: self.init(status: 404, code: "not_found", message: "The requested resource does not exist.")
        case .conflict: self.init(status: 409, code: "conflict", message: Self.publicMessage(error))
        case .unauthorized: self.init(status: 401, code: "unauthorized", message: "A valid API key is required.")
        case .forbidden: self.init(status: 403, code: "forbidden", message: "The API key lacks the scope this needs.")
        case .rateLimited: self.init(status: 429, code: "rate_limited", message: "Too many requests; try again later.")
        case .expired: self.init(status: 410, code: "expired", message: "The challenge is unknown, used or expired.")
        case .limitReached: self.init(status: 409, code: "limit_reached", message: "A limit has been reached.")
        case .unavailable: self.init(status: 503, code: "unavailable", message: "The database is unavailable.")
        default: self = .internalError()
        }
    }

    /// Validation messages say what to fix and hold no secrets, so they are shown; others stay generic.
    private static func publicMessage(_ error: SesameError) -> String { error.detail }
}
