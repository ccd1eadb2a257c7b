import Foundation
import SesameCore
import SesameHTTP

/// Appwrite list queries (spec §1.8) over an in-memory list: `limit`, `offset`, `cursorAfter`, `cursorBefore`,
/// `orderAsc`, `orderDesc`, `equal` and `notEqual` on a route's attributes. The lists here are small (at most ten
/// passkeys a user, a project's platforms), so filtering in memory keeps the store simple.
///
/// Queries arrive as `queries[0]=<json>&queries[1]=<json>` (the Python SDK) or one `queries[]=<json>`. More than 100,
/// one over 4096 characters, a malformed one, an unknown method or attribute is 400 `general_query_invalid`; a cursor
/// naming no item of the list is 400 `general_cursor_not_found`.
struct ListQuery {
    private(set) var limit = 25
    private(set) var offset = 0
    private var cursor: (id: String, after: Bool)?
    private var order: (attribute: String, ascending: Bool)?
    private var filters: [(attribute: String, values: [String], equal: Bool)] = []

    /// Parses the request's queries, allowing filters and ordering on `attributes`.
    init(_ request: HTTPRequest, attributes: Set<String>) throws(HTTPError) {
        var texts: [String] = []
        if let single = request.query["queries[]"] { texts.append(single) }
        var index = 0
        while let text = request.query["queries[\(index)]"] {
            texts.append(text)
            index += 1
            if index > 100 { break }
        }
        guard texts.count <= 100 else { throw Self.invalid("At most 100 queries are allowed.") }
        for text in texts { try apply(text, attributes: attributes) }
    }

    /// One query as the SDK writes it: `{"method", "attribute"?, "values"?}`.
    private struct Query: Decodable {
        enum Value: Decodable {
            case string(String), number(ClientNumber), bool(Bool), other

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let bool = try? container.decode(Bool.self) {
                    self = .bool(bool)
                } else if let number = try? container.decode(ClientNumber.self) {
                    self = .number(number)
                } else if let string = try? container.decode(String.self) {
                    self = .string(string)
                } else {
                    self = .other
                }
            }

            var text: String {
                switch self {
                case .string(let string): string
                case .number(let number): number.description
                case .bool(let bool): String(bool)
                case .other: ""
                }
            }
        }

        let method: String
        let attribute: String?
        let values: [Value]?
    }

    private mutating func apply(_ text: String, attributes: Set<String>) throws(HTTPError) {
        guard text.utf8.count <= 4096, let query = try? JSONDecoder().decode(Query.self, from: Data(text.utf8)) else {
            throw Self.invalid("Invalid query: \(text.prefix(64))")
        }
        let method = query.method
        let values = query.values ?? []
        func checkedAttribute() throws(HTTPError) -> String {
            guard let attribute = query.attribute, attributes.contains(attribute) else {
                throw Self.invalid("Invalid query: Attribute not found in schema: \(query.attribute?.prefix(64) ?? "")")
            }
            return attribute
        }
        func integer() throws(HTTPError) -> Int {
            guard values.count == 1, case .number(let number) = values[0], let whole = number.integer(in: 0...5000) else {
                throw Self.invalid("Invalid query: \(method.prefix(64)) needs one whole number from 0 to 5000.")
            }
            return whole
        }
        switch method {
        case "limit": limit = try integer()
        case "offset": offset = try integer()
        case "cursorAfter", "cursorBefore":
            guard values.count == 1, case .string(let id) = values[0] else { throw Self.invalid("Invalid query: \(method) needs one ID.") }
            cursor = (id, method == "cursorAfter")
        case "orderAsc", "orderDesc": order = (try checkedAttribute(), method == "orderAsc")
        case "equal", "notEqual":
            filters.append((try checkedAttribute(), values.map(\.text), method == "equal"))
        default:
            throw Self.invalid("Invalid query method: \(method.prefix(64))")
        }
    }

    /// The page of `items` the queries select, and how many match in all (the `total`, ignoring limit and offset).
    /// - Parameters:
    ///   - id: an item's `$id`.
    ///   - value: an item's attribute value as text, as the wire shows it.
    func apply<T>(_ items: [T], id: (T) -> String, value: (T, String) -> String) throws(HTTPError) -> (page: [T], total: Int) {
        var matching = items.filter { item in
            filters.allSatisfy { filter in filter.values.contains(value(item, filter.attribute)) == filter.equal }
        }
        if let order {
            // Stable: equal values keep the list's own order.
            matching = matching.enumerated().sorted { lhs, rhs in
                let (a, b) = (value(lhs.element, order.attribute), value(rhs.element, order.attribute))
                return a == b ? lhs.offset < rhs.offset : (order.ascending ? a < b : a > b)
            }.map(\.element)
        }
        var window = matching[...]
        if let cursor {
            guard let position = matching.firstIndex(where: { id($0) == cursor.id }) else {
                throw .appwrite(.generalCursorNotFound, "Cursor not found.")
            }
            window = cursor.after ? matching[(position + 1)...] : matching[..<position]
            if !cursor.after { window = window.suffix(limit + offset)[...] }
        }
        return (Array(window.dropFirst(offset).prefix(limit)), matching.count)
    }

    private static func invalid(_ message: String) -> HTTPError { .appwrite(.generalQueryInvalid, message) }
}

extension AppwriteAPI {
    /// Applies the request's queries to `items`; `total` is 0 when the request says `total=false`.
    static func page<T>(_ request: HTTPRequest, _ items: [T], attributes: Set<String>, id: (T) -> String,
                        value: (T, String) -> String) throws(HTTPError) -> (items: [T], total: Int) {
        let (page, total) = try ListQuery(request, attributes: attributes).apply(items, id: id, value: value)
        return (page, request.query["total"] == "false" ? 0 : total)
    }

    /// The Passkey model's queryable attributes.
    static let passkeyAttributes: Set<String> = ["$id", "$createdAt", "$updatedAt", "name", "accessedAt"]

    /// A PasskeyList of `passkeys` as the request's queries select.
    static func passkeyList(_ request: HTTPRequest, _ passkeys: [Passkey]) throws(HTTPError) -> PasskeyListModel {
        let (items, total) = try page(request, passkeys.map(PasskeyModel.init), attributes: passkeyAttributes, id: \.id) { model, attribute in
            switch attribute {
            case "$createdAt": model.createdAt
            case "$updatedAt": model.updatedAt
            case "name": model.name
            case "accessedAt": model.accessedAt
            default: model.id
            }
        }
        return PasskeyListModel(total: total, passkeys: items)
    }
}
