import Foundation

/// One versioned schema change, written once in portable SQL with the dialect's few differences.
struct Migration: Sendable {
    let version: Int64
    let name: String
    let statements: @Sendable (SQLDialect) -> [String]
}

/// Applies pending migrations, each in its own transaction, recorded in `schema_migrations`.
///
/// Concurrent starters are safe: on PostgreSQL each transaction first takes a transaction-scoped advisory lock, so
/// starters queue and each re-checks the version under the lock; on SQLite `BEGIN IMMEDIATE` does the same.
/// `schema_migrations` itself is created inside that lock, so two first starters never race on it.
enum Migrator {
    /// The advisory lock key: "SESAME" in ASCII.
    static let lockKey: Int64 = 0x5345_5341_4D45

    static func migrate(_ database: any SQLDatabase, migrations: [Migration] = Schema.migrations) throws(StoreError) {
        let latest = migrations.map(\.version).max() ?? 0
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            do throws(StoreError) {
                try database.transaction { connection throws(StoreError) in
                    if connection.dialect == .postgres {
                        _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey)])
                    }
                    try connection.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations "
                            + "(version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
                    )
                    let newest = try connection.queryFirst(
                        "SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations", []
                    )?.integer("version") ?? 0
                    if newest > latest {
                        throw StoreError(
                            .migrationFailed, "database schema version \(newest) is newer than this build's \(latest)"
                        )
                    }
                    let applied = try connection.queryFirst(
                        "SELECT version FROM schema_migrations WHERE version = $1", [.integer(migration.version)]
                    )
                    guard applied == nil else { return }
                    for statement in migration.statements(connection.dialect) {
                        try connection.execute(statement)
                    }
                    try connection.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                        [.integer(migration.version), .text(migration.name), .date(Date())]
                    )
                }
            } catch where error.code == .migrationFailed || error.code == .unavailable {
                throw error
            } catch {
                throw StoreError(.migrationFailed, "migration \(migration.version) failed: \(error.debugDescription)")
            }
        }
    }
}

