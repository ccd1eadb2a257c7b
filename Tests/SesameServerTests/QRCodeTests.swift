import Foundation
import SesameTestSupport
import Testing
@testable import SesameServer

/// The QR encoder, checked by an independent decoder (zxing-cpp from PyPI, `Tests/Python/qr_decode.py`).
@Suite struct QRCodeTests {
    static let python = PythonEnvironment.prepare(requirements: ["zxing-cpp==3.1.1", "pillow==13.0.0"])
    static let decoder = PythonEnvironment.repository.appendingPathComponent("Tests/Python/qr_decode.py").path

    /// Texts of every length class: one block, several, the version information (7 and up), two-byte counts (10 and
    /// up), the largest version, bytes that are not text.
    static let texts: [[UInt8]] = [
        Array("a".utf8), Array("http://localhost:8080/verify?request_id=req_0123456789abcdef0123456789abcdef".utf8),
        Array(String(repeating: "https://app.example.com/", count: 6).utf8), Array(String(repeating: "0123456789", count: 30).utf8),
        Array(String(repeating: "QR", count: 700).utf8), Array(repeating: UInt8(ascii: "z"), count: QRCode.maximumBytes),
        Array("Grüße, 日本".utf8),
    ]

    @Test("every size decodes back to its text, at the smallest version that holds it")
    func roundTrip() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for (index, text) in Self.texts.enumerated() {
            let code = try #require(QRCode(bytes: text))
            let version = (code.size - 17) / 4
            #expect(code.size == version * 4 + 17 && (1...40).contains(version))
            if text.count <= 1 { #expect(version == 1) }
            if text.count == QRCode.maximumBytes { #expect(version == 40) }
            let path = folder.appendingPathComponent("\(index).svg").path
            try Data(code.svg.utf8).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let python = try Self.python.get()
        let run = try PythonEnvironment.run(python, [Self.decoder] + paths, timeout: 120)
        #expect(run.status == 0, "\(run.standardError)")
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [[[String: String]]])
        #expect(decoded.count == Self.texts.count)
        for (text, found) in zip(Self.texts, decoded) {
            #expect(found.count == 1 && found.first?["format"]?.contains("QR") == true, "\(text.count) bytes: \(found)")
            #expect(found.first?["text"] == String(decoding: text, as: UTF8.self), "\(text.count) bytes")
        }
    }

    @Test("more than version 40 holds is refused, not truncated")
    func tooLong() {
        #expect(QRCode(bytes: Array(repeating: 0x41, count: QRCode.maximumBytes + 1)) == nil)
        #expect(QRCode(bytes: []) != nil)
    }

    @Test("the SVG is one path of unit squares on a white square with a 4-module quiet zone")
    func svg() throws {
        let code = try #require(QRCode(bytes: Array("x".utf8)))
        #expect(code.svg.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 29 29""#))
        #expect(!code.svg.contains("<script") && code.svg.contains(##"<rect width="29" height="29" fill="#fff"/>"##))
        // The top-left finder starts at the quiet zone's edge.
        #expect(code.svg.contains("M4,4h1v1h-1z") && !code.svg.contains("M3,4h1v1h-1z"))
    }
}
