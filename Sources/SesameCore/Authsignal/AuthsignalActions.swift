import Foundation
import SesameStore

/// What a backend may say when it tracks an action; every field is optional.
public struct TrackInput: Sendable, Hashable {
    /// Re-uses the action with this key if the tenant has it (for the same user and action code).
    public var idempotencyKey: String?
    /// Extra scopes for the token (`add:authenticators` to enrol a passkey when the user already has one).
    public var scopes: Set<AuthenticatorScope>
    /// Stored on the user when given.
    public var attributes: AuthsignalUserAttributes

    /// An input.
    public init(idempotencyKey: String? = nil, scopes: Set<AuthenticatorScope> = [], attributes: AuthsignalUserAttributes = .init()) {
        self.idempotencyKey = idempotencyKey
        self.scopes = scopes
        self.attributes = attributes
    }
}

/// Tracking actions, reading and setting their state, and validating tokens (spec §2.2-§2.4, §4.4).
extension AuthsignalService {
    /// Tracks `actionCode` for `userID`: a new action (or the one its idempotency key names) and a 10-minute track token.
    /// The state is the operator's configured outcome for the code, else `ALLOW` for a user without authenticators and
    /// `CHALLENGE_REQUIRED` for one with.
    /// - Throws: `invalid_argument` (action code, user ID, an idempotency key of another user or action).
    public func track(project: Project, userID: String, actionCode: String, input: TrackInput) throws(SesameError) -> TrackedAction {
        let code = try Self.checkActionCode(actionCode)
        let key = try input.idempotencyKey.map { key throws(SesameError) in try Self.checkIdentifier(key, "idempotencyKey") }
        var user = try ensureUser(project: project, userID: userID)
        if input.attributes != AuthsignalUserAttributes() {
            user.apply(input.attributes, at: clock.now())
            let updated = user
            _ = try StoreErrors.map { () throws(StoreError) in try store.authsignal.updateUser(updated) }
        }
        let enrolled = try !enrolledMethods(of: user).isEmpty
        let configured = try configuredOutcome(project: project, actionCode: code)
        let record = try StoreErrors.map { () throws(StoreError) -> AuthsignalActionRecord? in
            if let key, let existing = try store.authsignal.action(projectID: project.id, idempotencyKey: key) {
                return existing.externalUserID == user.externalID && existing.actionCode == code ? existing : nil
            }
            let state = configured ?? (enrolled ? .challengeRequired : .allow)
            let now = clock.now()
            let record = AuthsignalActionRecord(id: Identifiers.uuid(), projectID: project.id, externalUserID: user.externalID, actionCode: code,
                                                idempotencyKey: key ?? Identifiers.uuid(), state: state.rawValue, stateUpdatedAt: now, createdAt: now)
            try store.authsignal.createAction(record)
            return record
        }
        guard let record else { throw SesameError(.invalidArgument, "the idempotency key belongs to another user or action") }
        let token = try tokens.mint(projectID: project.id, userID: user.externalID, action: record.view, scopes: input.scopes.union([.read]))
        return TrackedAction(action: AuthsignalAction(record), token: token, user: try describe(user, externalID: user.externalID))
    }

    /// The action of `userID` named `actionCode` with this idempotency key.
    /// - Throws: `not_found`.
    public func action(project: Project, userID: String, actionCode: String, idempotencyKey: String) throws(SesameError) -> AuthsignalAction {
        AuthsignalAction(try actionRecord(project: project, userID: userID, actionCode: actionCode, idempotencyKey: idempotencyKey))
    }

    /// Sets the state of an action (the backend's decision, such as `BLOCK` or `REVIEW_SUCCEEDED`).
    /// - Throws: `not_found`.
    public func updateAction(project: Project, userID: String, actionCode: String, idempotencyKey: String, state: ActionState)
        throws(SesameError) -> AuthsignalAction
    {
        let record = try actionRecord(project: project, userID: userID, actionCode: actionCode, idempotencyKey: idempotencyKey)
        _ = try StoreErrors.map { () throws(StoreError) in try store.authsignal.setState(id: record.id, state: state.rawValue, at: clock.now()) }
        return try action(project: project, userID: userID, actionCode: actionCode, idempotencyKey: idempotencyKey)
    }

    /// The backend's check of a token from its app: valid only when the token is the tenant's, genuine and unexpired,
    /// its action's state is `CHALLENGE_SUCCEEDED`, and `userID` and `actionCode`, when given, are the action's.
    /// Never throws for a bad token: the answer says why it is not valid.
    public func validate(project: Project, token: String, userID: String?, actionCode: String?) throws(SesameError) -> ActionValidation {
        let claims: AuthsignalTokenClaims
        do { claims = try tokens.verify(token, projectID: project.id) } catch where error.code == .unauthorized || error.code == .expired {
            return ActionValidation(isValid: false, action: nil, error: error.code == .expired ? "expired_token" : "invalid_token")
        }
        let record = try StoreErrors.map { () throws(StoreError) in
            try store.authsignal.action(projectID: project.id, idempotencyKey: claims.other.idempotencyKey)
        }
        guard let record, record.actionCode == claims.other.actionCode, record.externalUserID == nil || record.externalUserID == claims.sub
        else { return ActionValidation(isValid: false, action: nil, error: "not_found") }
        let action = AuthsignalAction(record)
        if let userID, userID != claims.sub { return ActionValidation(isValid: false, action: action, error: "user_mismatch") }
        if let actionCode, actionCode != record.actionCode { return ActionValidation(isValid: false, action: action, error: "action_mismatch") }
        return ActionValidation(isValid: action.state == .challengeSucceeded, action: action, error: nil)
    }

    private func actionRecord(project: Project, userID: String, actionCode: String, idempotencyKey: String) throws(SesameError)
        -> AuthsignalActionRecord
    {
        let user = try Self.checkIdentifier(userID, "userId"), code = try Self.checkActionCode(actionCode)
        let key = try Self.checkIdentifier(idempotencyKey, "idempotencyKey")
        let record = try StoreErrors.map { () throws(StoreError) in try store.authsignal.action(projectID: project.id, idempotencyKey: key) }
        guard let record, record.externalUserID == user, record.actionCode == code else { throw SesameError(.notFound, "action") }
        return record
    }
}
