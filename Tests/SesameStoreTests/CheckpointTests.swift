import Foundation
import Testing
@testable import SesameStore
import SesameTestSupport

/// When SQLite's writer copies the log into the database file: at ``SQLiteDatabase/checkpointPages`` pages of log, not
/// at SQLite's default of 1,000, after which the log starts over from its beginning.
@Suite struct CheckpointTests {
    /// The log's frames on disk, from its file's size (a 32-byte header, then per page a 24-byte frame header and the
    /// page).
    static func logFrames(_ path: String) throws -> Int {
        let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
        return max(0, size - 32) / (24 + 4096)
    }

    @Test("the log grows past SQLite's 1,000 pages, is checkpointed at 10,000, and then starts over")
    func checkpointsAtTenThousandPages() throws {
        let path = try freshSQLitePath()
        let database = try SQLiteDatabase(path: path)
        try database.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)", [])
        // Each commit replaces ten rows of 16 KB: about 45 pages of log, and a database file that stays small.
        func commit() throws {
            try database.bookkeepingTransaction { connection throws(StoreError) in
                try connection.execute("DELETE FROM blobs", [])
                for _ in 0..<10 { try connection.execute("INSERT INTO blobs (body) VALUES (randomblob(16000))", []) }
            }
        }
        for _ in 0..<(3_500 / 45) { try commit() }
        // SQLite's default would have started the log over at 1,000 pages.
        #expect(try Self.logFrames(path) >= 3_000)
        // 25,000 more pages of log: the checkpoint at 10,000 lets it start over from its beginning, so the file never
        // grows much past 10,000 frames.
        for _ in 0..<(25_000 / 45) { try commit() }
        let frames = try Self.logFrames(path)
        #expect(frames >= SQLiteDatabase.checkpointPages && frames < SQLiteDatabase.checkpointPages + 200, "\(frames) frames of log")
    }
}
