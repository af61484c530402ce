import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// The real `devicesvc` process against the simulated BlueZ (scripts/bluez-sim), one simulator per test.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceSimulatorTests {
    static let first = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let second = BluetoothAddress("AA:BB:CC:DD:EE:02")!
    static let battery = BluetoothUUID("2a19")!
    static let echoIn = BluetoothUUID("c0defeed-0001-4000-8000-000000000000")!
    /// Faster notifications than the default 100 ms, so notify steps do not dominate the run time.
    static let quickNotifications = ["--timing", "notify_ms=20"]

    static let readWriteChain: [ChainStep] = [
        .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil),
        .write(characteristic: echoIn, value: Data([1, 2]), response: true, timeoutMs: nil), .disconnect,
    ]

    /// The calls for `address` that a chain makes (property reads and introspection left out).
    func chainCalls(_ simulator: BlueZSimulator, for address: BluetoothAddress) async throws -> [String] {
        let ignored: Set<String> = ["Get", "GetAll", "GetManagedObjects", "Introspect"]
        return try await simulator.callLog().filter { $0.address == address.string && !ignored.contains($0.method) }
            .map(\.method)
    }

    /// Collects `device.step` events.
    func recordSteps(_ client: BusClient) -> (Locked<[StepEvent]>, any Disposable) {
        let steps = Locked([StepEvent]())
        let disposable = client.events(StepEvent.self).startWithValues { event in steps.withLock { $0.append(event) } }
        return (steps, disposable)
    }

    /// Waits until `condition` holds (a guard against hanging, not a timing assertion).
    func eventually(_ condition: @Sendable () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw StreamWaitError.nothingArrived }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: - Chains

    @Test func happyChainSendsEachStepsEventThenTheResult() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            let (steps, observation) = recordSteps(stack.client)
            defer { observation.dispose() }
            let result = try await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: nil),
                        .write(characteristic: Self.echoIn, value: Data([1, 2]), response: true, timeoutMs: nil),
                        .notify(characteristic: Self.battery, count: 2, timeoutMs: nil), .disconnect,
                    ])
            ).get()
            let events = steps.withLock { $0 }
            expectEqual(events.map(\.step), [0, 1, 2, 3, 3, 3, 4])
            expectEqual(events.map(\.operation), [.connect, .read, .write, .notify, .notify, .notify, .disconnect])
            expectEqual(events.map { $0.value != nil }, [false, true, false, true, true, false, false])
            expectEqual(events[1].value, Data([87]))
            expectEqual(Set(events.map(\.chain)), [result.run.chain])
            expectEqual(result.run.results.map(\.operation), [.connect, .read, .write, .notify, .disconnect])
            expectEqual(result.run.results[3].values, [events[3].value!, events[4].value!])
            expectNil(result.recording)
            #expect(
                try await chainCalls(stack.simulator, for: Self.first) == [
                    "Connect", "ReadValue", "WriteValue", "StartNotify", "StopNotify", "Disconnect",
                ])
        }
    }

    @Test func failureMidChainSkipsLaterStepsDisconnectsAndAnswers502WithTheBlueZError() async throws {
        try await withSimulatedStack { stack in
            try await stack.simulator.fail(
                "AA:BB:CC:DD:EE:01/2a19", "ReadValue", with: "org.bluez.Error.Failed",
                message: "Operation failed with ATT error: 0x0e")
            let outcome = await stack.service.run(RunParams(address: Self.first, steps: Self.readWriteChain))
            guard case .failure(let error) = outcome else {
                Issue.record("the chain succeeded")
                return
            }
            expectEqual(error.code, .deviceError)
            expectTrue(error.message.contains("Operation failed with ATT error: 0x0e"))
            let failure = try #require(error.chainFailure)
            expectEqual(failure.step, 1)
            expectEqual(failure.bluez, "org.bluez.Error.Failed")
            // The connect step's result carries the link's MTU (247 in the simulator).
            expectEqual(failure.results, [StepResult(step: 0, operation: .connect, mtu: 247)])
            try await expectEqual(chainCalls(stack.simulator, for: Self.first), ["Connect", "ReadValue", "Disconnect"])
        }
    }

    @Test func hungCallTimesOutWith408AndTheNextChainOnTheDeviceRuns() async throws {
        try await withSimulatedStack { stack in
            try await stack.simulator.hang("AA:BB:CC:DD:EE:01/2a19", "ReadValue")
            let steps: [ChainStep] = [
                .connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: 500), .disconnect,
            ]
            let (events, observation) = recordSteps(stack.client)
            defer { observation.dispose() }
            async let hung = stack.service.run(RunParams(address: Self.first, steps: steps))
            // The second chain is sent once the first has connected, so it is the one queued behind the hang.
            try await eventually { !events.withLock { $0 }.isEmpty }
            async let next = stack.service.run(RunParams(address: Self.first, steps: steps))
            let (first, second) = await (hung, next)
            guard case .failure(let error) = first else {
                Issue.record("the hung chain succeeded")
                return
            }
            expectEqual(error.code, .timeout)
            expectEqual(error.chainFailure?.step, 1)
            try expectEqual(second.get().run.results.count, 3)
            #expect(
                try await chainCalls(stack.simulator, for: Self.first) == [
                    "Connect", "ReadValue", "Disconnect", "Connect", "ReadValue", "Disconnect",
                ])
        }
    }

    @Test func cancelAnswers499AndDisconnects() async throws {
        try await withSimulatedStack { stack in
            let (steps, observation) = recordSteps(stack.client)
            defer { observation.dispose() }
            async let outcome = stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil), .wait(ms: 20_000),
                        .read(characteristic: Self.battery, timeoutMs: nil),
                    ]))
            try await eventually { !steps.withLock { $0 }.isEmpty }
            let chain = try #require(steps.withLock { $0.first?.chain })
            _ = try await stack.client.call(DeviceCancel.self, ChainReference(chain: chain))
            guard case .failure(let error) = await outcome else {
                Issue.record("the cancelled chain succeeded")
                return
            }
            expectEqual(error.code, .cancelled)
            expectEqual(
                error.chainFailure,
                ChainFailure(chain: chain, step: 1, results: [StepResult(step: 0, operation: .connect, mtu: 247)]))
            try await expectEqual(chainCalls(stack.simulator, for: Self.first), ["Connect", "Disconnect"])
            await #expect(throws: RPCError.self) {
                _ = try await stack.client.call(DeviceCancel.self, ChainReference(chain: chain))
            }
        }
    }

    @Test func aClientThatDisconnectsCancelsItsChains() async throws {
        try await withSimulatedStack { stack in
            let leaving = try await stack.service.makeClient(name: "leaving")
            let (steps, observation) = recordSteps(leaving)
            defer { observation.dispose() }
            let task = Task {
                await stack.service.run(
                    RunParams(address: Self.first, steps: [.connect(timeoutMs: nil), .wait(ms: 20_000)]), on: leaving)
            }
            try await eventually { !steps.withLock { $0 }.isEmpty }
            leaving.close()
            _ = await task.value
            try await eventually {
                try await chainCalls(stack.simulator, for: Self.first) == ["Connect", "Disconnect"]
            }
        }
    }

    @Test func twoClientsHammeringOneDeviceNeverInterleave() async throws {
        try await withSimulatedStack { stack in
            let other = try await stack.service.makeClient(name: "other")
            defer { other.close() }
            let outcomes = await withTaskGroup(of: Result<RecordedRunResult, RPCError>.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        await stack.service.run(
                            RunParams(address: Self.first, steps: Self.readWriteChain), on: index % 2 == 0 ? nil : other
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            expectTrue(outcomes.allSatisfy { (try? $0.get()) != nil })
            let calls = try await chainCalls(stack.simulator, for: Self.first)
            expectEqual(
                calls, Array(repeating: ["Connect", "ReadValue", "WriteValue", "Disconnect"], count: 10).flatMap { $0 })
        }
    }

    @Test func twoDevicesRunConcurrently() async throws {
        try await withSimulatedStack { stack in
            let steps: [ChainStep] = [.connect(timeoutMs: nil), .wait(ms: 500), .disconnect]
            async let a = stack.service.run(RunParams(address: Self.first, steps: steps))
            async let b = stack.service.run(RunParams(address: Self.second, steps: steps))
            let (resultA, resultB) = await (a, b)
            expectTrue((try? resultA.get()) != nil && (try? resultB.get()) != nil)
            let methods = try await stack.simulator.callLog().filter { ["Connect", "Disconnect"].contains($0.method) }
                .map { "\($0.method) \($0.address ?? "")" }
            // Both devices were connected before either was disconnected: the chains overlapped.
            expectEqual(Array(methods.prefix(2)).sorted(), ["Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:02"])
        }
    }

    @Test func linkSetUpsOnOneAdapterNeverOverlapWhenChainsOnThreeDevicesRunAtOnce() async throws {
        // The simulator answers InProgress to a Connect while another link is being set up; with no retries,
        // any overlap would fail a chain.
        try await withSimulatedStack(
            simulatorOptions: ["--one-connect-per-adapter"], serviceArguments: ["--retry", "0"]
        ) { stack in
            let devices = [Self.first, Self.second, BluetoothAddress("AA:BB:CC:DD:EE:03")!]
            let outcomes = await withTaskGroup(of: Result<RecordedRunResult, RPCError>.self) { group in
                for index in 0..<9 {
                    group.addTask {
                        await stack.service.run(RunParams(address: devices[index % 3], steps: Self.readWriteChain))
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            expectTrue(outcomes.allSatisfy { (try? $0.get()) != nil })
            let connects = try await stack.simulator.callLog().filter { $0.method == "Connect" }.map(\.outcome)
            expectEqual(connects, Array(repeating: "ok", count: 9))
        }
    }

    @Test func aConnectThatHangsHoldsTheAdaptersOnlyLinkSetUpByDefault() async throws {
        try await withSimulatedStack { stack in
            let hung = try await hangTheFirstDevicesConnect(stack)
            // The second device waits for the adapter's one link set-up until its chain times out, never connecting.
            let second = await stack.service.run(
                RunParams(address: Self.second, steps: Self.readWriteChain, timeoutMs: 1_000))
            guard case .failure(let error) = second else {
                Issue.record("the second device connected while the first one's link set-up hung")
                return
            }
            expectEqual(error.code, .timeout)
            expectEqual(try await chainCalls(stack.simulator, for: Self.second), [])
            await hung.end()
        }
    }

    @Test func withTwoConcurrentConnectsASecondDeviceRunsWhileTheFirstOnesConnectHangs() async throws {
        try await withSimulatedStack(serviceArguments: ["--concurrent-connects", "2"]) { stack in
            let hung = try await hangTheFirstDevicesConnect(stack)
            let second = try await stack.service.run(RunParams(address: Self.second, steps: Self.readWriteChain)).get()
            expectEqual(second.run.results.count, 4)
            expectEqual(
                try await chainCalls(stack.simulator, for: Self.second),
                ["Connect", "ReadValue", "WriteValue", "Disconnect"])
            expectEqual(hung.hasEnded, false)
            await hung.end()
        }
    }

    @Test func overlappingConnectsOnAnAdapterThatTakesOneAtATimeAreRetriedAndEveryChainSucceeds() async throws {
        // Three set-ups at once on an adapter that answers InProgress to the second: slower, never wrong. Each
        // link takes 100 ms to come up, so the three first connects meet even on a slow machine.
        try await withSimulatedStack(
            simulatorOptions: ["--one-connect-per-adapter", "--timing", "connect_ms=100"],
            serviceArguments: ["--concurrent-connects", "3", "--retry", "20", "--retry-delay-ms", "5"]
        ) { stack in
            let devices = [Self.first, Self.second, BluetoothAddress("AA:BB:CC:DD:EE:03")!]
            let outcomes = await withTaskGroup(of: Result<RecordedRunResult, RPCError>.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        await stack.service.run(RunParams(address: devices[index % 3], steps: Self.readWriteChain))
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            expectTrue(outcomes.allSatisfy { (try? $0.get()) != nil })
            let connects = try await stack.simulator.callLog().filter { $0.method == "Connect" }.map(\.outcome)
            expectEqual(connects.filter { $0 == "ok" }.count, 6)
            // The overlap happened: BlueZ refused at least one set-up, and the refused ones were retried.
            expectTrue(connects.contains("org.bluez.Error.InProgress"))
        }
    }

    /// A chain on the first device whose `Connect` BlueZ never answers, running (on a client of its own) once the
    /// simulator has logged that call.
    func hangTheFirstDevicesConnect(_ stack: SimulatedStack) async throws -> HungChain {
        try await stack.simulator.hang(Self.first.string, "Connect")
        let client = try await stack.service.makeClient(name: "hung")
        let ended = Locked(false)
        let task = Task {
            _ = await stack.service.run(
                RunParams(address: Self.first, steps: [.connect(timeoutMs: 120_000)]), on: client)
            ended.withLock { $0 = true }
        }
        try await eventually {
            try await stack.simulator.callLog().contains {
                $0.method == "Connect" && $0.address == Self.first.string && $0.outcome == "hung"
            }
        }
        return HungChain(client: client, task: task, ended: ended)
    }

    /// The chain of `hangTheFirstDevicesConnect`.
    struct HungChain {
        let client: BusClient
        let task: Task<Void, Never>
        let ended: Locked<Bool>

        var hasEnded: Bool { ended.withLock { $0 } }

        /// Closes its client (which cancels the chain) and waits for it.
        func end() async {
            client.close()
            await task.value
        }
    }

    @Test func aDeviceStillResolvingItsServicesDoesNotHoldUpAnotherDevicesConnect() async throws {
        try await withSimulatedStack(serviceArguments: ["--resolve-timeout-ms", "120000"]) { stack in
            try await stack.simulator.neverResolveServices("AA:BB:CC:DD:EE:01")
            let waiting = try await stack.service.makeClient(name: "waiting")
            let firstEnded = Locked(false)
            let first = Task {
                let outcome = await stack.service.run(
                    RunParams(address: Self.first, steps: [.connect(timeoutMs: 120_000)]), on: waiting)
                firstEnded.withLock { $0 = true }
                return outcome
            }
            // The first device's link is up (BlueZ answered its Connect) but its services never resolve.
            try await eventually {
                try await stack.simulator.callLog().contains { $0.method == "Connect" && $0.outcome == "ok" }
            }
            let second = await stack.service.run(RunParams(address: Self.second, steps: Self.readWriteChain))
            expectNotNil((try? second.get()))
            expectEqual(firstEnded.withLock { $0 }, false)
            waiting.close()
            _ = await first.value
        }
    }

    @Test func transientInProgressIsRetriedThenSucceeds() async throws {
        try await withSimulatedStack(serviceArguments: ["--retry", "3", "--retry-delay-ms", "20"]) { stack in
            try await stack.simulator.fail(
                "AA:BB:CC:DD:EE:01", "Connect", with: "org.bluez.Error.InProgress", message: "In Progress", count: 2)
            let result = try await stack.service.run(RunParams(address: Self.first, steps: Self.readWriteChain)).get()
            expectEqual(result.run.results.count, 4)
            let connects = try await stack.simulator.callLog().filter { $0.method == "Connect" }.map(\.outcome)
            expectEqual(connects, ["org.bluez.Error.InProgress", "org.bluez.Error.InProgress", "ok"])
        }
    }

    @Test func servicesThatNeverResolveAreDisconnectedAndRetried() async throws {
        try await withSimulatedStack(serviceArguments: ["--resolve-timeout-ms", "300", "--retry-delay-ms", "20"]) {
            stack in
            try await stack.simulator.neverResolveServices("AA:BB:CC:DD:EE:01")
            let result = try await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [.connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: nil)])
            ).get()
            expectEqual(result.run.results.count, 2)
            #expect(
                try await chainCalls(stack.simulator, for: Self.first) == [
                    "Connect", "Disconnect", "Connect", "ReadValue",
                ])
        }
    }

    @Test func linkLossMidNotifyFailsTheStepWith502AfterItsNotifications() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            try await stack.simulator.dropDuringNotify("AA:BB:CC:DD:EE:01/2a19", after: 2)
            let (steps, observation) = recordSteps(stack.client)
            defer { observation.dispose() }
            let outcome = await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil), .notify(characteristic: Self.battery, count: 5, timeoutMs: nil),
                        .disconnect,
                    ]))
            guard case .failure(let error) = outcome else {
                Issue.record("the chain survived the link loss")
                return
            }
            expectEqual(error.code, .deviceError)
            expectEqual(error.chainFailure?.step, 1)
            let notifications = steps.withLock { $0 }.filter { $0.operation == .notify }
            expectEqual(notifications.count, 2)
            expectTrue(notifications.allSatisfy { $0.value != nil })
            try await expectEqual(chainCalls(stack.simulator, for: Self.first).last, "Disconnect")
        }
    }

    @Test func blueZGoneAnswers503AndChainsWorkAgainWhenItReturns() async throws {
        try await withSimulatedStack { stack in
            try await stack.simulator.stopBluetoothd()
            try await eventually {
                do {
                    _ = try await stack.client.call(DeviceAdapters.self)
                    return false
                } catch let error as RPCError {
                    return error.code == .unavailable
                }
            }
            guard
                case .failure(let error) = await stack.service.run(
                    RunParams(address: Self.first, steps: Self.readWriteChain))
            else {
                Issue.record("a chain ran without BlueZ")
                return
            }
            expectEqual(error.code, .unavailable)
            try await stack.simulator.startBluetoothd()
            try await stack.service.waitUntilBlueZIsAvailable()
            #expect(
                try await stack.service.run(RunParams(address: Self.first, steps: Self.readWriteChain)).get().run
                    .results.count == 4)
        }
    }

    // MARK: - Devices, scans, subscriptions

    @Test func adaptersAndListDescribeTheSimulatedTree() async throws {
        try await withSimulatedStack { stack in
            let adapters = try await stack.client.call(DeviceAdapters.self).adapters
            expectEqual(adapters.map(\.name), ["hci0"])
            expectEqual(adapters.first?.powered, true)
            let devices = try await stack.client.call(DeviceList.self, ListParams(adapter: "hci0")).devices
            expectEqual(devices.map(\.address.string), ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03"])
            expectEqual(devices.first?.name, "Thermo-1")
            expectEqual(devices.first?.services.contains { $0.matches(BluetoothUUID("180f")!) }, true)
            await #expect(throws: RPCError.self) {
                _ = try await stack.client.call(DeviceList.self, ListParams(adapter: "hci9"))
            }
        }
    }

    @Test func concurrentScansShareOneDiscoveryAndFindTheUncachedDevice() async throws {
        try await withSimulatedStack { stack in
            async let wide = stack.client.call(DeviceScan.self, ScanParams(seconds: 0.6))
            async let narrow = stack.client.call(
                DeviceScan.self, ScanParams(seconds: 0.6, uuids: [BluetoothUUID("180d")!]))
            let (all, heartRate) = try await (wide, narrow)
            expectTrue(all.devices.contains { $0.address.string == "AA:BB:CC:DD:EE:04" })
            expectTrue(all.devices.allSatisfy { $0.rssi != nil })
            expectEqual(heartRate.devices.map(\.address.string), ["AA:BB:CC:DD:EE:03"])
            let log = try await stack.simulator.callLog()
            expectEqual(log.filter { $0.method == "StartDiscovery" }.count, 1)
            try await eventually { try await stack.simulator.callLog().contains { $0.method == "StopDiscovery" } }
        }
    }

    @Test func subscribeSendsConnectionAndValueEvents() async throws {
        try await withSimulatedStack { stack in
            let events = Locked([DeviceEvent]())
            let observation = stack.client.events(DeviceEvent.self).startWithValues { event in
                events.withLock { $0.append(event) }
            }
            defer { observation.dispose() }
            let subscription = try await stack.client.call(
                DeviceSubscribe.self, DeviceSubscribeParams(address: Self.first))
            _ = try await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [.connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: nil), .disconnect])
            ).get()
            try await eventually { events.withLock { $0 }.count >= 3 }
            let received = events.withLock { $0 }
            expectTrue(received.allSatisfy { $0.subscription == subscription.subscription && $0.address == Self.first })
            expectEqual(received.map(\.kind), [.connected, .value, .disconnected])
            expectEqual(received[1].characteristic?.matches(Self.battery), true)
            expectEqual(received[1].value, Data([87]))
        }
    }

    // MARK: - Process

    @Test func sigtermCancelsRunningChainsDisconnectsAndExitsZero() async throws {
        let simulator = try await BlueZSimulator.start()
        defer { simulator.stopNow() }
        let service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory, lifetimeSeconds: nil)
        defer { service.stop() }
        let (steps, observation) = recordSteps(service.client)
        defer { observation.dispose() }
        async let outcome = service.run(
            RunParams(address: Self.first, steps: [.connect(timeoutMs: nil), .wait(ms: 20_000)]))
        try await eventually { !steps.withLock { $0 }.isEmpty }
        service.process.send(signal: SIGTERM)
        guard case .failure(let error) = await outcome else {
            Issue.record("the chain outlived SIGTERM")
            return
        }
        expectEqual(error.code, .cancelled)
        expectTrue(service.process.waitForExit())
        expectEqual(service.process.exitStatus, 0)
        try await expectEqual(chainCalls(simulator, for: Self.first), ["Connect", "Disconnect"])
    }
}

