internal import CSesameShims
import Dispatch
import Foundation
import SesameCore
import SesameCrypto
import SesameHTTP
import SesameServer
import SesameStore

/// `sesame serve`: runs the server until SIGTERM or SIGINT, then stops gracefully and exits 0.
enum ServeCommand {
    static let usage = """
        usage: sesame serve [--db sqlite:PATH | postgres://...] [--listen HOST:PORT] [--threads N]
                            [--max-body BYTES] [--connection-timeout SECONDS] [--log json|off]
                            [--public-url URL] [--app-url URL] [--webhooks-allow-local] [--inline-ip-limit N]
                            [--webhooks on|off] [--max-connections N] [--max-connections-per-ip N]
                            [--header-timeout SECONDS] [--master-key-file PATH] [--durability full|process]
                            [--dev-no-ip-limits] [--id-project ID] [--config-refresh MILLISECONDS]
          Each flag may also come from the environment: SESAME_DB, SESAME_LISTEN, SESAME_THREADS,
          SESAME_MAX_BODY, SESAME_CONNECTION_TIMEOUT, SESAME_LOG, SESAME_PUBLIC_URL, SESAME_APP_URL,
          SESAME_WEBHOOKS_ALLOW_LOCAL=1, SESAME_INLINE_IP_LIMIT, SESAME_WEBHOOKS, SESAME_MAX_CONNECTIONS,
          SESAME_MAX_CONNECTIONS_PER_IP, SESAME_HEADER_TIMEOUT, SESAME_DURABILITY, SESAME_DEV_NO_IP_LIMITS=1,
          SESAME_ID_PROJECT, SESAME_CONFIG_REFRESH. Flags win. --id-project (default: default, the bootstrap
          project) is the project whose people the hosted setup page (setup_url) signs in and creates.
          --dev-no-ip-limits switches the per-IP rate limits off (passkey sign-ins, token exchanges, the public inline
          endpoints), so one developer on loopback is never locked out: for development only, never in production.
          --durability full (the default) acknowledges a write once it is on stable storage: it survives SIGKILL,
          an OS crash and power loss. process acknowledges it once it is in the database's log: it survives SIGKILL
          of Sesame, but an OS crash or power loss may lose the last moments of writes (SQLite does not wait for the
          log's flush; PostgreSQL runs with synchronous_commit = off).
          --config-refresh (default 250, at most 1000, 0 for every request) is how often this node reads the
          configuration version: a project, platform, API key or action outcome changed by another node or the CLI
          is served here, and a revoked key refused, within that many milliseconds (its own changes at once).
          --max-connections (default 1024) bounds open connections; --max-connections-per-ip (default 128, 0 for
          none) those from one address: behind a reverse proxy, which connects from one address, set 0 and limit
          clients at the proxy. --header-timeout (default 10, 0 for none) closes a connection whose request line and
          headers are not complete that many seconds after it opened or its previous response.
          --public-url is the API origin clients reach (the verification-token issuer); --app-url the origin of
          the hosted pages (hand-off and passkey setup links). --webhooks-allow-local lets webhook endpoints use
          http:// and loopback or private addresses: for development only. --inline-ip-limit is the calls per client
          IP per minute on the public inline-verification endpoints and on the Authsignal client API (default 60). --webhooks off leaves webhook
          delivery to other nodes (every node delivers by default). SESAME_LOG_KEY (environment only) keys the
          request log's `rq` tags of verification requests; give every node the same one to correlate across nodes.
          A crash is reported in a file of its own in SESAME_CRASH_DIR (default: crashes/ beside an SQLite database,
          else ./.sesame/crashes), never on stderr with the request log; SWIFT_BACKTRACE, when set, overrides this.
          --master-key-file (or SESAME_MASTER_KEY_FILE, or the key in SESAME_MASTER_KEY) seals stored secrets; required on
          PostgreSQL, and SQLite keeps master.key beside its file by default (see 'sesame master-key').
          Defaults: --db sqlite:./.sesame/sesame.db --listen 127.0.0.1:8080 --log json,
          --public-url http://localhost:PORT, --app-url the public URL.
        """

