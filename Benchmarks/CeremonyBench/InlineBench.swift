import Foundation
import SesameClient
import SesameTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Completed inline verifications per second (create-session, create-verification-link, passkey-options, sign,
/// passkey-complete) over loopback, then webhook events delivered per second to a local receiver.
///
/// The verifications run on a node with webhook delivery off, so the outbox fills; a second node with delivery on
/// then drains it, and the delivery rate is measured from the first to the last arrival. Ceilings, measured in the
/// same run: raw ES256 verifies per second on one core, and sequential loopback POSTs per second to the same receiver.
enum InlineBench {
    static func run(sesame: String, seconds: Double, workers: Int) {
        for backend in ["sqlite", "postgres"] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-inline-bench-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let database = backend == "sqlite" ? "sqlite:\(folder.path)/sesame.db" : try! PostgresCluster.durable.createDatabase()
            let receiver = try! WebhookReceiver(secrets: [])
            defer { receiver.stop() }

            let server = Server(binary: sesame, database: database, arguments: [
                "--webhooks", "off", "--webhooks-allow-local", "--inline-ip-limit", "100000000",
            ])
            let authenticators = CeremonyBench.enrol(port: server.port, key: server.adminKey, users: workers)
            let admin = Admin(binary: sesame, database: database)
            let partner = admin.run(["partner", "create", "--name", "Bench"])["id"] as! String
            let key = admin.run(["partner", "add-key", "--partner", partner, "--env", "live"])["secret"] as! String
            let secret = admin.run(["partner", "add-webhook", "--partner", partner, "--env", "live", "--url", receiver.url.absoluteString,
                                    "--allow-local"])["secret"] as! String
            receiver.setSecrets([secret])
            for index in 0..<workers {
                _ = admin.run(["partner", "link", "--partner", partner, "--env", "live", "--ref", "ref\(index)", "--user", "bench\(index)"])
            }
            let bearer = ["Authorization": "Bearer \(key)", "Content-Type": "application/json"]
            let json = ["Content-Type": "application/json"]
            let databaseCPU = DatabaseCPU(database: database)
            let cpuBefore = server.cpuSeconds(), loadBefore = CeremonyBench.ownCPUSeconds(), databaseBefore = databaseCPU?.seconds()
            let (rate, latencies, count) = CeremonyBench.measure(port: server.port, workers: workers, seconds: seconds) { index, client in
                let grant = CeremonyBench.check(client.send("POST", "/operations/sdk/create-session", headers: bearer, body: "{}"), 200)
                    .decoded(Envelope<Grant>.self, snakeCase: true).data.data.anchorGrantToken
                let requestID = CeremonyBench.check(client.send("POST", "/operations/sdk/create-verification-link",
                                                                headers: ["Authorization": "Bearer \(grant)", "Content-Type": "application/json"],
                                                                body: #"{"scope":"checkout","partner_user_ref":"ref\#(index)"}"#), 200)
                    .decoded(Envelope<Link>.self, snakeCase: true).data.data.requestId
                let options = CeremonyBench.check(client.send("POST", "/operations/request/passkey-options", headers: json,
                                                              body: #"{"request_id":"\#(requestID)"}"#), 200).decoded(Envelope<Options>.self, snakeCase: true).data.data
                let assertion = String(decoding: try! JSONEncoder().encode(try! authenticators[index].get(options.options, origin: CeremonyBench.origin)),
                                       as: UTF8.self)
                let body = #"{"request_id":"\#(requestID)","challenge_id":"\#(options.challengeId)","response":\#(assertion)}"#
                let outcome = CeremonyBench.check(client.send("POST", "/operations/request/passkey-complete", headers: json, body: body), 200)
                    .decoded(Envelope<Outcome>.self, snakeCase: true).data.data.outcome
                precondition(outcome == "verified", "inline verification failed: \(outcome)")
            }
            let cpu = server.cpuSeconds() - cpuBefore, loadCPU = CeremonyBench.ownCPUSeconds() - loadBefore
            let databaseSeconds = databaseCPU.flatMap { database in databaseBefore.map { database.seconds() - $0 } }
            let peak = server.peakRSSKilobytes()
            server.stop()
            let ceiling = CeremonyBench.es256VerifiesPerSecond(seconds: min(seconds, 2))
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
            emit(CeremonyResult(
                name: "inline_verifications_\(backend)", value: rate.rounded(), unit: "verifications/s", ceilingName: "es256_verify_one_core",
                ceiling: ceiling.rounded(), ratio: (rate / ceiling * 1000).rounded() / 1000, p50Milliseconds: (percentile(0.5) * 100).rounded() / 100,
                p99Milliseconds: (percentile(0.99) * 100).rounded() / 100, peakServerRSSMegabytes: (peak / 1024 * 10).rounded() / 10,
                workers: workers, ceremonies: count, serverCPUMillisecondsPerCeremony: count == 0 ? 0 : (cpu * 1_000_000 / Double(count)).rounded() / 1000,
                loadGeneratorCPUMillisecondsPerCeremony: count == 0 ? 0 : (loadCPU * 1_000_000 / Double(count)).rounded() / 1000,
                databaseCPUMillisecondsPerCeremony: databaseSeconds.map { count == 0 ? 0 : ($0 * 1_000_000 / Double(count)).rounded() / 1000 }))

            // Delivery: a node with the worker on drains the outbox.
            let deliverer = Server(binary: sesame, database: database, arguments: ["--webhooks-allow-local"])
            let drained = receiver.waitFor(count: count, timeout: 120)
            let delivererPeak = deliverer.peakRSSKilobytes()
            deliverer.stop()
            let deliveries = receiver.deliveries
            precondition(drained && deliveries.allSatisfy(\.signatureVerified) && Set(deliveries.compactMap(\.id)).count == count,
                         "webhooks: \(deliveries.count) of \(count) delivered, signatures and IDs must all check out")
            let span = max(deliveries.last!.receivedAt.timeIntervalSince(deliveries.first!.receivedAt), 0.001)
            let delivered = Double(max(count - 1, 1)) / span
            let posts = postsPerSecond(to: receiver.url(path: "/ceiling"), seconds: min(seconds, 2))
            emit(CeremonyResult(
                name: "webhook_events_delivered_\(backend)", value: delivered.rounded(), unit: "events/s",
                ceilingName: "sequential_loopback_posts_to_receiver", ceiling: posts.rounded(), ratio: (delivered / posts * 1000).rounded() / 1000,
                p50Milliseconds: 0, p99Milliseconds: 0, peakServerRSSMegabytes: (delivererPeak / 1024 * 10).rounded() / 10,
                workers: 1, ceremonies: count))
        }
    }

    /// One-thread sequential POSTs of an event-sized body to the receiver, through one URLSession.
    static func postsPerSecond(to url: URL, seconds: Double) -> Double {
        let session = URLSession(configuration: .ephemeral)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(repeating: 0x61, count: 700)
        var count = 0
        let begin = Date()
        while Date().timeIntervalSince(begin) < seconds {
            let done = DispatchSemaphore(value: 0)
            session.dataTask(with: request) { _, _, _ in done.signal() }.resume()
            done.wait()
            count += 1
        }
        return Double(count) / Date().timeIntervalSince(begin)
    }

    static func emit(_ result: CeremonyResult) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try! encoder.encode(result), as: UTF8.self))
        fflush(nil)
    }
}

/// Runs `sesame` admin commands on the benchmark's database and reads their one-line JSON answer.
struct Admin {
    let binary: String
    let database: String

    func run(_ arguments: [String]) -> [String: Any] {
        let done = try! ChildProcess.run(binary, arguments + ["--db", database])
        precondition(done.status == 0, "sesame \(arguments.joined(separator: " ")) failed: \(done.standardError)")
        return (try? JSONSerialization.jsonObject(with: Data(done.standardOutput.utf8))) as? [String: Any] ?? [:]
    }
}

extension InlineBench {
    /// The inline-verification answers the loop reads (`.data.data` of the envelope), as far as it reads them (decoded
    /// from snake case).
    struct Envelope<Payload: Decodable>: Decodable {
        struct Inner: Decodable { let data: Payload }
        let data: Inner
    }
    struct Grant: Decodable { let anchorGrantToken: String }
    struct Link: Decodable { let requestId: String }
    struct Options: Decodable {
        let options: PublicKeyCredentialRequestOptionsJSON
        let challengeId: String
    }
    struct Outcome: Decodable { let outcome: String }
}
