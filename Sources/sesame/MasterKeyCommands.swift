import Foundation
import SesameCore
import SesameStore

/// Where the master keys come from: `--master-key-file PATH` or `SESAME_MASTER_KEY_FILE` (one key a line, the
/// current key first, previous keys after it), or `SESAME_MASTER_KEY` with `SESAME_MASTER_KEY_PREVIOUS` (keys
/// separated by commas or spaces); without either, the embedded SQLite default keeps `master.key` beside the database.
struct MasterKeySettings {
    /// A start-up or admin failure about the master key, with the message to print.
    struct Failure: Error {
        let message: String
    }

    let file: String?
    let key: String?
    let previous: String?

    /// Reads the flag (consumed) and the environment.
    init(_ args: inout Arguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws(Arguments.UsageError) {
        file = try args.optional("--master-key-file") ?? environment["SESAME_MASTER_KEY_FILE"]
        key = environment["SESAME_MASTER_KEY"]
        previous = environment["SESAME_MASTER_KEY_PREVIOUS"]
        if file != nil, key != nil {
            throw Arguments.UsageError(message: "give the master key once: a key file (--master-key-file, SESAME_MASTER_KEY_FILE) or SESAME_MASTER_KEY")
        }
        if previous != nil, key == nil {
            throw Arguments.UsageError(message: "SESAME_MASTER_KEY_PREVIOUS needs SESAME_MASTER_KEY (or list previous keys in the key file)")
        }
    }

    /// The key file SQLite keeps beside its database when no key is configured: `master.key` in the database's folder.
    static func defaultKeyFile(database: String) -> String? {
        guard database.hasPrefix("sqlite:") else { return nil }
        var path = String(database.dropFirst("sqlite:".count))
        if path.hasPrefix("//") { path.removeFirst(2) }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("master.key").path
    }

    /// The configured keys, or `nil` when none is configured.
    func configured() throws(Failure) -> MasterKeyring? {
        if let file { return try Self.read(file) }
        guard let key else { return nil }
        do {
            let previous = (previous ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" }).map(String.init)
            return MasterKeyring(current: try MasterKey(text: key), previous: try previous.map { text throws(SesameError) in try MasterKey(text: text) })
        } catch {
            throw Failure(message: "SESAME_MASTER_KEY or SESAME_MASTER_KEY_PREVIOUS: \(error.detail)")
        }
    }

    /// The keys for `store` at `database`: the configured ones; else, on SQLite, the key file beside the database,
    /// made (mode 0600) when the database holds no sealed secret yet; else `nil`.
    /// - Throws: when SQLite's database holds sealed secrets and its key file is missing, or a key file is unreadable.
    func resolve(database: String, store: Store) throws(Failure) -> MasterKeyring? {
        if let configured = try configured() { return configured }
        guard let path = Self.defaultKeyFile(database: database) else { return nil }
        if FileManager.default.fileExists(atPath: path) { return try Self.read(path) }
        let inventory: SecretInventory
        do { inventory = try Sesame(store: store, masterKeys: .none).secrets.inventory() } catch {
            throw Failure(message: "cannot read the database's secrets: \(error.debugDescription)")
        }
        if inventory.holdsSealedSecrets {
            throw Failure(message: """
                the database holds secrets sealed under master key \(inventory.sealedByKey.keys.sorted().joined(separator: ", ")), \
                and no master key is configured: \(path) does not exist. Pass the key that belongs to this database with \
                --master-key-file PATH or SESAME_MASTER_KEY (a copy of the database alone cannot be used).
                """)
        }
        let key = MasterKey.generate()
        // Nodes starting at once on one new file agree: the first key file to appear wins, the others read it.
        guard try Self.create(path, contents: "# Sesame master key (keep it secret, outside backups of the database)\n\(key.text)\n",
                              existingIsError: false)
        else { return try Self.read(path) }
        // On stderr: admin commands keep stdout for their JSON.
        FileHandle.standardError.write(Data("sesame: created master key \(key.id) in \(path) (mode 0600); back it up apart from the database\n".utf8))
        return MasterKeyring(current: key)
    }

    /// Reads a key file, warning when others may read it.
    static func read(_ path: String) throws(Failure) -> MasterKeyring {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(message: "cannot read the master key file \(path)") }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
            FileHandle.standardError.write(Data("sesame: warning: the master key file \(path) can be read by others (chmod 600 it)\n".utf8))
        }
        do { return try MasterKeyring(keyFile: String(decoding: data, as: UTF8.self)) } catch {
            throw Failure(message: "the master key file \(path): \(error.detail)")
        }
    }

