import Foundation

/// One benchmark result, printed as one JSON line: `{name, value, unit, ceiling, ratio, ...}`.
struct BenchResult: Encodable {
    let name: String
    let value: Double
    let unit: String
    /// What the ceiling measures, such as `openssl_es256_verify`.
    let ceilingName: String
    let ceiling: Double
    let ratio: Double
    let target: Double?

    func print() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        Swift.print(String(decoding: try! encoder.encode(self), as: UTF8.self))
    }
}

/// Measures operations per second of `body` on the calling thread (one core).
///
/// The ceiling and the subject are measured in alternating rounds and the best round of each is kept, so a
/// burst of noise from the machine hurts both sides alike rather than one.
enum Measure {
    static func opsPerSecond(seconds: Double, _ body: () -> Void) -> Double {
        for _ in 0..<50 { body() }   // warm up caches and lazy initialisation
        let clock = ContinuousClock()
        var count = 0
        let start = clock.now
        var elapsed = Duration.zero
        let limit = Duration.milliseconds(Int(seconds * 1000))
        while elapsed < limit {
            for _ in 0..<16 { body() }
            count += 16
            elapsed = clock.now - start
        }
        let (s, attoseconds) = elapsed.components
        return Double(count) / (Double(s) + Double(attoseconds) / 1e18)
    }

    /// Best-of-`rounds` operations per second for subject and ceiling, measured alternately.
    static func compare(rounds: Int, seconds: Double, subject: () -> Void, ceiling: () -> Void) -> (subject: Double, ceiling: Double) {
        var best = (subject: 0.0, ceiling: 0.0)
        for _ in 0..<rounds {
            best.ceiling = max(best.ceiling, opsPerSecond(seconds: seconds, ceiling))
            best.subject = max(best.subject, opsPerSecond(seconds: seconds, subject))
        }
        return best
    }
}
