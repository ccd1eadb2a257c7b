// sesame-ceremony-bench SESAME_BINARY [SECONDS] [WORKERS] [signin|inline]
//
// Full usernameless passkey sign-in ceremonies per second over loopback, through the Appwrite API, against a live
// `sesame serve` on SQLite and on PostgreSQL: start (POST /v1/account/tokens/passkey), sign with the software
// authenticator, finish (PUT /v1/account/tokens/passkey), session (POST /v1/account/sessions/token). One JSON line
// per backend with p50/p99 latency, the server's peak RSS, and the ratio to raw ES256 verifies per second on one
// core measured in the same run. Then inline verifications per second through the inline-verification API and webhook
// events delivered per second (InlineBench). A fourth argument runs only one of the two.
import Foundation
import SesameTestSupport

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: sesame-ceremony-bench SESAME_BINARY [SECONDS] [WORKERS] [signin|inline]\n".utf8))
    exit(2)
}
// Interrupted (SIGINT, SIGTERM, SIGHUP), the bench stops what it started. Its servers are frozen first, so that its
// workers wait for their answers instead of trapping on a closed connection before the PostgreSQL cluster is stopped.
let interruptions = [SIGINT, SIGTERM, SIGHUP].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler {
        Server.signalAll(SIGSTOP)
        PostgresCluster.durable.stop()
        Server.signalAll(SIGKILL)
        _exit(128 + number)
    }
    source.resume()
    return source
}
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 5 : 5
let workers = arguments.count > 3 ? Int(arguments[3]) ?? 4 : 4
let only = arguments.count > 4 ? arguments[4] : nil
if only == nil || only == "signin" { CeremonyBench.run(sesame: arguments[1], seconds: seconds, workers: workers) }
if only == nil || only == "inline" { InlineBench.run(sesame: arguments[1], seconds: seconds, workers: workers) }
withExtendedLifetime(interruptions) { exit(0) }
