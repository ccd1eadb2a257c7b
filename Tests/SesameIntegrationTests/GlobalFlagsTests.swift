import Foundation
import Testing

@Suite("--db and --project before or after the command")
struct GlobalFlagsTests {
    @Test("sesame --db X project list, sesame project --db X list and sesame project list --db X are one command")
    func anywhere() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = "sqlite:\(folder.path)/sesame.db"
        let created = try SesameCLI.succeed(["--db", database, "project", "create", "--name", "Shop", "--rp-id", "shop.example"])
        let shop = try #require(created["id"] as? String)
        try SesameCLI.succeed(["project", "create", "--db", database, "--name", "Other", "--rp-id", "other.example"])
        let lists = try [["--db", database, "project", "list"], ["project", "--db", database, "list"], ["project", "list", "--db", database]]
            .map { try SesameCLI.run($0) }
        #expect(lists.allSatisfy { $0.status == 0 && $0.stdout == lists[0].stdout }, "\(lists.map(\.stderr))")
        #expect(lists[0].stdout.split(separator: "\n").count == 2)

        // With two projects, --project picks one, wherever it stands.
        try SesameCLI.succeed(["--project", shop, "--db", database, "platform", "add", "--web", "shop.example"])
        let platforms = try SesameCLI.run(["--db", database, "platform", "list", "--project", shop])
        #expect(platforms.status == 0 && platforms.stdout.contains(#""value":"shop.example""#), "\(platforms.stderr)")
        let ambiguous = try SesameCLI.run(["--db", database, "platform", "list"])
        #expect(ambiguous.status != 0 && ambiguous.stderr.contains("--project"), "\(ambiguous.stderr)")
        // The database given before the command is the one used: another file stays empty.
        let empty = try SesameCLI.run(["--db", "sqlite:\(folder.path)/other.db", "project", "list"])
        #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty.stdout)")
    }

    @Test("a global flag without its value, or without a command, is a usage error (exit 2)")
    func usage() throws {
        for (arguments, message) in [(["--db"], "--db needs a value"), (["--db", "--project", "x", "project", "list"], "--db needs a value"),
                                     (["--db", "sqlite:/tmp/x.db"], "missing command"), (["project", "--project"], "--project needs a value")] {
            let outcome = try SesameCLI.run(arguments)
            #expect(outcome.status == 2 && outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
        }
    }
}
