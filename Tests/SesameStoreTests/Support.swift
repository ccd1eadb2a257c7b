import Foundation
import SesameStore
import SesameTestSupport
import Synchronization
import Testing

extension Backend {
    /// Opens a migrated store on a fresh database.
    func makeStore() throws -> Store {
        try Store.open(try makeURL())
    }
}

/// Runs `body` on `count` separate threads that start together, and waits for all of them.
///
/// Real threads rather than `concurrentPerform`, which on a 2-core machine would run only about two at a time.
func runConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        ready.enter()
        done.enter()
        let thread = Thread {
            ready.leave()
            start.wait()
            body(index)
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    ready.wait()
    for _ in 0..<count { start.signal() }
    done.wait()
}

/// A fixed time on a whole millisecond, so records round-trip exactly.
let t0 = Date(timeIntervalSince1970: 1_750_000_000)

extension Date {
    func plus(seconds: Double) -> Date { addingTimeInterval(seconds) }
}

/// Builders for valid records.
enum Fixture {
    static func project(_ id: String = "p1", rpID: String = "example.org") -> ProjectRecord {
        ProjectRecord(
            id: id, name: "Project \(id)", rpID: rpID, rpName: "Example", authMethods: ["passkey": true, "password": false],
            createdAt: t0, updatedAt: t0
        )
    }

    static func user(_ id: String = "u1", projectID: String = "p1", email: String? = nil) -> UserRecord {
        UserRecord(
            id: id, projectID: projectID, email: email, name: "User \(id)", userHandle: Array("handle-\(projectID)-\(id)".utf8),
            createdAt: t0, updatedAt: t0
        )
    }

    static func credential(
        _ id: String = "c1", projectID: String = "p1", userID: String = "u1", rpID: String = "example.org",
        credentialID: [UInt8]? = nil, signCount: Int64 = 0, createdAt: Date = t0
    ) -> CredentialRecord {
        CredentialRecord(
            id: id, projectID: projectID, userID: userID, rpID: rpID,
            credentialID: credentialID ?? Array("cred-\(id)".utf8), publicKey: [0xA5, 0x01, 0x02, 0x03, 0x26],
            algorithm: -7, signCount: signCount, backupEligible: true, backedUp: false, userVerified: true,
            aaguid: "00000000-0000-0000-0000-000000000000", transports: ["internal", "hybrid"], attestationFormat: "none",
            name: "My key", createdAt: createdAt
        )
    }

    static func challenge(
        _ id: String = "ch1", projectID: String = "p1", purpose: String = "authentication", userID: String? = nil,
        expiresAt: Date = t0.plus(seconds: 300)
    ) -> ChallengeRecord {
        ChallengeRecord(
            id: id, projectID: projectID, purpose: purpose, challenge: Array(repeating: 0x5A, count: 32), userID: userID,
            sessionID: "s-\(id)", requestID: nil, expiresAt: expiresAt, createdAt: t0
        )
    }
}