/// The schema, as migrations. Times are BIGINT milliseconds since 1970, booleans INTEGER 0/1, JSON as TEXT.
enum Schema {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "initial schema") { dialect in
            let blob = dialect.blobType
            return [
                """
                CREATE TABLE projects (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    rp_id TEXT NOT NULL,
                    rp_name TEXT NOT NULL,
                    auth_methods TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE platforms (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    name TEXT,
                    hostname TEXT,
                    package_name TEXT,
                    sha256_fingerprints TEXT,
                    team_id TEXT,
                    bundle_id TEXT,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX platforms_project ON platforms (project_id)",
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    secret_hash \(blob) NOT NULL UNIQUE,
                    scopes TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX api_keys_project ON api_keys (project_id)",
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    email TEXT,
                    name TEXT,
                    password_hash TEXT,
                    status TEXT NOT NULL DEFAULT 'active',
                    user_handle \(blob) NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    UNIQUE (project_id, email)
                )
                """,
                """
                CREATE TABLE credentials (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    rp_id TEXT NOT NULL,
                    credential_id \(blob) NOT NULL,
                    public_key \(blob) NOT NULL,
                    algorithm BIGINT NOT NULL,
                    sign_count BIGINT NOT NULL,
                    backup_eligible INTEGER NOT NULL,
                    backed_up INTEGER NOT NULL,
                    user_verified INTEGER NOT NULL,
                    aaguid TEXT,
                    transports TEXT NOT NULL,
                    attestation_format TEXT,
                    name TEXT,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    UNIQUE (rp_id, credential_id)
                )
                """,
                "CREATE INDEX credentials_user ON credentials (user_id)",
                "CREATE INDEX credentials_project ON credentials (project_id)",
                """
                CREATE TABLE challenges (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL,
                    challenge \(blob) NOT NULL,
                    user_id TEXT,
                    session_id TEXT,
                    request_id TEXT,
                    expires_at BIGINT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX challenges_user_purpose ON challenges (user_id, purpose)",
                "CREATE INDEX challenges_project_purpose ON challenges (project_id, purpose)",
                "CREATE INDEX challenges_expires ON challenges (expires_at)",
                """
                CREATE TABLE rate_limits (
                    key TEXT NOT NULL,
                    window_start BIGINT NOT NULL,
                    count BIGINT NOT NULL,
                    PRIMARY KEY (key, window_start)
                )
                """,
                "CREATE INDEX rate_limits_window ON rate_limits (window_start)",
            ]
        },
        Migration(version: 2, name: "sessions") { dialect in
            let blob = dialect.blobType
            return [
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    secret_hash \(blob) NOT NULL UNIQUE,
                    provider TEXT NOT NULL,
                    factors TEXT NOT NULL,
                    ip TEXT NOT NULL,
                    user_agent TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    mfa_updated_at BIGINT
                )
                """,
                "CREATE INDEX sessions_user ON sessions (user_id)",
            ]
        },
        Migration(version: 3, name: "passkey ceremonies and tokens") { dialect in
            let blob = dialect.blobType
            return [
                // A pending registration is a challenge: it remembers its relying party and requested name.
                "ALTER TABLE challenges ADD COLUMN rp_id TEXT",
                "ALTER TABLE challenges ADD COLUMN name TEXT",
                "ALTER TABLE credentials ADD COLUMN updated_at BIGINT",
                """
                CREATE TABLE tokens (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    secret_hash \(blob) NOT NULL UNIQUE,
                    kind TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX tokens_user ON tokens (user_id)",
            ]
        },
        Migration(version: 4, name: "JWT signing secrets") { dialect in
            [
                """
                CREATE TABLE jwt_secrets (
                    project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
                    secret \(dialect.blobType) NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """
            ]
        },
        Migration(version: 5, name: "user MFA flags") { _ in
            [
                "ALTER TABLE users ADD COLUMN mfa INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0",
            ]
        },
        Migration(version: 6, name: "inline verification: partners, requests, links, webhooks, signing keys") { dialect in
            let blob = dialect.blobType
            return [
                """
                CREATE TABLE partners (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                // API keys (kind `key`) and 5-minute grants (kind `grant`), hashed, each bound to one environment.
                """
                CREATE TABLE partner_secrets (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    secret_hash \(blob) NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX partner_secrets_partner ON partner_secrets (partner_id)",
                """
                CREATE TABLE partner_apps (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    platform TEXT NOT NULL,
                    identifier TEXT NOT NULL,
                    fingerprints TEXT NOT NULL,
                    state TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX partner_apps_partner ON partner_apps (partner_id)",
                // One person per ref and one ref per person, per partner and environment ("one human, one account").
                """
                CREATE TABLE partner_links (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    partner_user_ref TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    UNIQUE (partner_id, environment, partner_user_ref),
                    UNIQUE (partner_id, environment, user_id)
                )
                """,
                """
                CREATE TABLE verification_requests (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    scope TEXT NOT NULL,
                    partner_user_ref TEXT,
                    link_intent INTEGER NOT NULL,
                    return_url TEXT,
                    metadata TEXT,
                    status TEXT NOT NULL,
                    failure_reason TEXT,
                    linked INTEGER NOT NULL DEFAULT 0,
                    token TEXT,
                    token_id TEXT,
                    token_checked_at BIGINT,
                    options_calls INTEGER NOT NULL DEFAULT 0,
                    complete_calls INTEGER NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    completed_at BIGINT
                )
                """,
                "CREATE INDEX verification_requests_expires ON verification_requests (expires_at)",
                "ALTER TABLE challenges ADD COLUMN link_id TEXT",
                """
                CREATE TABLE webhook_endpoints (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    url TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    state TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (partner_id, environment)",
                """
                CREATE TABLE webhook_events (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    type TEXT NOT NULL,
                    body \(blob) NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE webhook_deliveries (
                    id TEXT PRIMARY KEY,
                    event_id TEXT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
                    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_until BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)",
                """
                CREATE TABLE webhook_attempts (
                    id TEXT PRIMARY KEY,
                    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
                    attempt INTEGER NOT NULL,
                    node TEXT NOT NULL,
                    started_at BIGINT NOT NULL,
                    duration_ms BIGINT NOT NULL,
                    http_status INTEGER,
                    error TEXT
                )
                """,
                "CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id)",
                // Token signing keys of the deployment; generation is unique so concurrent first starts make one key.
                """
                CREATE TABLE signing_keys (
                    id TEXT PRIMARY KEY,
                    generation BIGINT NOT NULL UNIQUE,
                    private_key TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    activates_at BIGINT NOT NULL
                )
                """,
            ]
        },
        Migration(version: 7, name: "secrets at rest: sealed deployment keys, webhook tokens kept apart, keyed token hashes") { _ in
            [
                // Deployment-wide secrets (the token-hash key), each sealed under the master key, which is not in the database.
                """
                CREATE TABLE deployment_keys (
                    name TEXT PRIMARY KEY,
                    sealed TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                // A webhook body is stored without its verification token; the token, sealed, waits beside it until the
                // event has nothing left to deliver. token_offset is where it goes back in (NULL: a body from before).
                "ALTER TABLE webhook_events ADD COLUMN sealed_token TEXT",
                "ALTER TABLE webhook_events ADD COLUMN token_offset BIGINT",
                // Token hashes become HMAC-SHA256 under a key sealed by the master key; plain SHA-256 ones cannot be
                // re-keyed (the secrets are gone), so outstanding sign-in tokens end here.
                "DELETE FROM tokens",
            ]
        },
        Migration(version: 8, name: "configuration version: a counter every change to projects, platforms, API keys or JWT secrets bumps") { dialect in
            // Triggers keep it in one place: whatever writes the configuration (a node, the CLI, another process) bumps
            // the counter in the same transaction. A key's last use is bookkeeping, not configuration.
            let watched = [
                ("projects", "INSERT OR UPDATE OR DELETE"), ("platforms", "INSERT OR UPDATE OR DELETE"),
                ("api_keys", "INSERT OR DELETE OR UPDATE OF id, project_id, name, secret_hash, scopes, revoked_at"),
                ("jwt_secrets", "INSERT OR UPDATE OR DELETE"),
            ]
            var statements = [
                "CREATE TABLE configuration_version (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
                "INSERT INTO configuration_version (id, version) VALUES (1, 1)",
            ]
            if dialect == .postgres {
                statements.append("""
                    CREATE FUNCTION sesame_bump_configuration_version() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN UPDATE configuration_version SET version = version + 1 WHERE id = 1; RETURN NULL; END $$
                    """)
            }
            return statements + configurationTriggers(watched, dialect)
        },
        Migration(version: 9, name: "challenges: fewer indexes for every sign-in to write") { _ in
            [
                // Nothing looks challenges up by project; a project's deletion scans them (rare, and cheap: they live
                // minutes). Pending registrations are counted by user; a sign-in's challenge has no user, so a partial
                // index leaves it out and its insert and delete touch one index fewer.
                "DROP INDEX challenges_project_purpose",
                "DROP INDEX challenges_user_purpose",
                "CREATE INDEX challenges_user_purpose ON challenges (user_id, purpose) WHERE user_id IS NOT NULL",
            ]
        },
        Migration(version: 10, name: "FIDO metadata (MDS3): the loaded BLOB and its entries by AAGUID or key identifier") { _ in
            [
                // The one loaded BLOB: its serial number, next update and legal header (the statements are below).
                """
                CREATE TABLE fido_metadata_blob (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    serial BIGINT NOT NULL,
                    next_update BIGINT NOT NULL,
                    legal_header TEXT NOT NULL,
                    entry_count BIGINT NOT NULL,
                    loaded_at BIGINT NOT NULL
                )
                """,
                // One row per way to find an entry: `aaguid:<uuid>` or `key:<hex SHA-1>`; the entry's JSON as in the BLOB.
                """
                CREATE TABLE fido_metadata_entries (
                    lookup_key TEXT PRIMARY KEY,
                    entry_json TEXT NOT NULL
                )
                """,
            ]
        },
        Migration(version: 11, name: "attestation policy per project") { _ in
            [
                // The project's attestation policy as JSON (the domain's AttestationPolicy); NULL is the default policy.
                // A column of projects, so migration 8's triggers bump the configuration version when it changes.
                "ALTER TABLE projects ADD COLUMN attestation_policy TEXT",
            ]
        },
        Migration(version: 12, name: "authsignal: users by integrator ID, actions, verified contacts, passkey details, action outcomes") { _ in
            [
                // The integrator's user ID within a tenant (project), and the attributes the Authsignal face keeps; the
                // Sesame user behind it owns the passkeys. Deleting that user deletes the row.
                """
                CREATE TABLE authsignal_users (
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    external_id TEXT NOT NULL,
                    user_id TEXT NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
                    email TEXT,
                    email_verified INTEGER NOT NULL DEFAULT 0,
                    phone_number TEXT,
                    phone_number_verified INTEGER NOT NULL DEFAULT 0,
                    username TEXT,
                    display_name TEXT,
                    custom TEXT,
                    locale TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (project_id, external_id)
                )
                """,
                // A tracked action: no user yet for a usernameless sign-in (the passkey names it).
                """
                CREATE TABLE authsignal_actions (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    external_user_id TEXT,
                    action_code TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    state TEXT NOT NULL,
                    state_updated_at BIGINT NOT NULL,
                    verification_method TEXT,
                    created_at BIGINT NOT NULL,
                    UNIQUE (project_id, idempotency_key)
                )
                """,
                "CREATE INDEX authsignal_actions_user ON authsignal_actions (project_id, external_user_id)",
                // Verified contacts enrolled by the backend (EMAIL_OTP, SMS): authenticators that are not passkeys.
                """
                CREATE TABLE authsignal_contacts (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    verification_method TEXT NOT NULL,
                    email TEXT,
                    phone_number TEXT,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX authsignal_contacts_user ON authsignal_contacts (user_id)",
                // What the client said when it enrolled a passkey (its device, the names it was registered under).
                """
                CREATE TABLE authsignal_passkeys (
                    credential_row_id TEXT PRIMARY KEY REFERENCES credentials (id) ON DELETE CASCADE,
                    device_id TEXT,
                    username TEXT,
                    display_name TEXT
                )
                """,
                // The operator's default outcome of an action code (sesame authsignal action set-outcome).
                """
                CREATE TABLE authsignal_action_outcomes (
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    action_code TEXT NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (project_id, action_code)
                )
                """,
            ]
        },
        Migration(version: 13, name: "inline widget: partners' return origins, site keys and their origins, the origin a widget request came from") { _ in
            [
                // Origins a partner's return_url may point to (https, or http on localhost / 127.0.0.1 for development).
                """
                CREATE TABLE partner_return_origins (
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    origin TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (partner_id, origin)
                )
                """,
                // Public site keys of the web widget (pk_live_…, pk_test_…), one environment each, with the page origins
                // allowed to use them (a JSON array of origins).
                """
                CREATE TABLE partner_site_keys (
                    id TEXT PRIMARY KEY,
                    partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
                    environment TEXT NOT NULL,
                    origins TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX partner_site_keys_partner ON partner_site_keys (partner_id)",
                // The page origin a widget request was created from: its passkey may run in the widget's frame there.
                "ALTER TABLE verification_requests ADD COLUMN widget_origin TEXT",
            ]
        },
        Migration(version: 14, name: "rate limits, challenges, tokens, sessions: one b-tree fewer for every write") { dialect in
            // Every sign-in writes and deletes a challenge and a token and writes a session, and every counted call
            // upserts a rate-limit row. As rowid tables, each write touched the table and its primary-key index; on
            // SQLite a table WITHOUT ROWID is its primary key, one b-tree fewer (and a page fewer in the log per
            // commit). PostgreSQL keeps its heap tables.
            guard dialect == .sqlite else { return [] }
            let challengeColumns = "id, project_id, purpose, challenge, user_id, session_id, request_id, expires_at, created_at, rp_id, name, link_id"
            let tokenColumns = "id, project_id, user_id, secret_hash, kind, created_at, expires_at"
            let sessionColumns = "id, project_id, user_id, secret_hash, provider, factors, ip, user_agent, created_at, updated_at, expires_at, mfa_updated_at"
            return [
                """
                CREATE TABLE rate_limits_keyed (
                    key TEXT NOT NULL,
                    window_start BIGINT NOT NULL,
                    count BIGINT NOT NULL,
                    PRIMARY KEY (key, window_start)
                ) WITHOUT ROWID
                """,
                "INSERT INTO rate_limits_keyed (key, window_start, count) SELECT key, window_start, count FROM rate_limits",
                "DROP TABLE rate_limits",
                "ALTER TABLE rate_limits_keyed RENAME TO rate_limits",
                "CREATE INDEX rate_limits_window ON rate_limits (window_start)",
                """
                CREATE TABLE challenges_keyed (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL,
                    challenge \(dialect.blobType) NOT NULL,
                    user_id TEXT,
                    session_id TEXT,
                    request_id TEXT,
                    expires_at BIGINT NOT NULL,
                    created_at BIGINT NOT NULL,
                    rp_id TEXT,
                    name TEXT,
                    link_id TEXT
                ) WITHOUT ROWID
                """,
                "INSERT INTO challenges_keyed (\(challengeColumns)) SELECT \(challengeColumns) FROM challenges",
                "DROP TABLE challenges",
                "ALTER TABLE challenges_keyed RENAME TO challenges",
                "CREATE INDEX challenges_user_purpose ON challenges (user_id, purpose) WHERE user_id IS NOT NULL",
                "CREATE INDEX challenges_expires ON challenges (expires_at)",
                """
                CREATE TABLE tokens_keyed (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    secret_hash \(dialect.blobType) NOT NULL UNIQUE,
                    kind TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL
                ) WITHOUT ROWID
                """,
                "INSERT INTO tokens_keyed (\(tokenColumns)) SELECT \(tokenColumns) FROM tokens",
                "DROP TABLE tokens",
                "ALTER TABLE tokens_keyed RENAME TO tokens",
                "CREATE INDEX tokens_user ON tokens (user_id)",
                """
                CREATE TABLE sessions_keyed (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    secret_hash \(dialect.blobType) NOT NULL UNIQUE,
                    provider TEXT NOT NULL,
                    factors TEXT NOT NULL,
                    ip TEXT NOT NULL,
                    user_agent TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    mfa_updated_at BIGINT
                ) WITHOUT ROWID
                """,
                "INSERT INTO sessions_keyed (\(sessionColumns)) SELECT \(sessionColumns) FROM sessions",
                "DROP TABLE sessions",
                "ALTER TABLE sessions_keyed RENAME TO sessions",
                "CREATE INDEX sessions_user ON sessions (user_id)",
            ]
        },
        Migration(version: 15, name: "configuration version: action outcomes are configuration too") { dialect in
            configurationTriggers([("authsignal_action_outcomes", "INSERT OR UPDATE OR DELETE")], dialect)
        },
        Migration(version: 16, name: "tokens keyed by their secret's hash, the only way one is found") { dialect in
            // A token is only ever found by its secret's hash (to consume it) and swept by expiry; its ID is what the
            // API shows. Keyed by the hash, each insert and delete writes one b-tree on SQLite (was three: the ID,
            // the unique hash and the user index) and one index beside the heap on PostgreSQL (was three). A token
            // lives 60 seconds, so deleting a user or a project scans the few live ones, as deleting a project
            // always has.
            switch dialect {
            case .sqlite:
                let columns = "id, project_id, user_id, secret_hash, kind, created_at, expires_at"
                return [
                    """
                    CREATE TABLE tokens_by_secret (
                        id TEXT NOT NULL,
                        project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
                        user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                        secret_hash \(dialect.blobType) NOT NULL,
                        kind TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL,
                        PRIMARY KEY (secret_hash)
                    ) WITHOUT ROWID
                    """,
                    "INSERT INTO tokens_by_secret (\(columns)) SELECT \(columns) FROM tokens",
                    "DROP TABLE tokens",
                    "ALTER TABLE tokens_by_secret RENAME TO tokens",
                ]
            case .postgres:
                return [
                    "ALTER TABLE tokens DROP CONSTRAINT tokens_pkey",
                    "ALTER TABLE tokens DROP CONSTRAINT tokens_secret_hash_key",
                    "ALTER TABLE tokens ADD PRIMARY KEY (secret_hash)",
                    "DROP INDEX tokens_user",
                ]
            }
        },
        Migration(version: 17, name: "configuration version: partners, their apps and the signing keys are configuration too") { dialect in
            configurationTriggers([
                ("partners", "INSERT OR UPDATE OR DELETE"), ("partner_apps", "INSERT OR UPDATE OR DELETE"),
                ("signing_keys", "INSERT OR UPDATE OR DELETE"),
            ], dialect)
        },
        Migration(version: 18, name: "webhook deliveries by event: an event's pending deliveries without a scan of every delivery") { _ in
            // Whether an event has a delivery pending is asked after every round of deliveries (to erase its token), by
            // the purge, and by the cascade of an event's deletion: without the index each asking read every delivery,
            // so a drain slowed down as the outbox grew.
            ["CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, state)"]
        },
        Migration(version: 19, name: "configuration version: partners' API keys are configuration too (their grants are not)") { dialect in
            partnerKeyTriggers(dialect)
        },
        Migration(version: 20, name: "sessions keyed by their secret's hash, found by user and ID beside it") { dialect in
            // A session is found by its secret's hash (every request that carries it), or by its user and ID (listing,
            // ending, refreshing; a JWT names both). Keyed by the hash, with one index of user and ID, each sign-in's
            // insert writes two b-trees on SQLite (was three: the ID, the unique hash, the user index) and two indexes
            // beside the heap on PostgreSQL (was three), and the request that carries the secret reads one b-tree.
            keyedBySecretHash("sessions", index: "sessions_user", on: "user_id, id", [
                "id TEXT NOT NULL",
                "project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE",
                "user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE",
                "secret_hash \(dialect.blobType) NOT NULL",
                "provider TEXT NOT NULL", "factors TEXT NOT NULL", "ip TEXT NOT NULL", "user_agent TEXT NOT NULL",
                "created_at BIGINT NOT NULL", "updated_at BIGINT NOT NULL", "expires_at BIGINT NOT NULL", "mfa_updated_at BIGINT",
            ], dialect)
        },
        Migration(version: 21, name: "partners' secrets keyed by their hash, found by partner and ID beside it") { dialect in
            // A partner's API key or grant is found by its hash (every call that carries it), or under its partner
            // (listing, revoking). Keyed by the hash, with one index of partner and ID, each grant (one per inline
            // verification) writes two b-trees on SQLite (was four: the row, the ID, the unique hash, the partner
            // index) and two indexes beside PostgreSQL's heap (was three). SQLite rebuilds the table, so it makes
            // migration 19's triggers again.
            keyedBySecretHash("partner_secrets", index: "partner_secrets_partner", on: "partner_id, id", [
                "id TEXT NOT NULL",
                "partner_id TEXT NOT NULL REFERENCES partners (id) ON DELETE CASCADE",
                "environment TEXT NOT NULL", "kind TEXT NOT NULL", "secret_hash \(dialect.blobType) NOT NULL",
                "created_at BIGINT NOT NULL", "expires_at BIGINT", "revoked_at BIGINT",
            ], dialect) + (dialect == .sqlite ? partnerKeyTriggers(dialect) : [])
        },
    ]

    /// Keys `table` by its `secret_hash` column, with the one unique index `index` on `indexColumns` beside it (its
    /// other keys and indexes go). SQLite rebuilds the table WITHOUT ROWID from `columns` (the definitions, in the
    /// table's order; the rebuild drops its triggers), PostgreSQL swaps the keys of its table (primary key `id`,
    /// unique `secret_hash`, index `index`).
    private static func keyedBySecretHash(_ table: String, index: String, on indexColumns: String, _ columns: [String],
                                          _ dialect: SQLDialect) -> [String] {
        switch dialect {
        case .sqlite:
            let names = columns.compactMap { $0.split(separator: " ").first }.joined(separator: ", ")
            return [
                "CREATE TABLE \(table)_by_hash (\(columns.joined(separator: ", ")), PRIMARY KEY (secret_hash)) WITHOUT ROWID",
                "INSERT INTO \(table)_by_hash (\(names)) SELECT \(names) FROM \(table)",
                "DROP TABLE \(table)",
                "ALTER TABLE \(table)_by_hash RENAME TO \(table)",
                "CREATE UNIQUE INDEX \(index) ON \(table) (\(indexColumns))",
            ]
        case .postgres:
            return [
                "ALTER TABLE \(table) DROP CONSTRAINT \(table)_pkey",
                "ALTER TABLE \(table) DROP CONSTRAINT \(table)_secret_hash_key",
                "ALTER TABLE \(table) ADD PRIMARY KEY (secret_hash)",
                "DROP INDEX \(index)",
                "CREATE UNIQUE INDEX \(index) ON \(table) (\(indexColumns))",
            ]
        }
    }

    /// Row triggers that bump the configuration version when a partner's API key is written, so that the grants
    /// (thousands an hour, each written and revoked by a partner's server) never move it: only a row that is or was
    /// an API key (`kind = 'key'`) does.
    private static func partnerKeyTriggers(_ dialect: SQLDialect) -> [String] {
        let conditions = [("insert", "INSERT", "NEW.kind = 'key'"), ("update", "UPDATE", "OLD.kind = 'key' OR NEW.kind = 'key'"),
                          ("delete", "DELETE", "OLD.kind = 'key'")]
        return conditions.map { name, event, condition in
            switch dialect {
            case .sqlite:
                """
                CREATE TRIGGER partner_secrets_\(name)_configuration AFTER \(event) ON partner_secrets WHEN \(condition)
                BEGIN UPDATE configuration_version SET version = version + 1 WHERE id = 1; END
                """
            case .postgres:
                """
                CREATE TRIGGER partner_secrets_\(name)_configuration AFTER \(event) ON partner_secrets
                FOR EACH ROW WHEN (\(condition)) EXECUTE FUNCTION sesame_bump_configuration_version()
                """
            }
        }
    }

    /// Triggers that bump the configuration version in the same transaction as any of these events on these tables
    /// (migration 8 made the counter and, on PostgreSQL, the function they run).
    private static func configurationTriggers(_ watched: [(table: String, events: String)], _ dialect: SQLDialect) -> [String] {
        switch dialect {
        case .sqlite:
            // SQLite names one event per trigger.
            watched.flatMap { table, events in
                events.components(separatedBy: " OR ").map { event in
                    let name = event.split(separator: " ").first.map(String.init)?.lowercased() ?? event
                    return """
                        CREATE TRIGGER \(table)_\(name)_configuration AFTER \(event) ON \(table)
                        BEGIN UPDATE configuration_version SET version = version + 1 WHERE id = 1; END
                        """
                }
            }
        case .postgres:
            watched.map { table, events in
                """
                CREATE TRIGGER \(table)_configuration AFTER \(events) ON \(table)
                FOR EACH STATEMENT EXECUTE FUNCTION sesame_bump_configuration_version()
                """
            }
        }
    }
}
