import ContextBus
import ContextBusClient
import Foundation

/// The five patterns, one after the other, on one `ContextStack` whose root is storesvc's (a `RemoteStore`) and one
/// `BusClient` of devicesvc. Each part prints lines starting `patterns: N`; the last line is `patterns: done: …`.
struct PatternsDemo {
    let options: DemoOptions

    /// Runs every part; returns the exit status (0, or 1 after printing what failed).
    func run() -> Int32 {
        let started = ContinuousClock.now
        do {
            let store = try RemoteStore.openAndWait(
                socketPath: options.storeSocket, options: RemoteStore.Options(clientName: "patterns"))
            defer { store.close() }
            let devices = try waitFor { [options] in
                try await BusClient.connect(to: options.deviceSocket, clientName: "patterns")
            }
            defer { devices.close() }
            let stack = ContextStack(store: store)
            say("patterns: on storesvc at \(options.storeSocket) and devicesvc at \(options.deviceSocket)")

            let imported = try ImportPattern(stack: stack, store: store).run()
            try OperationPattern(stack: stack, store: store, devices: imported).run()
            var chains = 0
            var rounds = 0
            var since = Date()
            repeat {
                if rounds > 0 { Thread.sleep(forTimeInterval: 1) }  // a round a second, as the Python demo does
                let round = try ChainPattern(stack: stack, devices: devices).run(round: rounds + 1)
                if rounds == 0 { since = round.started }
                chains += round.chains
                rounds += 1
            } while rounds < options.rounds || ContinuousClock.now - started < .seconds(options.seconds)
            try BackgroundFetchPattern(stack: stack).run(recordedSince: since)
            try stack.shutdown()
            say("patterns: done: \(chains) chains in \(rounds) rounds, every pattern ran")
            return 0
        } catch {
            say("patterns: failed: \(error)")
            return 1
        }
    }
}