    static func run(_ raw: [String]) -> Int32 {
        do {
            var args = try Arguments(raw, booleanFlags: ["--webhooks-allow-local", "--dev-no-ip-limits"])
            let environment = ProcessInfo.processInfo.environment
            func setting(_ flag: String, _ variable: String) throws(Arguments.UsageError) -> String? {
                try args.optional(flag) ?? environment[variable]
            }
            let database = try setting("--db", "SESAME_DB") ?? Defaults.database
            let listen = try parseListen(try setting("--listen", "SESAME_LISTEN") ?? "127.0.0.1:8080")
            var configuration = HTTPServer.Configuration()
            configuration.host = listen.host
            configuration.port = listen.port
            if let threads = try setting("--threads", "SESAME_THREADS") { configuration.threadCount = try positive(threads, "--threads") }
            if let body = try setting("--max-body", "SESAME_MAX_BODY") { configuration.maximumBodySize = try positive(body, "--max-body") }
            if let timeout = try setting("--connection-timeout", "SESAME_CONNECTION_TIMEOUT") {
                configuration.connectionTimeout = try positive(timeout, "--connection-timeout")
            }
            if let limit = try setting("--max-connections", "SESAME_MAX_CONNECTIONS") {
                configuration.connectionLimit = try positive(limit, "--max-connections")
            }
            if let limit = try setting("--max-connections-per-ip", "SESAME_MAX_CONNECTIONS_PER_IP") {
                configuration.perIPConnectionLimit = try nonNegative(limit, "--max-connections-per-ip")
            }
            if let timeout = try setting("--header-timeout", "SESAME_HEADER_TIMEOUT") {
                configuration.headerTimeout = try nonNegative(timeout, "--header-timeout")
            }
            let logMode = try setting("--log", "SESAME_LOG") ?? "json"
            guard logMode == "json" || logMode == "off" else { throw Arguments.UsageError(message: "--log must be json or off") }
            let publicURL = try setting("--public-url", "SESAME_PUBLIC_URL") ?? "http://localhost:\(listen.port)"
            let appURL = try setting("--app-url", "SESAME_APP_URL") ?? publicURL
            let allowLocal = args.flag("--webhooks-allow-local") || environment["SESAME_WEBHOOKS_ALLOW_LOCAL"] == "1"
            let ipLimit = try setting("--inline-ip-limit", "SESAME_INLINE_IP_LIMIT").map { text throws(Arguments.UsageError) in
                try positive(text, "--inline-ip-limit")
            } ?? 60
            // The correlation key comes from the environment only (a flag would show in `ps`); random per process by default.
            let idProject = try setting("--id-project", "SESAME_ID_PROJECT") ?? "default"
            let logKey = environment["SESAME_LOG_KEY"].map { Digest.sha256(Array($0.utf8)) } ?? SecureRandom.bytes(count: 32)
            let inline: InlineConfiguration
            do {
                inline = try InlineConfiguration(appURL: appURL, apiURL: publicURL, allowLocalWebhooks: allowLocal,
                                                 publicCallsPerMinutePerIP: ipLimit, logKey: logKey, idProjectID: idProject).validated()
            } catch {
                throw Arguments.UsageError(message: error.detail)
            }
            let webhooks = try setting("--webhooks", "SESAME_WEBHOOKS") ?? "on"
            guard webhooks == "on" || webhooks == "off" else { throw Arguments.UsageError(message: "--webhooks must be on or off") }
            let durabilityText = try setting("--durability", "SESAME_DURABILITY") ?? Durability.full.rawValue
            guard let durability = Durability(rawValue: durabilityText) else {
                throw Arguments.UsageError(message: "--durability must be full or process")
            }
            let perIPLimits = !(args.flag("--dev-no-ip-limits") || environment["SESAME_DEV_NO_IP_LIMITS"] == "1")
            let longest = Int(Sesame.longestConfigurationRefresh / .milliseconds(1))
            let configurationRefresh = try setting("--config-refresh", "SESAME_CONFIG_REFRESH").map { text throws(Arguments.UsageError) in
                let milliseconds = try nonNegative(text, "--config-refresh")
                guard milliseconds <= longest else { throw Arguments.UsageError(message: "--config-refresh must be at most \(longest)") }
                return Duration.milliseconds(milliseconds)
            } ?? Sesame.defaultConfigurationRefresh
            let masterKeys = try MasterKeySettings(&args, environment: environment)
            try args.finish()
            return serve(database: database, durability: durability, masterKeys: masterKeys, configuration: configuration, inline: inline,
                         perIPLimits: perIPLimits, configurationRefresh: configurationRefresh, deliversWebhooks: webhooks == "on",
                         log: logMode == "json" ? RequestLog() : nil)
        } catch let error as Arguments.UsageError {
            return fail("\(error.message)\n\(usage)", status: 2)
        } catch {
            return fail("\(error)\n\(usage)", status: 2)
        }
    }

