/// A command line split into flags and their values, read once and checked for leftovers.
struct Arguments {
    /// A usage error: the message goes to stderr and the process exits 2.
    struct UsageError: Error {
        let message: String
    }

    private var values: [String: [String]] = [:]
    private var switches: Set<String> = []

    /// Parses `--flag value` pairs; `booleanFlags` take no value.
    init(_ arguments: some Sequence<String>, booleanFlags: Set<String>) throws(UsageError) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { throw UsageError(message: "unexpected argument '\(argument)'") }
            if booleanFlags.contains(argument) {
                switches.insert(argument)
            } else {
                guard let value = iterator.next() else { throw UsageError(message: "\(argument) needs a value") }
                values[argument, default: []].append(value)
            }
        }
    }

    /// Every value of a repeatable flag, consumed.
    mutating func all(_ flag: String) -> [String] { values.removeValue(forKey: flag) ?? [] }

    /// The single value of an optional flag, consumed.
    mutating func optional(_ flag: String) throws(UsageError) -> String? {
        let found = all(flag)
        guard found.count <= 1 else { throw UsageError(message: "\(flag) given more than once") }
        return found.first
    }

    /// The single value of a required flag, consumed.
    mutating func required(_ flag: String) throws(UsageError) -> String {
        guard let value = try optional(flag) else { throw UsageError(message: "missing \(flag)") }
        return value
    }

    /// Whether a boolean flag was given, consumed.
    mutating func flag(_ flag: String) -> Bool { switches.remove(flag) != nil }

    /// Fails when a flag was given that no one read.
    func finish() throws(UsageError) {
        if let unknown = (values.keys.sorted() + switches.sorted()).first {
            throw UsageError(message: "unknown flag \(unknown)")
        }
    }
}
