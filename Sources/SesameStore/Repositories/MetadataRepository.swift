import Foundation

/// What is stored about the loaded FIDO metadata BLOB.
public struct StoredMetadataBLOB: Sendable, Hashable {
    /// The BLOB's serial number `no`.
    public var serial: Int64
    public var nextUpdate: Date
    public var legalHeader: String
    /// How many entries the BLOB had.
    public var entryCount: Int64
    public var loadedAt: Date

    public init(serial: Int64, nextUpdate: Date, legalHeader: String, entryCount: Int64, loadedAt: Date) {
        self.serial = serial
        self.nextUpdate = nextUpdate
        self.legalHeader = legalHeader
        self.entryCount = entryCount
        self.loadedAt = loadedAt
    }
}

/// The loaded FIDO metadata: one BLOB's summary and its entries' JSON by lookup key (`aaguid:<uuid>`, `key:<hex>`).
///
/// The store keeps what the domain verified; it never reads the JSON.
public struct MetadataRepository: Sendable {
    public let database: any SQLDatabase

    public init(database: any SQLDatabase) { self.database = database }

    /// Replaces the loaded metadata with `blob` and `entries`, in one transaction.
    /// - Parameters:
    ///   - entries: each entry's JSON text by lookup key; keys must be distinct.
    ///   - ifSerialBelow: when given, replaces only if no BLOB is loaded or the loaded one's serial is lower.
    /// - Returns: false when `ifSerialBelow` kept the loaded BLOB.
    /// - Throws: ``StoreError`` on failure (nothing is changed then).
    @discardableResult
    public func replace(with blob: StoredMetadataBLOB, entries: [(key: String, json: String)],
                        ifSerialBelow: Int64? = nil) throws(StoreError) -> Bool {
        try database.transaction { connection throws(StoreError) -> Bool in
            if let limit = ifSerialBelow,
               let loaded = try connection.queryFirst("SELECT serial FROM fido_metadata_blob WHERE id = 1\(connection.dialect.forUpdate)", []),
               try loaded.integer("serial") >= limit {
                return false
            }
            try connection.execute("DELETE FROM fido_metadata_entries")
            try connection.execute("DELETE FROM fido_metadata_blob")
            try connection.execute(
                "INSERT INTO fido_metadata_blob (id, serial, next_update, legal_header, entry_count, loaded_at) VALUES (1, $1, $2, $3, $4, $5)",
                [.integer(blob.serial), .date(blob.nextUpdate), .text(blob.legalHeader), .integer(blob.entryCount), .date(blob.loadedAt)])
            for entry in entries {
                try connection.execute("INSERT INTO fido_metadata_entries (lookup_key, entry_json) VALUES ($1, $2)",
                                       [.text(entry.key), .text(entry.json)])
            }
            return true
        }
    }

    /// The loaded BLOB's summary, or nil when none is loaded.
    public func current() throws(StoreError) -> StoredMetadataBLOB? {
        guard let row = try database.queryFirst(
            "SELECT serial, next_update, legal_header, entry_count, loaded_at FROM fido_metadata_blob WHERE id = 1", [])
        else { return nil }
        return StoredMetadataBLOB(serial: try row.integer("serial"), nextUpdate: try row.date("next_update"),
                                  legalHeader: try row.text("legal_header"), entryCount: try row.integer("entry_count"),
                                  loadedAt: try row.date("loaded_at"))
    }

    /// How many lookup keys are stored.
    public func lookupKeyCount() throws(StoreError) -> Int64 {
        try database.queryFirst("SELECT COUNT(*) AS n FROM fido_metadata_entries", [])?.integer("n") ?? 0
    }

    /// The JSON of the entry stored under `key`, or nil.
    public func entryJSON(lookupKey key: String) throws(StoreError) -> String? {
        try database.queryFirst("SELECT entry_json FROM fido_metadata_entries WHERE lookup_key = $1", [.text(key)])?.text("entry_json")
    }
}
