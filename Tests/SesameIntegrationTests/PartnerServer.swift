import Foundation
import SesameTestSupport
import Testing

/// A live `sesame serve` (request log on) on a free port, since the hosted pages' origin (`--app-url`, by default
/// `http://localhost:PORT`) must name the port they are served on, with one partner `Ticketz` and its test API key
/// made by the CLI: where the hosted pages', the widget's and the partner links' tests start.
final class PartnerServer {
    let folder: TemporaryFolder
    let database: String
    let server: ServerProcess
    /// `--db DATABASE` and the master key's arguments, for the CLI.
    let db: [String]
    let partner: String
    let key: String

    init(sqlite: Bool) throws {
        folder = try TemporaryFolder()
        database = sqlite ? "sqlite:\(folder.path)/sesame.db" : try PostgresCluster.shared.createDatabase()
        server = try ServerProcess.start(database: database, listen: "127.0.0.1:\(try HandOffPageBrowserTests.freePort())", logOff: false)
        db = ["--db", database] + TestMasterKey.arguments(for: database)
        partner = try #require(try SesameCLI.succeed(["partner", "create", "--name", "Ticketz"] + db)["id"] as? String)
        key = try #require(try SesameCLI.succeed(["partner", "add-key", "--partner", partner, "--env", "test"] + db)["secret"] as? String)
    }

    /// The page scripts' environment (`SESAME_URL`, `SESAME_CLI`, `SESAME_DB`, `SESAME_PARTNER`, `SESAME_PARTNER_KEY`,
    /// the master key file the CLI needs on PostgreSQL), screenshots in a folder of their own: the runs of the two
    /// backends go at once, and would otherwise overwrite each other's files while the other reads them.
    func environment(screenshots name: String) -> [String: String] {
        var environment = ["SESAME_URL": "http://localhost:\(server.port)/", "SESAME_CLI": sesameExecutable.path, "SESAME_DB": database,
                           "SESAME_PARTNER": partner, "SESAME_PARTNER_KEY": key,
                           "SESAME_SCREENSHOTS": BrowserTools.screenshots.appendingPathComponent(name).path]
        if !database.hasPrefix("sqlite:") { environment["SESAME_MASTER_KEY_FILE"] = TestMasterKey.sharedFile }
        return environment
    }

    /// Stops the server and removes its files.
    func stop() {
        server.kill()
        folder.remove()
    }
}
