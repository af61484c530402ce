import ContextBusDBus
import ContextBusServer
import ContextBusWire

extension DeviceServiceConfiguration {
    /// Reads the command line (without the program name).
    ///
    /// Flags take their value as the next argument or after `=` (`--socket=/tmp/s`). `--allow-uid` and
    /// `--allow-gid` may be repeated.
    ///
    /// - Throws: `ConfigurationError` naming the flag at fault.
    static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Outcome {
        var configuration = defaults(environment: environment)
        var flags = FlagReader(arguments)
        while let flag = try flags.next() {
            switch flag {
            case "--help": return .help
            case "--socket": configuration.socketPath = try flags.nonEmpty()
            case "--store": configuration.storeSocketPath = try flags.nonEmpty()
            case "--bus": configuration.busAddress = try flags.nonEmpty()
            case "--adapter": configuration.chains.adapter = try adapterName(&flags)
            case "--max-concurrent": configuration.chains.maxConcurrent = try flags.integer(in: 1...1024)
            case "--serialize":
                configuration.chains.serialization = try flags.choice(expected: "device or global")
            case "--concurrent-connects": configuration.chains.concurrentConnects = try flags.integer(in: 1...64)
            case "--retry": configuration.chains.retry.retries = try flags.integer(in: 0...100)
            case "--retry-delay-ms": configuration.chains.retry.initialDelay = try milliseconds(&flags)
            case "--step-timeout-ms": configuration.chains.stepTimeout = try milliseconds(&flags)
            case "--chain-timeout-ms": configuration.chains.chainTimeout = try milliseconds(&flags)
            case "--resolve-timeout-ms": configuration.chains.resolveTimeout = try milliseconds(&flags)
            case "--log-level": configuration.logLevel = try flags.choice()
            case "--watch": configuration.watches.append(try serviceWatch(&flags))
            case "--decode":
                let text = try flags.value()
                do {
                    let (uuid, entry) = try CharacteristicDecoders.parse(text)
                    configuration.decoders.set(entry, for: uuid)
                } catch {
                    throw flags.invalid(text, expected: error.description)
                }
            default:
                if try configuration.access.read(flag, from: &flags) { continue }
                guard try configuration.operations.read(flag, from: &flags) else { throw .unknownFlag(flag) }
            }
        }
        return .run(configuration)
    }

    /// A duration flag: whole milliseconds up to a day.
    private static func milliseconds(_ flags: inout FlagReader) throws(ConfigurationError) -> Duration {
        .milliseconds(try flags.integer(in: 1...86_400_000))
    }

    /// `ADDRESS=UUID[,UUID…]`: a device and the characteristics to watch.
    private static func serviceWatch(_ flags: inout FlagReader) throws(ConfigurationError) -> ServiceWatch {
        let text = try flags.value()
        let expected = "ADDRESS=UUID[,UUID…], e.g. AA:BB:CC:DD:EE:01=2a19,2a6e"
        guard let equals = text.firstIndex(of: "=") else { throw flags.invalid(text, expected: expected) }
        let addressText = String(text[..<equals])
        guard let address = BluetoothAddress(addressText) else {
            throw flags.invalid(
                text, expected: "a Bluetooth address like AA:BB:CC:DD:EE:01 before '=', not '\(addressText)'")
        }
        var characteristics: [BluetoothUUID] = []
        for part in text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            guard let uuid = BluetoothUUID(String(part)) else {
                throw flags.invalid(
                    text, expected: "16-bit (2a19) or 128-bit characteristic UUIDs after '=', not '\(part)'")
            }
            characteristics.append(uuid)
        }
        return ServiceWatch(address: address, characteristics: characteristics)
    }

    /// An adapter name is one object path element (`hci0`): it becomes part of BlueZ object paths.
    private static func adapterName(_ flags: inout FlagReader) throws(ConfigurationError) -> String {
        let text = try flags.value()
        guard !text.isEmpty, text.utf8.allSatisfy(DBusNames.isElementCharacter) else {
            throw flags.invalid(text, expected: "an adapter name such as hci0")
        }
        return text
    }
}
