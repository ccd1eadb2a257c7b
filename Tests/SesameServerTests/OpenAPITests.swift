import Foundation
import SesameCore
import SesameHTTP
import SesameStore
import Testing
@testable import SesameServer

@Suite struct OpenAPITests {
    static let documentURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/SesameServer/openapi.json").standardized

    @Test("the committed OpenAPI 3.1 document describes every route the server answers, and nothing else")
    func everyRouteDocumented() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-openapi-\(UUID().uuidString)")
        let application = SesameApplication(sesame: Sesame(store: try Store.open("sqlite:\(folder.path)/db"), masterKeys: MasterKeyring(current: .generate())), log: nil)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.documentURL)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, operations) in paths {
            for method in operations.keys { documented.insert("\(method.uppercased()) \(path)") }
        }
        // OpenAPI writes path parameters as {name}, the router as :name.
        let routed = Set(application.router.routeTable.map { route in
            let path = route.pattern.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "\(route.method.rawValue) \(path)"
        })
        #expect(routed == documented, "undocumented: \(routed.subtracting(documented).sorted()); stale: \(documented.subtracting(routed).sorted())")
    }

    @Test("the server serves the committed document")
    func served() throws {
        #expect(OpenAPIDocument.bytes == Array(try Data(contentsOf: Self.documentURL)))
    }
}
