import Foundation
import SesameClient
import SesameCrypto
import SesameTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// One line of output.
struct CeremonyResult: Encodable {
    let name: String
    let value: Double
    let unit: String
    let ceilingName: String
    let ceiling: Double
    let ratio: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let peakServerRSSMegabytes: Double
    let workers: Int
    let ceremonies: Int
    /// The server process's CPU time (user + system, from `/proc/PID/stat`) over the measured window, per ceremony.
    var serverCPUMillisecondsPerCeremony: Double? = nil
    /// The target of that figure (issue "Fast ceremonies"), and its ratio to it (at most 1 meets it).
    var serverCPUCeilingMilliseconds: Double? = nil
    var serverCPURatio: Double? = nil
    /// The load generator's own CPU time (this process, every thread) over the same window, per ceremony: it runs on
    /// the same cores, so what it spends the server cannot.
    var loadGeneratorCPUMillisecondsPerCeremony: Double? = nil
    /// On PostgreSQL, the cluster's CPU time (``DatabaseCPU``) over the same window, per ceremony: the third user of the
    /// same cores.
    var databaseCPUMillisecondsPerCeremony: Double? = nil
}

enum CeremonyBench {
    static let origin = "https://bench.example"

    /// Each backend at full durability (the default; PostgreSQL with fsync on), then at `--durability process`: the
    /// Appwrite sign-in and the Authsignal one on the same server, in alternating rounds (so that a drift of the host's
    /// speed during the run weighs on both alike, and their CPU ratio holds still).
    static func run(sesame: String, seconds: Double, workers: Int) {
        for backend in ["sqlite", "postgres"] {
            for durability in ["full", "process"] {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-bench-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: folder) }
                let database = backend == "sqlite" ? "sqlite:\(folder.path)/sesame.db" : try! PostgresCluster.durable.createDatabase()
                // The Authsignal ceremonies below come from one address, far faster than the client API's per-IP limit.
                let server = Server(binary: sesame, database: database, arguments: ["--durability", durability, "--inline-ip-limit", "100000000"])
                defer { server.stop() }
                let appwrite = appwriteCeremony(server, workers: workers)
                let authsignal = AuthsignalBench.ceremony(server, binary: sesame, database: database, workers: workers)
                let runs = alternate(server, database: DatabaseCPU(database: database), seconds: seconds, workers: workers, [appwrite, authsignal])
                let ceiling = es256VerifiesPerSecond(seconds: min(seconds, 2))
                let suffix = durability == "full" ? "" : "_process"
                let appwriteCPU = runs[0].cpuPerCeremony
                InlineBench.emit(result("appwrite_passkey_signin_ceremonies_\(backend)\(suffix)", runs[0], server: server, workers: workers,
                                        es256: ceiling, cpuCeiling: cpuCeiling))
                // The Authsignal sign-in's target: at most 1.3 times the Appwrite sign-in's CPU just measured.
                InlineBench.emit(result("authsignal_passkey_signin_ceremonies_\(backend)\(suffix)", runs[1], server: server, workers: workers,
                                        es256: ceiling, cpuCeiling: appwriteCPU * 1.3))
            }
        }
    }

    /// What ``alternate(_:database:seconds:workers:_:)`` measured of one ceremony.
    struct Run {
        var elapsed = 0.0, cpu = 0.0, loadCPU = 0.0
        /// The database's CPU seconds, when it is a PostgreSQL cluster of this machine.
        var databaseCPU: Double?
        var latencies: [Double] = []
        var rate: Double { elapsed == 0 ? 0 : Double(latencies.count) / elapsed }
        /// The server's CPU milliseconds per ceremony.
        var cpuPerCeremony: Double { latencies.isEmpty ? 0 : cpu * 1000 / Double(latencies.count) }
        /// The load generator's CPU milliseconds per ceremony.
        var loadCPUPerCeremony: Double { latencies.isEmpty ? 0 : loadCPU * 1000 / Double(latencies.count) }
        /// The database's CPU milliseconds per ceremony, when measured.
        var databaseCPUPerCeremony: Double? { databaseCPU.map { latencies.isEmpty ? 0 : $0 * 1000 / Double(latencies.count) } }
    }

    /// Runs each ceremony in turn for a quarter of `seconds`, four times over.
    static func alternate(_ server: Server, database: DatabaseCPU?, seconds: Double, workers: Int,
                          _ ceremonies: [@Sendable (Int, LoopbackClient) -> Void]) -> [Run] {
        var runs = Array(repeating: Run(), count: ceremonies.count)
        for _ in 0..<4 {
            for (index, ceremony) in ceremonies.enumerated() {
                let cpuBefore = server.cpuSeconds(), loadBefore = ownCPUSeconds(), databaseBefore = database?.seconds(), begin = Date()
                let (_, latencies, _) = measure(port: server.port, workers: workers, seconds: seconds / 4, iteration: ceremony)
                runs[index].elapsed += Date().timeIntervalSince(begin)
                runs[index].cpu += server.cpuSeconds() - cpuBefore
                runs[index].loadCPU += ownCPUSeconds() - loadBefore
                if let database, let databaseBefore { runs[index].databaseCPU = (runs[index].databaseCPU ?? 0) + database.seconds() - databaseBefore }
                runs[index].latencies += latencies
            }
        }
        return runs
    }

    /// One output line of a ceremony's run.
    static func result(_ name: String, _ run: Run, server: Server, workers: Int, es256: Double, cpuCeiling: Double) -> CeremonyResult {
        let sorted = run.latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
        return CeremonyResult(
            name: name, value: run.rate.rounded(), unit: "ceremonies/s",
            ceilingName: "es256_verify_one_core", ceiling: es256.rounded(), ratio: (run.rate / es256 * 1000).rounded() / 1000,
            p50Milliseconds: (percentile(0.5) * 100).rounded() / 100, p99Milliseconds: (percentile(0.99) * 100).rounded() / 100,
            peakServerRSSMegabytes: (server.peakRSSKilobytes() / 1024 * 10).rounded() / 10, workers: workers, ceremonies: sorted.count,
            serverCPUMillisecondsPerCeremony: (run.cpuPerCeremony * 1000).rounded() / 1000,
            serverCPUCeilingMilliseconds: (cpuCeiling * 1000).rounded() / 1000,
            serverCPURatio: cpuCeiling == 0 ? 0 : (run.cpuPerCeremony / cpuCeiling * 100).rounded() / 100,
            loadGeneratorCPUMillisecondsPerCeremony: (run.loadCPUPerCeremony * 1000).rounded() / 1000,
            databaseCPUMillisecondsPerCeremony: run.databaseCPUPerCeremony.map { ($0 * 1000).rounded() / 1000 })
    }

    /// This process's CPU time so far (user + system, every thread), in seconds.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// The server CPU time per sign-in ceremony the issue "Fast ceremonies" aims at, in milliseconds.
    static let cpuCeiling = 0.30

    /// Sets up one user with a passkey per worker; returns one sign-in ceremony (start + sign + finish + session) of
    /// worker `index`'s user.
    static func appwriteCeremony(_ server: Server, workers: Int) -> @Sendable (Int, LoopbackClient) -> Void {
        let key = server.adminKey
        let keyed = ["X-Appwrite-Project": "default", "X-Appwrite-Key": key, "Content-Type": "application/json"]
        let authenticators = enrol(port: server.port, key: key, users: workers)
        return { index, client in
            let challenge = check(client.send("POST", "/v1/account/tokens/passkey", headers: keyed, body: "{}"), 201).decoded(PasskeyToken.self)
            let assertion = try! authenticators[index].get(challenge.publicKey, origin: origin)
            let finish = #"{"challengeId":"\#(challenge.id)","credential":\#(String(decoding: try! JSONEncoder().encode(assertion), as: UTF8.self))}"#
            let token = check(client.send("PUT", "/v1/account/tokens/passkey", headers: keyed, body: finish), 201).decoded(Token.self)
            let exchange = #"{"userId":"\#(token.userId)","secret":"\#(token.secret)"}"#
            check(client.send("POST", "/v1/account/sessions/token", headers: keyed, body: exchange), 201)
        }
    }

    /// The answer of `POST /v1/account/tokens/passkey`, as far as the ceremony reads it.
    struct PasskeyToken: Decodable {
        let id: String
        let publicKey: PublicKeyCredentialRequestOptionsJSON
        enum CodingKeys: String, CodingKey {
            case id = "$id"
            case publicKey
        }
    }

    /// The answer of `PUT /v1/account/tokens/passkey`, as far as the ceremony reads it.
    struct Token: Decodable {
        let userId: String
        let secret: String
    }

    /// Runs `iteration` in a loop on `workers` threads (each with its own keep-alive connection) for `seconds`.
    /// - Returns: iterations per second, each iteration's latency in seconds, and the count.
    static func measure(port: UInt16, workers: Int, seconds: Double, iteration: @escaping @Sendable (Int, LoopbackClient) -> Void)
        -> (rate: Double, latencies: [Double], count: Int)
    {
        let deadline = Date().addingTimeInterval(seconds)
        let results = Locked<[Double]>([])
        let group = DispatchGroup()
        let begin = Date()
        for index in 0..<workers {
            group.enter()
            let thread = Thread {
                let client = LoopbackClient(port: port)
                var mine: [Double] = []
                while Date() < deadline {
                    let started = Date()
                    iteration(index, client)
                    mine.append(Date().timeIntervalSince(started))
                }
                results.withLock { $0 += mine }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        let elapsed = Date().timeIntervalSince(begin)
        let latencies = results.withLock { $0 }
        return (Double(latencies.count) / elapsed, latencies, latencies.count)
    }

    /// Points the default project at `bench.example` and creates users `bench0`... each with one passkey (through the
    /// Appwrite API), returning their authenticators.
    static func enrol(port: UInt16, key: String, users: Int) -> [SoftwareAuthenticator] {
        let admin = LoopbackClient(port: port)
        let keyed = ["X-Appwrite-Project": "default", "X-Appwrite-Key": key, "Content-Type": "application/json"]
        check(admin.send("PATCH", "/v1/project/policies/passkey", headers: keyed, body: #"{"rpId":"bench.example"}"#), 200)
        check(admin.send("POST", "/v1/project/platforms/web", headers: keyed,
                         body: #"{"platformId":"bench","name":"Bench","hostname":"bench.example"}"#), 201)
        var authenticators: [SoftwareAuthenticator] = []
        for index in 0..<users {
            check(admin.send("POST", "/v1/users", headers: keyed, body: #"{"userId":"bench\#(index)"}"#), 201)
            let secret = check(admin.send("POST", "/v1/users/bench\(index)/sessions", headers: keyed, body: "{}"), 201).json["secret"] as! String
            let user = ["X-Appwrite-Project": "default", "X-Appwrite-Session": secret, "Content-Type": "application/json"]
            let start = check(admin.send("POST", "/v1/account/passkeys", headers: user, body: "{}"), 201).json
            let authenticator = SoftwareAuthenticator()
            let options = try! JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self,
                                                    from: JSONSerialization.data(withJSONObject: start["publicKey"]!))
            let response = try! authenticator.create(options, origin: origin)
            let body = #"{"credential":\#(String(decoding: try! JSONEncoder().encode(response), as: UTF8.self))}"#
            check(admin.send("PUT", "/v1/account/passkeys/\(start["passkeyId"] as! String)/verification", headers: user, body: body), 200)
            authenticators.append(authenticator)
        }
        return authenticators
    }

    /// Raw ES256 verifications per second on this thread (one core): a fixed signature over a ceremony-sized
    /// message, key parsed once, OpenSSL EVP through SesameCrypto.
    static func es256VerifiesPerSecond(seconds: Double) -> Double {
        let key = PrivateKey.generate(.p256)
        let message = [UInt8](repeating: 7, count: 37 + 32)
        let signature = key.signature(for: message)
        let publicKey = key.publicKey
        var count = 0
        let begin = Date()
        while Date().timeIntervalSince(begin) < seconds {
            for _ in 0..<64 { precondition(publicKey.isValidSignature(signature, for: message, algorithm: .ecdsaSHA256)) }
            count += 64
        }
        return Double(count) / Date().timeIntervalSince(begin)
    }

    @discardableResult
    static func check(_ response: LoopbackClient.Response, _ status: Int) -> LoopbackClient.Response {
        precondition(response.status == status, "expected \(status), got \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        return response
    }
}

/// A value shared between threads under a lock.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// One `sesame serve` child on a free loopback port, its log off; the first start prints the admin key.
final class Server {
    let pid: pid_t
    let port: UInt16
    let adminKey: String
    private let output: String
    /// The servers running now, for ``signalAll(_:)``.
    private static let running = Locked<Set<pid_t>>([])

    /// A master key file for a PostgreSQL database's servers (every node of one database shares it), made once with
    /// `sesame master-key generate --out`.
    static func masterKeyFile(binary: String, database: String) -> String {
        let name = database.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-bench-\(String(name, radix: 16)).key").path
        if !FileManager.default.fileExists(atPath: path) {
            let pid = try! ChildProcess.spawn([binary, "master-key", "generate", "--out", path], stdout: "/dev/null", stderr: nil)
            precondition(ChildProcess.wait(pid, timeout: 30) == 0, "sesame master-key generate failed")
        }
        return path
    }

    init(binary: String, database: String, arguments: [String] = []) {
        output = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-bench-\(UUID().uuidString).out").path
        // PostgreSQL needs a master key passed (SQLite keeps its own beside the database): one for the whole run.
        let keys = database.hasPrefix("postgres") ? ["--master-key-file", Self.masterKeyFile(binary: binary, database: database)] : []
        let pid = try! ChildProcess.spawn([binary, "serve", "--db", database, "--listen", "127.0.0.1:0", "--log", "off"] + keys + arguments,
                                          stdout: output, stderr: nil)
        Self.running.withLock { _ = $0.insert(pid) }
        self.pid = pid
        var port: UInt16?
        var key: String?
        let deadline = Date().addingTimeInterval(60)
        while port == nil {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                if line.hasPrefix("sesame: admin API key") { key = line.split(separator: " ").last.map(String.init) }
                if line.hasPrefix("sesame: listening on http://") { port = line.split(separator: ":").last.flatMap { UInt16($0) } }
            }
            precondition(port != nil || (ChildProcess.wait(pid, timeout: 0) == nil && Date() < deadline), "sesame serve did not start: \(text)")
            if port == nil { usleep(20_000) }
        }
        self.port = port!
        adminKey = key ?? ""
    }

    /// The peak resident set (VmHWM) of the server so far, in kilobytes.
    func peakRSSKilobytes() -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// The server's CPU time so far (user + system), in seconds, from `/proc/PID/stat`.
    func cpuSeconds() -> Double {
        guard let fields = processStatFields(pid), fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        kill(pid, SIGTERM)
        _ = ChildProcess.wait(pid, timeout: 30)
        Self.running.withLock { _ = $0.remove(pid) }
        try? FileManager.default.removeItem(atPath: output)
    }

    /// Sends `signal` to every server still running.
    static func signalAll(_ signal: Int32) {
        for pid in running.withLock({ $0 }) { kill(pid, signal) }
    }
}
