import Foundation
import SesameCore
import SesameHTTP
import SesameTestSupport
import Testing

/// Track and result tokens live 10 minutes (spec §4.1, §4.2), belong to one tenant, and carry scopes.
@Suite struct TokenTests {
    @Test("a track token works for 10 minutes; then the client API answers 401 expired_token and validate says so",
          arguments: Backend.allCases)
    func trackTokenLifetime(backend: Backend) throws {
        let harness = try Harness(backend)
        let token = try #require(harness.track("alice", "createPasskey")["token"] as? String)
        harness.clock.advance(by: 599)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + token).status == 200)
        harness.clock.advance(by: 1)
        let expired = harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + token)
        #expect(expired.isError(401, "expired_token"), "\(expired.text)")
        #expect(harness.send(.GET, "/client/user-authenticators", authorization: "Bearer " + token).isError(401, "expired_token"))
        let validated = harness.validate(token)
        #expect(validated["isValid"] as? Bool == false && validated["error"] as? String == "expired_token", "\(validated)")
    }

    @Test("a result token lives 10 minutes from the completed challenge, and validates only while it lives", arguments: Backend.allCases)
    func resultTokenLifetime(backend: Backend) throws {
        let harness = try Harness(backend)
        let track = try #require(harness.track("bob", "createPasskey")["token"] as? String)
        harness.clock.advance(by: 300)
        let added = try harness.signUp(track)
        let result = try #require(added.object["accessToken"] as? String)
        harness.clock.advance(by: 599)
        #expect(harness.validate(result, user: "bob", action: "createPasskey")["isValid"] as? Bool == true)
        harness.clock.advance(by: 1)
        let validated = harness.validate(result)
        #expect(validated["isValid"] as? Bool == false && validated["error"] as? String == "expired_token")
    }

    @Test("a token is its tenant's: another tenant's validate calls it invalid, and a forged signature is 401 unauthorized",
          arguments: Backend.allCases)
    func tenantBound(backend: Backend) throws {
        let harness = try Harness(backend)
        let other = try harness.sesame.projects.create(name: "Other", relyingPartyID: "other.example")
        let otherSecret = try harness.sesame.authsignal.createSecret(projectID: other.id).secret
        let foreign = try #require(harness.send(.POST, "/users/carol/actions/signIn", [:],
                                                authorization: "Basic " + Data("\(otherSecret):".utf8).base64EncodedString()).object["token"] as? String)
        let validated = harness.validate(foreign)
        #expect(validated["isValid"] as? Bool == false && validated["error"] as? String == "invalid_token" && validated["state"] == nil)
        // The same token with one signature character changed.
        var parts = foreign.split(separator: ".").map(String.init)
        parts[2] = (parts[2].first == "A" ? "B" : "A") + parts[2].dropFirst()
        let forged = parts.joined(separator: ".")
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/authentication-options", [:], authorization: "Bearer " + forged)
            .isError(401, "unauthorized"))
        // The payload is the claims, members in name order; the same signature over another user's payload is refused.
        let payload = try #require(Data(base64Encoded: Self.padded(parts[1])))
        let text = String(decoding: payload, as: UTF8.self)
        #expect(text.hasPrefix(#"{"aud":""# + other.id + #"","exp":"#) && text.contains(#","other":{"actionCode":"signIn","idempotencyKey":""#)
            && text.hasSuffix(#","sub":"carol"}"#), "\(text)")
        let mallory = Data(text.replacingOccurrences(of: "carol", with: "mallory").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let swapped = [parts[0], mallory, foreign.split(separator: ".").map(String.init)[2]].joined(separator: ".")
        #expect(harness.send(.GET, "/client/user-authenticators", authorization: "Bearer " + swapped).isError(401, "unauthorized"))
        #expect(harness.send(.GET, "/client/user-authenticators", authorization: "Bearer " + foreign).status == 200)
        // A token of a deleted user names an action that is gone.
        let token = try #require(harness.track("dave", "signIn")["token"] as? String)
        #expect(harness.send(.DELETE, "/users/dave", authorization: harness.serverAuthorization).status == 200)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + token)
            .isError(401, "unauthorized"))
    }

    /// Base64url as standard base64 with padding.
    static func padded(_ text: String) -> String {
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
    }

    @Test("scopes: a user with an authenticator needs add:authenticators to enrol a passkey; the claims carry the action",
          arguments: Backend.allCases)
    func scopes(backend: Backend) throws {
        let harness = try Harness(backend)
        _ = try harness.enrolledUser("erin")
        let plain = try #require(harness.track("erin", "addPasskey")["token"] as? String)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + plain)
            .isError(403, "forbidden"))
        let tracked = harness.track("erin", "addPasskey", ["scope": "add:authenticators remove:authenticators"])
        let scoped = try #require(tracked["token"] as? String)
        let claims = try harness.sesame.authsignal.verifyToken(scoped).claims
        #expect(claims.scopes == [.read, .add, .remove] && claims.sub == "erin" && claims.aud == harness.tenantID)
        #expect(claims.other.actionCode == "addPasskey" && claims.other.idempotencyKey == tracked["idempotencyKey"] as? String)
        #expect(claims.exp - claims.iat == 600)
        #expect(harness.send(.POST, "/client/user-authenticators/passkey/registration-options", [:], authorization: "Bearer " + scoped).status == 200)
        #expect(harness.track("erin", "x", ["scope": "admin"]).isEmpty == false)
        #expect(harness.send(.POST, "/users/erin/actions/x", ["scope": "admin"], authorization: harness.serverAuthorization).isError(400, "invalid_request"))
    }
}
