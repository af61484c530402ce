import ContextBusSQLite
import ContextBusServer

extension StoreServiceConfiguration {
    /// Reads the command line (without the program name).
    ///
    /// Flags take their value as the next argument or after `=` (`--socket=/tmp/s`).
    /// `--allow-uid` and `--allow-gid` may be repeated.
    ///
    /// - Throws: `ConfigurationError` naming the flag at fault.
    static func parse(
        arguments: [String], environment: [String: String], identity: Identity = .current
    ) throws(ConfigurationError) -> Outcome {
        var configuration = defaults(environment: environment, identity: identity)
        var flags = FlagReader(arguments)
        while let flag = try flags.next() {
            switch flag {
            case "--help": return .help
            case "--socket": configuration.socketPath = try flags.nonEmpty(expected: "a path")
            case "--database": configuration.databasePath = try flags.nonEmpty(expected: "a path")
            case "--model": configuration.modelPath = try flags.nonEmpty(expected: "a path")
            case "--check-migration": configuration.checksMigration = true
            case "--max-frame": configuration.maxFrame = try flags.integer(in: 64...Int.max)
            case "--max-in-flight": configuration.maxInFlight = try flags.integer(in: 1...Int.max)
            case "--max-outbound": configuration.maxOutbound = try flags.integer(in: 1024...Int.max)
            case "--history": configuration.historyRetention = try flags.integer(in: 1...Int.max)
            case "--page-size": configuration.pageSize = try pageSize(&flags)
            case "--socket-mode": configuration.socketMode = try mode(&flags)
            case "--allow-uid":
                let uid = try UInt32(flags.integer(in: 0...Int(UInt32.max)))
                if !configuration.allowedUIDs.contains(uid) { configuration.allowedUIDs.append(uid) }
            case "--allow-gid":
                let gid = try UInt32(flags.integer(in: 0...Int(UInt32.max)))
                if !configuration.allowedGIDs.contains(gid) { configuration.allowedGIDs.append(gid) }
            case "--log-level": configuration.logLevel = try flags.choice()
            case "--retain":
                let text = try flags.value()
                guard let rule = RetentionRule(parsing: text) else {
                    throw flags.invalid(text, expected: "Entity:dateKey:age, the age like 30d, 12h, 90m or 45s")
                }
                configuration.retentionRules.append(rule)
            case "--retain-interval":
                let text = try flags.value()
                guard let interval = RetentionRule(parsing: "E:k:\(text)")?.age else {
                    throw flags.invalid(text, expected: "an interval like 60s, 15m or 1h")
                }
                configuration.retentionInterval = .seconds(interval)
            default:
                if try configuration.operations.read(flag, from: &flags) { continue }
                guard try configuration.testOptions.read(flag, from: &flags) else { throw .unknownFlag(flag) }
            }
        }
        return .run(configuration)
    }

    private static func pageSize(_ flags: inout FlagReader) throws(ConfigurationError) -> Int {
        let text = try flags.value()
        guard let size = Int(text), SQLiteStore.Configuration.isValidPageSize(size) else {
            throw flags.invalid(text, expected: "a power of two from 512 to 65536")
        }
        return size
    }

    private static func mode(_ flags: inout FlagReader) throws(ConfigurationError) -> UInt32 {
        let text = try flags.value()
        let digits = text.hasPrefix("0o") ? String(text.dropFirst(2)) : text
        guard !digits.isEmpty, digits.count <= 4, let mode = UInt32(digits, radix: 8), mode <= 0o777 else {
            throw flags.invalid(text, expected: "an octal mode such as 0660")
        }
        return mode
    }
}
