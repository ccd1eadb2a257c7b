import Foundation
import SesameClient
import SesameCrypto
import Testing
import WebAuthn

/// Ceremonies the software authenticator produces, judged by the real relying-party verifier.
@Suite struct SoftwareAuthenticatorTests {
    let rp = TestRelyingParty()

    // MARK: Full ceremonies

    @Test(
        "registration and sign-in pass the verifier, for none and packed self attestation",
        arguments: [SoftwareAuthenticator.Attestation.none, .packedSelf])
    func fullCeremony(attestation: SoftwareAuthenticator.Attestation) throws {
        let aaguid: [UInt8] = Array(0x10..<0x20)
        let authenticator = SoftwareAuthenticator(settings: .init(aaguid: aaguid, attestation: attestation))
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        let verified = try rp.verify(registration, challenge: challenge)

        #expect(verified.format == (attestation == .none ? "none" : "packed"))
        #expect(verified.attestationType == (attestation == .none ? .none : .self))
        #expect(verified.aaguid == "10111213-1415-1617-1819-1a1b1c1d1e1f")
        #expect(verified.publicKey.algorithm == .es256)
        #expect(verified.transports == ["internal"])
        #expect(verified.userVerified && verified.backupEligible && verified.backedUp)
        #expect(verified.signCount == 0)
        #expect(registration.id == registration.rawID)
        #expect(try bytes(registration.rawID) == verified.credentialID)

        let held = try #require(authenticator.credentials(rpID: rp.id).first)
        #expect(held.id == verified.credentialID)
        #expect(held.userHandle == Array("user-1".utf8))
        #expect(held.userName == "alice@example.org" && held.userDisplayName == "Alice")
        #expect(held.cosePublicKey == verified.publicKey.cborEncoded)

        let record = CredentialRecord(
            id: verified.credentialID, publicKey: verified.publicKey, signCount: verified.signCount,
            backupEligible: verified.backupEligible, userHandle: held.userHandle)
        let signInChallenge = TestRelyingParty.challenge()
        let assertion = try authenticator.get(
            rp.requestOptions(challenge: signInChallenge, allow: [verified.credentialID]), origin: rp.origin)
        let result = try rp.verify(
            assertion, challenge: signInChallenge, record: record, allow: [verified.credentialID],
            identifiedUserHandle: held.userHandle)
        #expect(result.credentialID == verified.credentialID)
        #expect(result.newSignCount == 0)
        #expect(assertion.authenticatorAttachment == "platform")
    }

