import Foundation
import SesameCrypto
import SesameStore
import SesameTestSupport
import Testing
import WebAuthn
@testable import SesameCore

/// Secrets at rest: what a copy of the database holds without the master key, wrong and missing keys, rotation,
/// sealing rows written in clear, and keyed token hashes.
@Suite struct SecretsAtRestTests {
    /// A domain with a project, a user and a session, and a JWT the server issued for it.
    private func setUp(_ backend: Backend, keys: MasterKeyring) throws -> (sesame: Sesame, projectID: String, jwt: String) {
        let sesame = try backend.makeSesame()
        let keyed = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: keys)
        let project = try keyed.projects.create(name: "Shop", relyingPartyID: "shop.example")
        let user = try keyed.users.create(projectID: project.id, id: "alice", email: nil, password: nil, name: nil)
        let session = try keyed.sessions.create(projectID: project.id, userID: user.id, provider: "server", factors: [],
                                                client: ClientInfo(ip: "127.0.0.1", userAgent: "tests")).session
        return (keyed, project.id, try keyed.jwts.issue(for: session, lifetime: nil))
    }

    private func claims() -> VerificationTokenClaims {
        VerificationTokenClaims(iss: "https://api.example", aud: "org_1", iat: 1, exp: 301, jti: "j", requestID: "req_1", scope: "s", env: "test",
                                verified: true, linked: false, partnerUserRef: nil, ver: 1)
    }

    @Test("a database copy alone: the stored JWT secret does not verify a JWT the server issued, signing keys are not private keys",
          arguments: Backend.allCases)
    func databaseAloneIsUseless(backend: Backend) throws {
        let (sesame, projectID, jwt) = try setUp(backend, keys: MasterKeyring(current: .generate()))
        _ = try sesame.signingKeys.sign(claims())
        let parts = jwt.split(separator: ".").map(String.init)
        let signature = try Base64URL.decode(parts[2])

        let secrets = try sesame.store.secrets.page(.jwtSecret, after: nil, limit: 100)
        let stored = try #require(secrets.first { $0.rowID == projectID }).value
        #expect(SealedValue.isSealed(stored))
        #expect(HMAC.sha256(key: stored, message: Array("\(parts[0]).\(parts[1])".utf8)) != signature, "the stored bytes are not the HS256 key")
        // The real key (opened with the master key) does verify it: the test would notice a vacuous check.
        let opened = try sesame.secrets.open(stored, for: .jwtSecret, row: projectID)
        #expect(HMAC.sha256(key: opened, message: Array("\(parts[0]).\(parts[1])".utf8)) == signature)

        let keys = try sesame.store.secrets.page(.signingKey, after: nil, limit: 100)
        #expect(!keys.isEmpty)
        for key in keys {
            let text = String(decoding: key.value, as: UTF8.self)
            #expect(text.hasPrefix(SealedValue.prefix) && !text.contains("PRIVATE KEY"))
            #expect(throws: (any Error).self) { try PrivateKey(pemEncoded: text) }
        }
        // A domain without the key cannot issue or verify either.
        let keyless = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: .none)
        #expect(throws: SesameError.code(.masterKeyRequired)) { try keyless.jwts.verify(projectID: projectID, token: jwt) }
        #expect(throws: SesameError.code(.masterKeyRequired)) { try keyless.signingKeys.sign(claims()) }
        #expect(throws: SesameError.code(.masterKeyRequired)) { try keyless.secrets.check() }
    }

    @Test("master_key_mismatch: another key cannot open the secrets, and the start-up check says so", arguments: Backend.allCases)
    func wrongKey(backend: Backend) throws {
        let (sesame, projectID, jwt) = try setUp(backend, keys: MasterKeyring(current: .generate()))
        let other = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: MasterKeyring(current: .generate()))
        let error = #expect(throws: SesameError.code(.masterKeyMismatch)) { try other.secrets.check() }
        #expect(error?.detail.contains(try #require(sesame.masterKeys.current).id) == true, "names the key that is needed")
        #expect(throws: SesameError.code(.masterKeyMismatch)) { try other.secrets.prepare() }
        #expect(throws: SesameError.code(.masterKeyMismatch)) { try other.jwts.verify(projectID: projectID, token: jwt) }
        // A value moved to another row does not open even with the right key (the row is the associated data).
        let stored = try #require(try sesame.store.secrets.page(.jwtSecret, after: nil, limit: 100).first).value
        #expect(throws: SesameError.code(.masterKeyMismatch)) { try sesame.secrets.open(stored, for: .jwtSecret, row: "another-project") }
        #expect(try sesame.jwts.verify(projectID: projectID, token: jwt).session.userID == "alice")
    }

    @Test("rotation: with the new key first the old one still opens; after rotate the old key is no longer needed",
          arguments: Backend.allCases)
    func rotation(backend: Backend) throws {
        let old = MasterKey.generate(), new = MasterKey.generate()
        let (sesame, projectID, jwt) = try setUp(backend, keys: MasterKeyring(current: old))
        _ = try sesame.signingKeys.sign(claims())
        let minted = try sesame.sessions.createToken(projectID: projectID, userID: "alice", length: 6, lifetime: 3600)

        let rotating = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: MasterKeyring(current: new, previous: [old]))
        try rotating.secrets.check()
        #expect(try rotating.jwts.verify(projectID: projectID, token: jwt).session.userID == "alice", "old key opens during the rotation")
        #expect(try rotating.secrets.inventory().sealedByKey.keys.contains(old.id))
        #expect(try rotating.secrets.rotate() >= 3, "JWT secret, signing key and token-hash key re-sealed")
        #expect(try rotating.secrets.inventory().sealedByKey.keys.sorted() == [new.id])

        let rotated = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: MasterKeyring(current: new))
        try rotated.secrets.check()
        #expect(try rotated.jwts.verify(projectID: projectID, token: jwt).session.userID == "alice")
        _ = try rotated.signingKeys.sign(claims())
        // The token-hash key itself did not change: a token minted before the rotation still works.
        _ = try rotated.sessions.createFromToken(projectID: projectID, userID: "alice", secret: minted.secret,
                                                 client: ClientInfo(ip: "127.0.0.1", userAgent: "tests"))
        let onlyOld = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: MasterKeyring(current: old))
        #expect(throws: SesameError.code(.masterKeyMismatch)) { try onlyOld.secrets.check() }
    }

    @Test("the start-up step seals rows written in clear by an older version; they keep working", arguments: Backend.allCases)
    func sealsPlaintext(backend: Backend) throws {
        let (sesame, projectID, jwt) = try setUp(backend, keys: MasterKeyring(current: .generate()))
        let plainSecret = SecureRandom.bytes(count: 32)
        let key = PrivateKey.generate(.p256)
        let kid = try JWK.thumbprint(of: key.publicKey)
        try sesame.store.database.execute("UPDATE jwt_secrets SET secret = $1 WHERE project_id = $2", [.blob(plainSecret), .text(projectID)])
        try sesame.store.database.execute(
            "INSERT INTO signing_keys (id, generation, private_key, created_at, activates_at) VALUES ($1, 99, $2, 0, 0)",
            [.text(kid), .text(key.pemRepresentation)]
        )
        waitOut(Sesame.defaultConfigurationRefresh)  // written beside the services: served after the refresh interval
        #expect(try sesame.secrets.inventory().plaintext == [.jwtSecret: 1, .signingKey: 1])
        #expect(throws: SesameError.code(.internalFailure)) { try sesame.jwts.verify(projectID: projectID, token: jwt) }
        #expect(try sesame.secrets.prepare() == 2)
        #expect(try sesame.secrets.inventory().plaintext.isEmpty)
        let sealed = try #require(try sesame.store.secrets.page(.jwtSecret, after: nil, limit: 100).first).value
        #expect(try sesame.secrets.open(sealed, for: .jwtSecret, row: projectID) == plainSecret, "the same secret, now sealed")
        let token = try sesame.signingKeys.sign(claims())
        let signing = try sesame.signingKeys.keys()
        #expect(!token.isEmpty && signing.contains { $0.kid == kid && $0.isSigning }, "the old PEM key, sealed, signs")
        #expect(try sesame.secrets.prepare() == 0, "idempotent")
    }

    @Test("a column of more values than a page is gone through page by page: each is counted, sealed and rotated once",
          arguments: Backend.allCases)
    func pagedColumns(backend: Backend) throws {
        let (sesame, _, _) = try setUp(backend, keys: MasterKeyring(current: .generate()))
        let count = SecretsAtRest.pageSize * 2 + 3
        let rows = (0..<count).map { (id: "kid-\($0)", value: "plain-\($0)") }
        try sesame.store.database.transaction { connection throws(StoreError) in
            for (index, row) in rows.enumerated() {
                try connection.execute("INSERT INTO signing_keys (id, generation, private_key, created_at, activates_at) VALUES ($1, $2, $3, 0, 0)",
                                       [.text(row.id), .integer(Int64(1000 + index)), .text(row.value)])
            }
        }
        #expect(try sesame.secrets.inventory().plaintext == [.signingKey: count])
        #expect(try sesame.secrets.prepare() == count)
        let first = try #require(sesame.masterKeys.current).id
        #expect(try sesame.secrets.inventory().plaintext.isEmpty)
        #expect(try sesame.secrets.inventory().sealedByKey[first] ?? 0 >= count)
        // Under a new key, every row (both page boundaries included) opens to what it held.
        let keys = MasterKeyring(current: .generate(), previous: [try #require(sesame.masterKeys.current)])
        let rotated = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: keys)
        #expect(try rotated.secrets.rotate() >= count)
        #expect(try rotated.secrets.inventory().sealedByKey[first] == nil)
        var seen: [String: String] = [:]
        var after: String?
        while true {
            let page = try sesame.store.secrets.page(.signingKey, after: after, limit: 100)
            for secret in page {
                seen[secret.rowID] = String(decoding: try rotated.secrets.open(secret.value, for: .signingKey, row: secret.rowID), as: UTF8.self)
            }
            guard let last = page.last else { break }
            after = last.rowID
        }
        #expect(rows.allSatisfy { seen[$0.id] == $0.value }, "\(seen.count) of \(count)")
    }

    @Test("token hashes are HMAC-SHA256 under the sealed token-hash key, not SHA-256 of the secret", arguments: Backend.allCases)
    func keyedTokenHashes(backend: Backend) throws {
        let (sesame, projectID, _) = try setUp(backend, keys: MasterKeyring(current: .generate()))
        let minted = try sesame.sessions.createToken(projectID: projectID, userID: "alice", length: nil, lifetime: nil)
        #expect(minted.secret.count == 6 && minted.secret.allSatisfy { $0.isLowercase || $0.isNumber })
        let rows = try sesame.store.database.query("SELECT secret_hash FROM tokens WHERE id = $1", [.text(minted.id)])
        let stored = try #require(rows.first).blob("secret_hash")
        #expect(stored != Digest.sha256(Array(minted.secret.utf8)), "not plain SHA-256: a copy cannot crack it")
        #expect(stored == HMAC.sha256(key: try sesame.secrets.tokenHashKey(), message: Array(minted.secret.utf8)))
        let sealedKey = try #require(try sesame.store.secrets.deploymentKey(name: SecretsAtRest.tokenHashKeyName))
        #expect(sealedKey.hasPrefix(SealedValue.prefix))
        let keyless = Sesame(store: sesame.store, clock: sesame.clock, masterKeys: .none)
        #expect(throws: SesameError.code(.masterKeyRequired)) {
            try keyless.sessions.createFromToken(projectID: projectID, userID: "alice", secret: minted.secret,
                                                 client: ClientInfo(ip: "127.0.0.1", userAgent: "tests"))
        }
        _ = try sesame.sessions.createFromToken(projectID: projectID, userID: "alice", secret: minted.secret,
                                                client: ClientInfo(ip: "127.0.0.1", userAgent: "tests"))
        // Codes are uniform over a-z0-9 (no modulo bias): every character turns up over many draws.
        #expect(Set(SessionService.randomCode(length: 4000)).count == 36)
    }

    @Test("master keys: text form, key files with previous keys, and invalid_argument for anything else")
    func keyFormats() throws {
        let key = MasterKey.generate()
        #expect(key.text.hasPrefix("sesame_mk_") && key.text.count == 53)
        #expect(try MasterKey(text: " \(key.text)\n").id == key.id)
        #expect(key.id.count == 16 && "\(key)" == "MasterKey(\(key.id))" && !"\(key)".contains(key.text))
        let previous = MasterKey.generate()
        let ring = try MasterKeyring(keyFile: "# comment\n\n\(key.text)\n\(previous.text)\n")
        #expect(ring.current?.id == key.id && ring.previous.map(\.id) == [previous.id])
        for bad in ["", "sesame_mk_short", key.text.dropLast() + "!", String(key.text.dropFirst(10)), "sesame_sk_" + key.text.dropFirst(10)] {
            #expect(throws: SesameError.code(.invalidArgument)) { try MasterKey(text: String(bad)) }
        }
        #expect(throws: SesameError.code(.invalidArgument)) { try MasterKeyring(keyFile: "# nothing\n") }
        #expect(throws: SesameError.code(.invalidArgument)) { try MasterKeyring(keyFile: "\(key.text)\nnot a key\n") }
    }
}
