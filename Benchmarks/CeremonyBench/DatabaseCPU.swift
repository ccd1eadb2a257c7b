import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The CPU time of the local PostgreSQL cluster a database URL reaches through its socket folder: the postmaster
/// (named by the PID in the socket's lock file, `.s.PGSQL.PORT.lock`), the children it has reaped, and every process
/// it runs (the server's backends, the WAL writer, the checkpointer). A PostgreSQL row reports it beside the server's
/// own CPU, since the database shares the machine's cores with the server and the load generator.
struct DatabaseCPU {
    let postmaster: pid_t

    /// `nil` for SQLite, or for a PostgreSQL URL without a socket folder (`host=/…`) or whose lock file cannot be read.
    init?(database: String) {
        guard database.hasPrefix("postgres"), let items = URLComponents(string: database)?.queryItems,
              let folder = items.first(where: { $0.name == "host" })?.value, folder.hasPrefix("/")
        else { return nil }
        let port = items.first { $0.name == "port" }?.value ?? "5432"
        guard let lock = try? String(contentsOfFile: "\(folder)/.s.PGSQL.\(port).lock", encoding: .utf8),
              let first = lock.split(separator: "\n").first, let pid = pid_t(first.trimmingCharacters(in: .whitespaces))
        else { return nil }
        postmaster = pid
    }

    /// The cluster's CPU time so far (user + system), in seconds.
    func seconds() -> Double {
        var ticks = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let fields = processStatFields(pid), fields.count > 14 else { continue }
            // fields[1] is the parent (field 4 of the line); [11], [12] the process's user and system time, [13], [14]
            // those of its children that have exited.
            if pid == postmaster {
                ticks += fields[11...14].compactMap { Double($0) }.reduce(0, +)
            } else if pid_t(fields[1]) == postmaster {
                ticks += fields[11...12].compactMap { Double($0) }.reduce(0, +)
            }
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The fields of `/proc/PID/stat` after the parenthesised command name (which may hold spaces): `[0]` is the state
/// (field 3 of the line), `[1]` the parent, `[11]` and `[12]` user and system time in clock ticks; `nil` when the
/// process is gone.
func processStatFields(_ pid: pid_t) -> [Substring]? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].split(separator: " ")
}