    @Test("the response's SPKI public key is the attested COSE key")
    func publicKeyMatches() throws {
        let authenticator = SoftwareAuthenticator()
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        let verified = try rp.verify(registration, challenge: challenge)
        let spki = try bytes(try #require(registration.response.publicKey))
        #expect(registration.response.publicKeyAlgorithm == -7)
        #expect(spki == verified.publicKey.publicKey?.derEncodedSubjectPublicKeyInfo)
        let parsed = try PublicKey(derEncodedSubjectPublicKeyInfo: spki)
        let point = try #require(parsed.ellipticCurvePoint)
        let cose = try CBORDecoder().decode(verified.publicKey.cborEncoded)
        #expect(cose[-2]?.bytes == point.x && cose[-3]?.bytes == point.y)
        #expect(authenticator.credentials(rpID: rp.id).first?.publicKey == spki)
    }

    @Test(
        "the attestation object, COSE key and authData member are canonical and consistent",
        arguments: [SoftwareAuthenticator.Attestation.none, .packedSelf])
    func canonicalEncoding(attestation: SoftwareAuthenticator.Attestation) throws {
        let authenticator = SoftwareAuthenticator(settings: .init(attestation: attestation))
        let registration = try authenticator.create(
            rp.creationOptions(challenge: TestRelyingParty.challenge()), origin: rp.origin)
        let attestationObject = try bytes(registration.response.attestationObject)
        let decoded = try CBORDecoder().decode(attestationObject)
        // WebAuthn's encoder writes canonical CBOR; for maps whose keys share a major type its order is CTAP2's.
        #expect(CBOREncoder.encode(decoded) == attestationObject)
        #expect(decoded.mapEntries?.map(\.key.text) == ["fmt", "attStmt", "authData"])
        let authData = try #require(decoded["authData"]?.bytes)
        #expect(authData == (try bytes(registration.response.authenticatorData)))
        let parsed = try AuthenticatorData(bytes: authData)
        let coseKey = try #require(parsed.attestedCredentialData?.credentialPublicKey)
        #expect(CBOREncoder.encode(try CBORDecoder().decode(coseKey)) == coseKey)
        #expect(try CBORDecoder().decode(coseKey).mapEntries?.map(\.key.integerValue) == [1, 3, -1, -2, -3])
        if attestation == .packedSelf {
            #expect(decoded["attStmt"]?.mapEntries?.map(\.key.text) == ["alg", "sig"])
        } else {
            #expect(decoded["attStmt"]?.mapEntries?.isEmpty == true)
        }
    }

    @Test("clientDataJSON is byte for byte what Chrome writes")
    func clientDataJSON() throws {
        let authenticator = SoftwareAuthenticator()
        let challenge: [UInt8] = Array(0..<32)
        let encoded = Base64URL.encode(challenge)
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        #expect(
            String(decoding: try bytes(registration.response.clientDataJSON), as: UTF8.self)
                == #"{"type":"webauthn.create","challenge":"\#(encoded)","origin":"https://example.org","crossOrigin":false}"#
        )
        let assertion = try authenticator.get(rp.requestOptions(challenge: challenge), origin: rp.origin)
        #expect(
            String(decoding: try bytes(assertion.response.clientDataJSON), as: UTF8.self)
                == #"{"type":"webauthn.get","challenge":"\#(encoded)","origin":"https://example.org","crossOrigin":false}"#
        )
    }

    @Test("a cross-origin ceremony reports crossOrigin and topOrigin, which the policy then judges")
    func crossOrigin() throws {
        let authenticator = SoftwareAuthenticator()
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(
            rp.creationOptions(challenge: challenge), origin: rp.origin, crossOrigin: true,
            topOrigin: "https://shop.example.com")
        let clientData = try CollectedClientData(jsonBytes: try bytes(registration.response.clientDataJSON))
        #expect(clientData.crossOrigin == true && clientData.topOrigin == "https://shop.example.com")
        expectRejection(.crossOriginNotAllowed) { _ = try rp.verify(registration, challenge: challenge) }
        var embedding = rp
        embedding.crossOrigin = .allowed(topOrigins: ["https://shop.example.com"])
        _ = try embedding.verify(registration, challenge: challenge)
    }

    // MARK: Flags

    @Test("with UV off, a policy that requires user verification rejects both ceremonies")
    func userVerificationOff() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(userVerified: false))
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        expectRejection(.userVerificationRequired) { _ = try rp.verify(registration, challenge: challenge) }

        var lenient = rp
        lenient.requiresUserVerification = false
        let verified = try lenient.verify(registration, challenge: challenge)
        #expect(!verified.userVerified)
        let record = CredentialRecord(
            id: verified.credentialID, publicKey: verified.publicKey, signCount: 0, backupEligible: true)
        let signIn = TestRelyingParty.challenge()
        let assertion = try authenticator.get(rp.requestOptions(challenge: signIn), origin: rp.origin)
        expectRejection(.userVerificationRequired) {
            _ = try rp.verify(assertion, challenge: signIn, record: record)
        }
        #expect(try !lenient.verify(assertion, challenge: signIn, record: record).userVerified)
    }

    @Test("with UP off, the verifier rejects the registration")
    func userPresenceOff() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(userPresent: false))
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        expectRejection(.userPresenceRequired) { _ = try rp.verify(registration, challenge: challenge) }
    }

    @Test("BE and BS are reported as set", arguments: [(false, false), (true, false), (true, true)])
    func backupFlags(eligible: Bool, backedUp: Bool) throws {
        let authenticator = SoftwareAuthenticator(settings: .init(backupEligible: eligible, backedUp: backedUp))
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        let verified = try rp.verify(registration, challenge: challenge)
        #expect(verified.backupEligible == eligible && verified.backedUp == backedUp)

        let record = CredentialRecord(
            id: verified.credentialID, publicKey: verified.publicKey, signCount: 0, backupEligible: eligible)
        let signIn = TestRelyingParty.challenge()
        let result = try rp.verify(
            try authenticator.get(rp.requestOptions(challenge: signIn), origin: rp.origin), challenge: signIn,
            record: record)
        #expect(result.backupEligible == eligible && result.backedUp == backedUp)
    }

    @Test("BS without BE is written as asked, and the verifier rejects it")
    func backedUpWithoutEligibility() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(backupEligible: false, backedUp: true))
        let challenge = TestRelyingParty.challenge()
        let registration = try authenticator.create(rp.creationOptions(challenge: challenge), origin: rp.origin)
        expectRejection(.backupStateWithoutEligibility) { _ = try rp.verify(registration, challenge: challenge) }
    }

    @Test("a BE flag changed after registration is caught by the verifier")
    func backupEligibilityChanged() throws {
        let authenticator = SoftwareAuthenticator()
        let record = try rp.register(authenticator)
        authenticator.settings.backupEligible = false
        authenticator.settings.backedUp = false
        let signIn = TestRelyingParty.challenge()
        let assertion = try authenticator.get(rp.requestOptions(challenge: signIn), origin: rp.origin)
        expectRejection(.backupEligibilityChanged) { _ = try rp.verify(assertion, challenge: signIn, record: record) }
    }

    // MARK: Counter

    @Test("an incrementing counter passes two sign-ins in a row")
    func incrementingCounter() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(counter: .increment(by: 3)))
        var record = try rp.register(authenticator)
        #expect(record.signCount == 3)
        for expected: UInt32 in [6, 9] {
            let challenge = TestRelyingParty.challenge()
            let assertion = try authenticator.get(
                rp.requestOptions(challenge: challenge, allow: [record.id]), origin: rp.origin)
            let result = try rp.verify(assertion, challenge: challenge, record: record, allow: [record.id])
            #expect(result.newSignCount == expected)
            record.signCount = result.newSignCount
        }
        #expect(authenticator.credentials(rpID: rp.id).first?.signCount == 9)
    }

    @Test("a fixed counter below the stored one fails with sign_count_regression")
    func counterRegression() throws {
        let authenticator = SoftwareAuthenticator(settings: .init(counter: .increment(by: 5)))
        let record = try rp.register(authenticator)
        #expect(record.signCount == 5)
        authenticator.settings.counter = .fixed(3)
        let challenge = TestRelyingParty.challenge()
        let assertion = try authenticator.get(rp.requestOptions(challenge: challenge), origin: rp.origin)
        expectRejection(.signCountRegression) { _ = try rp.verify(assertion, challenge: challenge, record: record) }
    }

    @Test("concurrent sign-ins each get their own counter value")
    func concurrentSignIns() async throws {
        let authenticator = SoftwareAuthenticator(settings: .init(counter: .increment(by: 1)))
        let record = try rp.register(authenticator)
        let options = rp.requestOptions(challenge: TestRelyingParty.challenge())
        let counters = try await withThrowingTaskGroup(of: UInt32.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    let assertion = try authenticator.get(options, origin: "https://example.org")
                    return try AuthenticatorData(bytes: try bytes(assertion.response.authenticatorData)).signCount
                }
            }
            return try await group.reduce(into: Set<UInt32>()) { $0.insert($1) }
        }
        #expect(counters == Set(2...41))
        #expect(record.signCount == 1)
    }

    // MARK: Errors

    @Test("excludeCredentials naming a held credential fails with invalid_state")
    func excluded() throws {
        let authenticator = SoftwareAuthenticator()
        let record = try rp.register(authenticator)
        let options = rp.creationOptions(
            challenge: TestRelyingParty.challenge(), userHandle: Array("user-2".utf8), exclude: [[9, 9, 9], record.id])
        #expect(throws: SoftwareAuthenticatorError.invalidState) {
            try authenticator.create(options, origin: rp.origin)
        }
        // A credential held for another relying party does not count.
        var other = rp
        other.id = "other.example"
        other.origin = "https://other.example"
        _ = try authenticator.create(
            other.creationOptions(challenge: TestRelyingParty.challenge(), exclude: [record.id]), origin: other.origin)
        #expect(authenticator.credentials(rpID: rp.id).count == 1)
    }

    @Test("without a usable credential, get fails with not_allowed")
    func noCredential() throws {
        let authenticator = SoftwareAuthenticator()
        let options = rp.requestOptions(challenge: TestRelyingParty.challenge())
        #expect(throws: SoftwareAuthenticatorError.notAllowed) { try authenticator.get(options, origin: rp.origin) }
        let record = try rp.register(authenticator)
        let unknown = rp.requestOptions(challenge: TestRelyingParty.challenge(), allow: [[1, 2, 3]])
        #expect(throws: SoftwareAuthenticatorError.notAllowed) { try authenticator.get(unknown, origin: rp.origin) }
        #expect(throws: SoftwareAuthenticatorError.notAllowed) {
            try authenticator.get(options, origin: rp.origin, credentialID: [1, 2, 3])
        }
        #expect(throws: SoftwareAuthenticatorError.notAllowed) {
            try authenticator.get(unknown, origin: rp.origin, credentialID: record.id)
        }
        var other = rp
        other.id = "other.example"
        #expect(throws: SoftwareAuthenticatorError.notAllowed) {
            try authenticator.get(other.requestOptions(challenge: TestRelyingParty.challenge()), origin: rp.origin)
        }
        authenticator.removeAll()
        #expect(authenticator.credentials(rpID: rp.id).isEmpty)
        #expect(throws: SoftwareAuthenticatorError.notAllowed) { try authenticator.get(options, origin: rp.origin) }
    }

    @Test("pubKeyCredParams without ES256 fails with not_supported; an empty list means ES256 and RS256")
    func unsupportedAlgorithms() throws {
        let authenticator = SoftwareAuthenticator()
        let challenge = TestRelyingParty.challenge()
        let error = #expect(throws: SoftwareAuthenticatorError.notSupported) {
            try authenticator.create(
                rp.creationOptions(challenge: challenge, algorithms: [-8, -257]), origin: rp.origin)
        }
        #expect(error?.code.rawValue == "not_supported")
        var options = rp.creationOptions(challenge: challenge)
        options.pubKeyCredParams = [PublicKeyCredentialParameters(type: "password", alg: -7)]
        #expect(throws: SoftwareAuthenticatorError.notSupported) {
            try authenticator.create(options, origin: rp.origin)
        }
        options.pubKeyCredParams = []
        _ = try rp.verify(try authenticator.create(options, origin: rp.origin), challenge: challenge)
    }

    @Test("malformed options fail with invalid_options")
    func invalidOptions() throws {
        let authenticator = SoftwareAuthenticator()
        var options = rp.creationOptions(challenge: TestRelyingParty.challenge())
        options.challenge = "not+base64url"
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try authenticator.create(options, origin: rp.origin)
        }
        options = rp.creationOptions(
            challenge: TestRelyingParty.challenge(), userHandle: Array(repeating: 7, count: 65))
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try authenticator.create(options, origin: rp.origin)
        }
        options = rp.creationOptions(challenge: TestRelyingParty.challenge(), userHandle: [])
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try authenticator.create(options, origin: rp.origin)
        }
        options = rp.creationOptions(challenge: TestRelyingParty.challenge())
        options.excludeCredentials = [PublicKeyCredentialDescriptorJSON(id: "a")]
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try authenticator.create(options, origin: rp.origin)
        }
        options = rp.creationOptions(challenge: TestRelyingParty.challenge())
        options.rp.id = nil
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) {
            try authenticator.create(options, origin: "android:apk-key-hash:abc")
        }
        var request = rp.requestOptions(challenge: TestRelyingParty.challenge())
        request.challenge = "%%"
        #expect(throws: SoftwareAuthenticatorError.invalidOptions) { try authenticator.get(request, origin: rp.origin) }
    }

    @Test("errors compare by code and keep their detail out of the description")
    func errorShape() throws {
        let authenticator = SoftwareAuthenticator()
        let error = #expect(throws: SoftwareAuthenticatorError.self) {
            try authenticator.get(rp.requestOptions(challenge: [1]), origin: rp.origin)
        }
        let thrown = try #require(error)
        #expect(thrown == .code(.notAllowed) && thrown == .notAllowed && thrown != .invalidState)
        #expect(thrown.description == "SoftwareAuthenticatorError(not_allowed)")
        #expect(thrown.debugDescription.contains("example.org"))
    }

    // MARK: Credential selection

    @Test("rp.id defaults to the origin's host")
    func defaultRPID() throws {
        let authenticator = SoftwareAuthenticator()
        var options = rp.creationOptions(challenge: TestRelyingParty.challenge())
        options.rp.id = nil
        _ = try authenticator.create(options, origin: "https://Login.Example.org:8443")
        #expect(authenticator.credentials(rpID: "login.example.org").count == 1)
        var request = rp.requestOptions(challenge: TestRelyingParty.challenge())
        request.rpID = nil
        _ = try authenticator.get(request, origin: "https://login.example.org:8443")
    }

    @Test(
        "empty allowCredentials picks the most recent discoverable credential, or the chosen one, with its user handle")
    func discoverableSelection() throws {
        let authenticator = SoftwareAuthenticator()
        let alice = try rp.register(authenticator, userHandle: Array("alice".utf8))
        let bob = try rp.register(authenticator, userHandle: Array("bob".utf8))
        #expect(authenticator.credentials(rpID: rp.id).map(\.id) == [alice.id, bob.id])

        // Usernameless: the response itself names the account.
        let challenge = TestRelyingParty.challenge()
        let assertion = try authenticator.get(rp.requestOptions(challenge: challenge), origin: rp.origin)
        #expect(try bytes(try #require(assertion.response.userHandle)) == Array("bob".utf8))
        #expect(try rp.verify(assertion, challenge: challenge, record: bob).credentialID == bob.id)

        let chosen = try authenticator.get(
            rp.requestOptions(challenge: challenge), origin: rp.origin, credentialID: alice.id)
        #expect(try bytes(try #require(chosen.response.userHandle)) == Array("alice".utf8))
        #expect(try rp.verify(chosen, challenge: challenge, record: alice).credentialID == alice.id)
    }

    @Test("with allowCredentials, the first listed credential it holds answers")
    func allowListSelection() throws {
        let authenticator = SoftwareAuthenticator()
        let alice = try rp.register(authenticator, userHandle: Array("alice".utf8))
        let bob = try rp.register(authenticator, userHandle: Array("bob".utf8))
        let challenge = TestRelyingParty.challenge()
        let assertion = try authenticator.get(
            rp.requestOptions(challenge: challenge, allow: [[0xAA], alice.id, bob.id]), origin: rp.origin)
        #expect(try bytes(assertion.rawID) == alice.id)
        _ = try rp.verify(
            assertion, challenge: challenge, record: alice, allow: [[0xAA], alice.id, bob.id],
            identifiedUserHandle: Array("alice".utf8))
    }

    @Test("registering the same user again replaces their credential")
    func reRegistration() throws {
        let authenticator = SoftwareAuthenticator()
        let first = try rp.register(authenticator)
        let second = try rp.register(authenticator)
        #expect(first.id != second.id)
        #expect(authenticator.credentials(rpID: rp.id).map(\.id) == [second.id])
    }
}