    /// glibc gives a thread's freed memory back to the kernel once 128 KiB of it lie at the top of the thread's heap,
    /// and the next requests fault the same pages in again: an `madvise` and page faults about twice per inline
    /// verification, 2-15% of its server CPU in interleaved runs of the inline bench. Up to 1 MiB per heap is kept for
    /// reuse instead (peak RSS under the benches unchanged, 37-39 MB).
    private static func keepFreedMemoryForReuse() {
        _ = csesame_set_malloc_trim_threshold(1 << 20)
    }

    private static func serve(database: String, durability: Durability, masterKeys: MasterKeySettings, configuration: HTTPServer.Configuration,
                              inline: InlineConfiguration, perIPLimits: Bool, configurationRefresh: Duration, deliversWebhooks: Bool,
                              log: RequestLog?) -> Int32 {
        keepFreedMemoryForReuse()
        let sesame: Sesame
        do {
            sesame = try masterKeys.openForServing(database: database, store: try Store.open(database, durability: durability), inline: inline,
                                                   perIPLimits: perIPLimits, configurationRefresh: configurationRefresh)
            try Bootstrap.ensureDefaultProject(sesame)
        } catch let error as MasterKeySettings.Failure {
            return fail(error.message, status: 1)
        } catch let error as StoreError {
            return fail("cannot open the database: \(error.debugDescription)", status: 1)
        } catch {
            return fail("cannot prepare the database: \(error)", status: 1)
        }
        // Caught from here on: a SIGTERM that arrives as soon as "listening" is printed must not be lost or kill us.
        let termination = TerminationSignal()
        let application = SesameApplication(sesame: sesame, log: log)
        let server = application.makeServer(configuration: configuration)
        do { try server.start() } catch {
            return fail("cannot listen on \(configuration.host):\(configuration.port): \(error)", status: 1)
        }
        print("sesame: listening on http://\(configuration.host):\(server.boundPort)")
        print("sesame: demo page: \(Bootstrap.demoURL(host: configuration.host, port: server.boundPort))")
        if !perIPLimits {
            // Loud on both streams: a switch for one developer's loopback must never pass unnoticed in production.
            let warning = "sesame: WARNING: --dev-no-ip-limits: the per-IP rate limits are OFF (passkey sign-ins, token exchanges, "
                + "public inline endpoints). Development only: never run a public server like this."
            print(warning)
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
        if durability == .process {
            print("sesame: --durability process: an acknowledged write survives a crash of sesame, not an OS crash or power loss")
        }
        fflush(nil)
        // Expired challenges, sessions, tokens and rate-limit windows go once a minute, on every node.
        let sweeps = DispatchQueue(label: "sesame.housekeeping", qos: .utility)
        let sweeper = DispatchSource.makeTimerSource(queue: sweeps)
        sweeper.schedule(deadline: .now() + 60, repeating: 60)
        sweeper.setEventHandler { _ = try? sesame.housekeeping.sweep() }
        sweeper.resume()
        // Webhooks: every node delivers from the shared outbox; leases make each attempt one node's.
        let webhooks = deliversWebhooks ? WebhookWorker(sesame: sesame) : nil
        webhooks?.start()
        termination.wait()
        // No sweep or delivery may still run when the process exits.
        sweeper.cancel()
        sweeps.sync {}
        webhooks?.stop()
        print("sesame: shutting down")
        fflush(nil)
        server.shutdown()
        log?.flush()
        print("sesame: stopped")
        fflush(nil)
        return 0
    }

    /// SIGTERM and SIGINT, caught from its creation on (one that arrives before ``wait()`` is kept for it).
    private final class TerminationSignal {
        private let stop = DispatchSemaphore(value: 0)
        private var sources: [any DispatchSourceSignal] = []

        init() {
            for number in [SIGTERM, SIGINT] {
                // No default action (ending the process); the dispatch source, resumed next, receives it.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [stop] in stop.signal() }
                source.resume()
                sources.append(source)
            }
        }

        /// Blocks until one of the signals arrived (at once if one already did).
        func wait() {
            stop.wait()
            sources.forEach { $0.cancel() }
        }
    }

    private static func parseListen(_ text: String) throws(Arguments.UsageError) -> (host: String, port: UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw Arguments.UsageError(message: "--listen must be HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Arguments.UsageError(message: "--listen needs a host") }
        return (host, port)
    }

    private static func positive(_ text: String, _ flag: String) throws(Arguments.UsageError) -> Int {
        guard let value = Int(text), value > 0 else { throw Arguments.UsageError(message: "\(flag) must be a positive integer") }
        return value
    }

    private static func nonNegative(_ text: String, _ flag: String) throws(Arguments.UsageError) -> Int {
        guard let value = Int(text), value >= 0 else { throw Arguments.UsageError(message: "\(flag) must be 0 or a positive integer") }
        return value
    }
}

/// Settings shared by `serve` and the admin commands.
enum Defaults {
    static let database = "sqlite:./.sesame/sesame.db"

    /// The database named by `--db`, else `SESAME_DB`, else the default.
    static func database(_ args: inout Arguments) throws(Arguments.UsageError) -> String {
        try args.optional("--db") ?? ProcessInfo.processInfo.environment["SESAME_DB"] ?? database
    }
}

/// First start: a default project ready for local development and an admin API key, printed once.
///
/// The project (relying party `localhost`, passkeys and email-password on, as every method is unless switched off)
/// gets a `localhost` web platform, so a page on `http://localhost:PORT` (the demo at `/`, or one of the developer's
/// own on any port) may call `/v1` at once. It has the fixed ID `default`, so when several nodes start at once on an
/// empty database exactly one creates it (the others meet a unique conflict) and only that one creates and prints the key.
enum Bootstrap {
    static func ensureDefaultProject(_ sesame: Sesame) throws(SesameError) {
        guard try sesame.projects.list().isEmpty else { return }
        let project: Project
        do {
            project = try sesame.projects.create(id: "default", name: "Default", relyingPartyID: "localhost", relyingPartyName: "Sesame")
        } catch where error.code == .conflict {
            return
        }
        _ = try sesame.projects.addPlatform(projectID: project.id, .web(hostname: "localhost"), name: "Local development")
        let (_, secret) = try sesame.apiKeys.create(projectID: project.id, name: "admin", scopes: APIKey.Scope.all)
        print("""
            sesame: created project \(project.id) (relying party localhost, web platform localhost) and its admin API key.
            sesame: admin API key (shown once, store it now): \(secret)
            """)
    }

    /// Where the demo page of a server listening on `host:port` opens: `localhost` for loopback and wildcard
    /// addresses, since the bootstrap relying party is `localhost` and `127.0.0.1` is another site to a browser.
    static func demoURL(host: String, port: UInt16) -> String {
        let local = ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost"].contains(host.lowercased())
        let shown = local ? "localhost" : (host.contains(":") ? "[\(host)]" : host)
        return "http://\(shown):\(port)/"
    }
}

func fail(_ message: String, status: Int32) -> Int32 {
    FileHandle.standardError.write(Data("sesame: \(message)\n".utf8))
    return status
}
