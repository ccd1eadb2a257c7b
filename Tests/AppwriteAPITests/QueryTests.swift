import Foundation
import SesameClient
import SesameCore
import SesameHTTP
import Testing

@Suite struct QueryTests {
    /// The names of the passkeys a list reply holds, in order.
    func names(_ reply: Reply) -> [String] {
        (reply.object["passkeys"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    @Test("limit, offset, cursors, ordering and equality filters on passkey lists; bad queries are refused")
    func passkeyQueries() throws {
        let harness = try Harness()
        let secret = try harness.signUpAndIn()
        var ids: [String] = []
        for name in ["b", "c", "a"] {
            ids.append(try harness.registerPasskey(secret, SoftwareAuthenticator(), name: name))
            harness.clock.advance(by: 1)
        }
        let auth = [("X-Appwrite-Session", secret)]
        func list(_ queries: String...) -> Reply {
            var query: [String: String] = [:]
            for (index, text) in queries.enumerated() { query["queries[\(index)]"] = text }
            return harness.send(.GET, "/v1/account/passkeys", headers: auth, query: query)
        }
        #expect(names(list()) == ["b", "c", "a"])
        let limited = list(#"{"method":"limit","values":[2]}"#)
        #expect(names(limited) == ["b", "c"] && limited.object["total"] as? Int == 3)
        #expect(names(list(#"{"method":"limit","values":[1.0]}"#, #"{"method":"offset","values":[1]}"#)) == ["c"])
        #expect(names(list(#"{"method":"orderAsc","attribute":"name"}"#)) == ["a", "b", "c"])
        #expect(names(list(#"{"method":"orderDesc","attribute":"$createdAt"}"#)) == ["a", "c", "b"])
        #expect(names(list(#"{"method":"cursorAfter","values":["\#(ids[0])"]}"#)) == ["c", "a"])
        #expect(names(list(#"{"method":"cursorBefore","values":["\#(ids[2])"]}"#, #"{"method":"limit","values":[1]}"#)) == ["c"])
        let filtered = list(#"{"method":"equal","attribute":"name","values":["a","c"]}"#)
        #expect(names(filtered) == ["c", "a"] && filtered.object["total"] as? Int == 2)
        #expect(names(list(#"{"method":"notEqual","attribute":"name","values":["a"]}"#)) == ["b", "c"])
        #expect(harness.send(.GET, "/v1/account/passkeys", headers: auth, query: ["queries[]": #"{"method":"limit","values":[1]}"#])
            .object["total"] as? Int == 3)

        for bad in ["not json", #"{"method":"search","attribute":"name","values":["a"]}"#, #"{"method":"orderAsc","attribute":"credentialId"}"#,
                    #"{"method":"limit","values":[-1]}"#, #"{"method":"limit","values":["5"]}"#, #"{"method":"limit","values":[5001]}"#,
                    #"{"values":[1]}"#, String(repeating: " ", count: 4097)] {
            list(bad).expectError(400, "general_query_invalid")
        }
        list(#"{"method":"cursorAfter","values":["nope"]}"#).expectError(400, "general_cursor_not_found")
        let tooMany = (0...100).map { _ in #"{"method":"limit","values":[1]}"# }
        var query: [String: String] = [:]
        for (index, text) in tooMany.enumerated() { query["queries[\(index)]"] = text }
        harness.send(.GET, "/v1/account/passkeys", headers: auth, query: query).expectError(400, "general_query_invalid")
    }

    @Test("users and platforms lists take queries too")
    func otherLists() throws {
        let harness = try Harness()
        let key = [("X-Appwrite-Key", harness.key)]
        for id in ["u1", "u2", "u3"] { _ = harness.send(.POST, "/v1/users", json: #"{"userId":"\#(id)","name":"N\#(id)"}"#, headers: key) }
        let users = harness.send(.GET, "/v1/users", headers: key, query: ["queries[0]": #"{"method":"equal","attribute":"name","values":["Nu2"]}"#])
        #expect(users.object["total"] as? Int == 1 && (users.object["users"] as? [[String: Any]])?.first?["$id"] as? String == "u2")
        harness.send(.GET, "/v1/users", headers: key, query: ["queries[0]": #"{"method":"equal","attribute":"password","values":["x"]}"#])
            .expectError(400, "general_query_invalid")
        let web = harness.send(.GET, "/v1/project/platforms", headers: key, query: ["queries[0]": #"{"method":"equal","attribute":"type","values":["web"]}"#])
        #expect(web.object["total"] as? Int == 1)
        #expect(harness.send(.GET, "/v1/project/platforms", headers: key,
                             query: ["queries[0]": #"{"method":"equal","attribute":"type","values":["apple"]}"#]).object["total"] as? Int == 0)
    }
}