    /// Creates a file only this user can read, whole or not at all (written beside it, then linked into place).
    /// - Returns: whether this call created it; `false` when the file exists and `existingIsError` is false.
    /// - Throws: when it exists and `existingIsError` (a file is never replaced), or it cannot be written.
    @discardableResult
    static func create(_ path: String, contents: String, existingIsError: Bool = true) throws(Failure) -> Bool {
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: .min ... .max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure(message: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else { throw Failure(message: "cannot write \(path)") }
        // link(2) never replaces an existing file: of several creators exactly one succeeds.
        guard link(temporary, path) == 0 else {
            if errno == EEXIST, !existingIsError { return false }
            throw Failure(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        return true
    }

    /// Opens the domain for `serve`: keys resolved, checked against the database, plaintext secrets sealed.
    /// - Throws: ``Failure`` with a message that says what to do (never a key).
    func openForServing(database: String, store: Store, inline: InlineConfiguration, perIPLimits: Bool,
                        configurationRefresh: Duration) throws(Failure) -> Sesame {
        guard let keys = try resolve(database: database, store: store) else {
            let sealed = (try? Sesame(store: store, masterKeys: .none).secrets.inventory())?.sealedByKey.keys.sorted() ?? []
            throw Failure(message: sealed.isEmpty
                ? """
                  a PostgreSQL deployment needs a master key, kept outside the database: create one with \
                  `sesame master-key generate --out /etc/sesame/master.key` and pass --master-key-file /etc/sesame/master.key \
                  (or SESAME_MASTER_KEY_FILE, or the key itself in SESAME_MASTER_KEY) to every node
                  """
                : """
                  the database holds secrets sealed under master key \(sealed.joined(separator: ", ")) and no master key is \
                  configured: pass it with --master-key-file PATH, SESAME_MASTER_KEY_FILE or SESAME_MASTER_KEY
                  """)
        }
        let sesame = Sesame(store: store, inline: inline, masterKeys: keys, perIPLimits: perIPLimits, configurationRefresh: configurationRefresh)
        try Self.prepare(sesame)
        return sesame
    }

    /// Opens the domain for an admin command: like serving, except that a PostgreSQL database without a configured key
    /// opens with no key (commands that need one then fail with `master_key_required`).
    func openForAdmin(database: String, store: Store, inline: InlineConfiguration = InlineConfiguration()) throws(Failure) -> Sesame {
        guard let keys = try resolve(database: database, store: store) else { return Sesame(store: store, inline: inline, masterKeys: .none) }
        let sesame = Sesame(store: store, inline: inline, masterKeys: keys)
        try Self.prepare(sesame)
        return sesame
    }

    private static func prepare(_ sesame: Sesame) throws(Failure) {
        do { try sesame.secrets.prepare() } catch {
            switch error.code {
            case .masterKeyMismatch:
                throw Failure(message: "wrong master key: \(error.detail). Configure the key that sealed them (during a rotation, as a previous key).")
            case .masterKeyRequired:
                throw Failure(message: "\(error.detail): pass it with --master-key-file PATH or SESAME_MASTER_KEY")
            default:
                throw Failure(message: "cannot prepare the database's secrets: \(error.debugDescription)")
            }
        }
    }
}

/// `sesame master-key generate|status|rotate`.
enum MasterKeyCommands {
    static let usage = """
        usage:
          sesame master-key generate [--out PATH]     a new key (printed, or written to a new file with mode 0600)
          sesame master-key status [--db ...]         the configured keys and which keys sealed the database's secrets
          sesame master-key rotate [--db ...]         re-seal every secret under the current (first) key
        The keys come from --master-key-file PATH or SESAME_MASTER_KEY_FILE (one key a line: the current key first,
        previous keys after it), or SESAME_MASTER_KEY and SESAME_MASTER_KEY_PREVIOUS (comma-separated); the embedded
        SQLite database keeps master.key beside its file by default.
        Rotation: put the new key first and the old one after it, restart every node, run `sesame master-key rotate`,
        then remove the old key and restart again.
        """

    static func run(_ raw: [String]) -> Int32 {
        guard let verb = raw.first, !verb.hasPrefix("--") else { return fail("missing command\n\(usage)", status: 2) }
        do {
            var args = try Arguments(raw.dropFirst(), booleanFlags: [])
            switch verb {
            case "generate":
                let out = try args.optional("--out")
                try args.finish()
                let key = MasterKey.generate()
                if let out {
                    try MasterKeySettings.create(out, contents: "# Sesame master key \(key.id)\n\(key.text)\n")
                    AdminCommands.printJSON(["id": key.id, "file": out])
                } else {
                    print(key.text)
                }
            case "status", "rotate":
                let database = try Defaults.database(&args)
                let settings = try MasterKeySettings(&args)
                try args.finish()
                let store = try Store.open(database)
                let sesame = try settings.openForAdmin(database: database, store: store)
                guard let current = sesame.masterKeys.current else {
                    throw MasterKeySettings.Failure(message: "no master key is configured: pass --master-key-file PATH or SESAME_MASTER_KEY")
                }
                let resealed = verb == "rotate" ? try sesame.secrets.rotate() : 0
                let inventory = try sesame.secrets.inventory()
                AdminCommands.printJSON(StatusOutput(current: current.id, configured: sesame.masterKeys.ids, sealedByKey: inventory.sealedByKey,
                                                     plaintext: inventory.plaintext.values.reduce(0, +), resealed: verb == "rotate" ? resealed : nil))
            default:
                return fail("unknown command 'master-key \(verb)'\n\(usage)", status: 2)
            }
            return 0
        } catch let error as MasterKeySettings.Failure {
            return fail(error.message, status: 1)
        } catch {
            return AdminCommands.exitStatus(error, usage: usage)
        }
    }

    private struct StatusOutput: Encodable {
        let current: String
        let configured: [String]
        let sealedByKey: [String: Int]
        let plaintext: Int
        let resealed: Int?
    }
}
