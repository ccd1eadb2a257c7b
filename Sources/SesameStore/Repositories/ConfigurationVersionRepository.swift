/// The configuration version: a counter that every committed change to the cached configuration (projects, platforms,
/// API keys, JWT secrets, action outcomes, partners, partner apps, signing keys) moves forward (database triggers bump
/// it in the change's own transaction, whoever makes it), so a cache of that configuration can tell in one small read
/// whether it is still current.
public struct ConfigurationVersionRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// The current version.
    public func current() throws(StoreError) -> Int64 {
        guard let row = try database.queryFirst("SELECT version FROM configuration_version WHERE id = 1", []) else {
            throw StoreError(.invalidData, "the configuration version row is missing")
        }
        return try row.integer("version")
    }
}
