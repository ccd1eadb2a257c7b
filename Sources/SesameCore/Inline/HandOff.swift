import Foundation
import SesameCrypto
import SesameStore
import WebAuthn

/// What the hosted hand-off page shows for a request, with passkey options when it can still complete.
public enum HandOffAnswer: Sendable, Hashable {
    case options(HandOffOptions)
    case closed(InlineVerdict)
}

/// The hand-off page's view of a pending request.
public struct HandOffOptions: Sendable, Hashable {
    /// The partner's display name and the action, for the page to show.
    public let partnerName: String
    public let scope: String
    /// Whether completing also links the partner's ref to the person (`link: true`).
    public let linkIntent: Bool
    public let rpID: String
    public let challenge: [UInt8]
    /// The linked person's passkeys; empty for a request without a linked person (any person's discoverable passkey).
    public let allowCredentials: [CredentialDescriptor]
    public let challengeID: String
    public let expiresAt: Date
    /// Whether the page sends the person back to the partner's `return_url` once the request is finished.
    public let hasReturnURL: Bool
}

/// The server side of the hosted hand-off page (`{app}/verify?request_id=…`): the page itself comes with the web
/// pages, and calls these. It completes requests through the same routine as the inline passkey, so status, token and
/// webhook are identical on both paths. Assertions are accepted only from the hosted pages' origin.
public struct HandOffService: Sendable {
    let sesame: Sesame

    static let purpose = ChallengeBinding.handOffPurpose

    /// Options for the page: the linked person's passkeys, or any discoverable passkey of the project.
    public func options(requestID: String, clientIP: String?) throws(SesameError) -> HandOffAnswer {
        let inline = InlinePasskeyService(sesame: sesame)
        let request: VerificationRequestRecord
        switch try inline.openRequest(requestID, clientIP: clientIP, counting: .options) {
        case .closed(let outcome): return .closed(outcome)
        case .open(let open, _): request = open
        }
        let partner = try sesame.partners.get(request.partnerID)
        let project = try sesame.projects.get(partner.projectID)
        let linked = try inline.linkedPasskeys(of: request, project: project)
        let link = linked?.link, credentials = linked?.passkeys ?? []
        let challenge = try sesame.ceremonies.start(.handOff(requestID: request.id), id: Identifiers.uuid(), project: project,
                                                    rpID: project.relyingPartyID, userID: link?.userID, linkID: link?.id)
        return .options(HandOffOptions(
            partnerName: partner.name, scope: request.scope, linkIntent: request.linkIntent, rpID: project.relyingPartyID,
            challenge: challenge.challenge, allowCredentials: credentials.map { CredentialDescriptor(id: $0.credentialID, transports: $0.transports) },
            challengeID: challenge.id, expiresAt: min(challenge.expiresAt, request.expiresAt), hasReturnURL: request.returnURL != nil
        ))
    }

    /// The relying party policy of the hand-off page's assertions: only the hosted pages' origin; user verification is
    /// checked after identity.
    public func policy(project: Project) -> RelyingPartyPolicy {
        RelyingParties.handOffPolicy(for: project.configuration, appOrigin: sesame.inline.appOrigin)
    }

    /// Checks the page's assertion and completes the request: as the linked person (`linked: true`), as whoever
    /// confirmed an unlinked request (`linked: false`), or, with `link: true`, linking the ref to that person in the
    /// completion's transaction (a conflict fails the request with `already_linked`).
    public func complete(requestID: String, challengeID: String, credentialJSON: [UInt8], clientIP: String?) throws(SesameError)
        -> InlineCompletion
    {
        try InlineCeremony.run(InlinePasskeyService(sesame: sesame)) { ceremony throws(SesameError) in
            try ceremony.finish(requestID, challengeID: challengeID, credentialJSON: credentialJSON, clientIP: clientIP, binding: ChallengeBinding.handOff,
                                policy: { _, project in policy(project: project) }) { request, challenge, repositories throws(StoreError) in
                if let linkID = challenge.linkID, try InlinePasskeyService.link(of: request, in: repositories)?.id != linkID { return .end(.linkChanged) }
                return .verify(.linkedPerson(userID: challenge.userID))
            }
        }
    }

    /// The person declined on the page: the request fails with `user_denied`.
    public func decline(requestID: String) throws(SesameError) -> InlineVerdict {
        guard VerificationService.isRequestID(requestID) else { return .unknownRequest }
        let failed = try StoreErrors.map { () throws(StoreError) in
            try sesame.store.verificationRequests.fail(id: requestID, reason: "user_denied", at: sesame.clock.now())
        }
        return failed ? InlineVerdict.declined : .requestClosed
    }
}