/// `record: true` with the real processes: `storesvc` on the `--store` socket, `devicesvc`, the simulator.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceRecordingTests {
    static let readChain: [ChainStep] = [
        .connect(timeoutMs: nil), .read(characteristic: DeviceServiceSimulatorTests.battery, timeoutMs: nil),
        .disconnect,
    ]

    /// Runs `body` with a real `storesvc` on the socket the stack's `devicesvc` records into; stops it afterwards.
    func withStoreService(
        in stack: SimulatedStack, _ body: (StoreServiceProcess) async throws -> Void
    ) async throws {
        let service = try await StoreServiceProcess.start(
            socketPath: stack.simulator.directory + "/store.sock",
            databasePath: stack.simulator.directory + "/store.sqlite")
        do {
            try await body(service)
        } catch {
            await service.stop()
            throw error
        }
        await service.stop()
    }

    @Test func recordTrueSavesTheDeviceAndItsReadingsInTheStoreVisibleToSubscribers() async throws {
        try await withSimulatedStack { stack in
            try await withStoreService(in: stack) { store in
                let watcher = try await store.client("watcher")
                defer { watcher.close() }
                let events = Locked([ChangedEvent]())
                let observation = watcher.events(ChangedEvent.self).startWithValues { event in
                    events.withLock { $0.append(event) }
                }
                defer { observation.dispose() }
                _ = try await watcher.call(StoreSubscribe.self, SubscribeParams(entity: "Reading"))
                let result = try await stack.service.run(
                    RunParams(address: DeviceServiceSimulatorTests.first, steps: Self.readChain, record: true)
                ).get()
                expectEqual(result.recording, RecordingOutcome(error: nil))
                let devices = try await store.objects(of: "Device")
                let device = try #require(devices.first)
                expectEqual(devices.count, 1)
                expectEqual(device.values["address"], .string("AA:BB:CC:DD:EE:01"))
                expectEqual(device.values["name"], .string("Thermo-1"))
                expectEqual(device.values["connected"], .bool(false))
                let readings = try await store.objects(of: "Reading")
                expectEqual(readings.count, 1)
                expectEqual(readings.first?.values["value"], .string(Data([87]).base64EncodedString()))
                expectEqual(readings.first?.values["chain"], .string(result.run.chain))
                expectEqual(readings.first?.values["device"], .string(device.id.description))
                // Through storesvc like any client: the reading reaches a subscriber, authored by devicesvc, and
                // the recorder itself holds no subscription (the watcher's is the only one).
                let deadline = ContinuousClock.now + .seconds(60)
                while events.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                let event = try #require(events.withLock { $0.first })
                expectEqual(event.author, "devicesvc")
                expectEqual(event.inserted.map(\.id), readings.map(\.id))
                try await expectEqual(store.stats().subscriptions, 1)
            }
        }
    }

    @Test func aSecondRecordedChainUpdatesTheSameDevice() async throws {
        try await withSimulatedStack { stack in
            try await withStoreService(in: stack) { store in
                for _ in 0..<2 {
                    let result = try await stack.service.run(
                        RunParams(address: DeviceServiceSimulatorTests.first, steps: Self.readChain, record: true)
                    ).get()
                    expectEqual(result.recording, RecordingOutcome(error: nil))
                }
                let devices = try await store.objects(of: "Device")
                expectEqual(devices.count, 1)
                expectEqual(devices.first?.version, 2)
                try await expectEqual(store.objects(of: "Reading").count, 2)
            }
        }
    }

    @Test func aStoreServiceThatStopsIsReportedAsARecordErrorAndTheChainStillRuns() async throws {
        try await withSimulatedStack { stack in
            try await withStoreService(in: stack) { store in
                let recorded = try await stack.service.run(
                    RunParams(address: DeviceServiceSimulatorTests.first, steps: Self.readChain, record: true)
                ).get()
                expectEqual(recorded.recording, RecordingOutcome(error: nil))
                await store.crash()
                let result = try await stack.service.run(
                    RunParams(address: DeviceServiceSimulatorTests.first, steps: Self.readChain, record: true)
                ).get()
                expectEqual(result.run.results.count, 3)
                expectEqual(result.recording?.error?.isEmpty, false)
            }
        }
    }

    @Test func recordTrueWithoutAStoreStillRunsTheChainAndSaysTheRecordingFailed() async throws {
        try await withSimulatedStack { stack in
            let result = try await stack.service.run(
                RunParams(
                    address: DeviceServiceSimulatorTests.first,
                    steps: [
                        .connect(timeoutMs: nil),
                        .read(characteristic: DeviceServiceSimulatorTests.battery, timeoutMs: nil),
                    ],
                    record: true)
            ).get()
            expectEqual(result.run.results.count, 2)
            expectNotNil(result.recording?.error)
            let raw = try await stack.client.call(
                method: "device.run",
                params: RunParams(address: DeviceServiceSimulatorTests.first, steps: [.disconnect], record: true).json)
            expectEqual(raw["recorded"], .bool(false))
            expectEqual(raw["recordError"]?.stringValue?.isEmpty, false)
        }
    }

    @Test func aFailedChainStillSaysWhetherItWasRecorded() async throws {
        try await withSimulatedStack { stack in
            try await stack.simulator.fail(
                "AA:BB:CC:DD:EE:01/2a19", "ReadValue", with: "org.bluez.Error.Failed", message: "boom")
            guard
                case .failure(let error) = await stack.service.run(
                    RunParams(
                        address: DeviceServiceSimulatorTests.first, steps: DeviceServiceSimulatorTests.readWriteChain,
                        record: true))
            else {
                Issue.record("the chain succeeded")
                return
            }
            expectEqual(error.code, .deviceError)
            expectEqual(error.data?["recorded"], .bool(false))
            expectEqual(error.chainFailure?.bluez, "org.bluez.Error.Failed")
        }
    }
}
