/// The flags of every database command (`--db`, `--project`, `--master-key-file`), accepted before the command as
/// well as after it: `sesame --db postgres://... project list` is `sesame project list --db postgres://...`.
enum GlobalFlags {
    static let names: Set<String> = ["--db", "--project", "--master-key-file"]
    /// Commands whose first argument is a verb (`project list`); global flags may also stand between the two.
    static let commandsWithVerbs: Set<String> = ["project", "platform", "apikey", "partner", "signing-key", "master-key", "metadata"]

    /// `arguments` with the global flags that precede the command (and its verb) moved after them, where each
    /// command reads its flags; the order of everything else is kept.
    /// - Throws: a usage error for a global flag without its value, or global flags and no command.
    static func normalized(_ arguments: [String]) throws(Arguments.UsageError) -> [String] {
        var rest = arguments[...]
        var moved: [String] = []
        func takeFlags() throws(Arguments.UsageError) {
            while let flag = rest.first, names.contains(flag) {
                guard rest.count >= 2, let value = rest.dropFirst().first, !value.hasPrefix("--") else {
                    throw Arguments.UsageError(message: "\(flag) needs a value")
                }
                moved += [flag, value]
                rest = rest.dropFirst(2)
            }
        }
        try takeFlags()
        guard let command = rest.popFirst() else {
            if moved.isEmpty { return [] }
            throw Arguments.UsageError(message: "missing command after \(moved.joined(separator: " "))")
        }
        var head = [command]
        if commandsWithVerbs.contains(command) {
            try takeFlags()
            if let verb = rest.popFirst() { head.append(verb) }
        }
        return head + rest + moved
    }
}
