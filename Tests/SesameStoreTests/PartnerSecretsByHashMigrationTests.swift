import Foundation
import SesameTestSupport
import Testing
@testable import SesameStore

/// Migration 21 keys `partner_secrets` by the secret's hash on both backends, with one unique index of partner and ID:
/// a key and a grant stored before it are found, listed and revoked after it, twins are refused, and (SQLite rebuilt
/// the table) an API key still moves the configuration version where a grant does not.
@Suite struct PartnerSecretsByHashMigrationTests {
    @Test("secrets stored before migration 21 work after it; the hash is the key, partner and ID the one index", arguments: Backend.allCases)
    func keyedByHash(backend: Backend) throws {
        let database = try TokensBySecretMigrationTests.database(backend)
        try Migrator.migrate(database, migrations: Schema.migrations.filter { $0.version < 21 })
        try ProjectRepository(database: database).create(Fixture.project())
        let partners = PartnerRepository(database: database)
        try partners.create(PartnerRecord(id: "pa1", projectID: "p1", name: "Shop", createdAt: t0))
        let key = PartnerSecretRecord(id: "k1", partnerID: "pa1", environment: "test", kind: PartnerSecretRecord.apiKey,
                                      secretHash: Array(repeating: 1, count: 32), createdAt: t0)
        let grant = PartnerSecretRecord(id: "g1", partnerID: "pa1", environment: "test", kind: PartnerSecretRecord.grant,
                                        secretHash: Array(repeating: 2, count: 32), createdAt: t0, expiresAt: t0.plus(seconds: 300))
        try partners.createSecret(key)
        try partners.createSecret(grant)
        #expect(try TokensBySecretMigrationTests.keys(database, backend, table: "partner_secrets").primaryKey == ["id"])

        try Migrator.migrate(database)

        let keys = try TokensBySecretMigrationTests.keys(database, backend, table: "partner_secrets")
        #expect(keys.primaryKey == ["secret_hash"])
        #expect(keys.indexes == (backend == .sqlite ? ["partner_secrets_partner"] : ["partner_secrets_partner", "partner_secrets_pkey"]))
        #expect(try partners.findSecret(hash: key.secretHash, kind: PartnerSecretRecord.apiKey, now: t0)?.secret == key)
        #expect(try partners.findSecret(hash: grant.secretHash, kind: PartnerSecretRecord.grant, now: t0)?.secret == grant)
        #expect(try partners.listKeys(partnerID: "pa1") == [key])
        var twin = key
        twin.id = "k2"
        #expect(throws: StoreError.conflict) { try partners.createSecret(twin) }
        twin = key
        twin.secretHash = Array(repeating: 3, count: 32)
        #expect(throws: StoreError.conflict) { try partners.createSecret(twin) }

        // The triggers: a grant written or revoked leaves the configuration version alone; a key moves it.
        let versions = ConfigurationVersionRepository(database: database)
        let before = try versions.current()
        #expect(try partners.revokeSecret(partnerID: "pa1", hash: grant.secretHash, at: t0))
        #expect(try partners.findSecret(hash: grant.secretHash, kind: PartnerSecretRecord.grant, now: t0) == nil)
        #expect(try versions.current() == before)
        #expect(try partners.revokeSecret(partnerID: "pa1", id: "k1", at: t0))
        #expect(try partners.findSecret(hash: key.secretHash, kind: PartnerSecretRecord.apiKey, now: t0) == nil)
        #expect(try versions.current() > before)
    }
}
