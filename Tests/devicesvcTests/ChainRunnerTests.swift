import Foundation
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import ContextBusReactive
@testable import ContextBusWire
@testable import devicesvc

struct ChainRunnerTests {
    let first = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    let second = BluetoothAddress("AA:BB:CC:DD:EE:02")!
    let third = BluetoothAddress("AA:BB:CC:DD:EE:03")!
    let battery = BluetoothUUID("2a19")!
    let echo = BluetoothUUID("c0defeed-0001-4000-8000-000000000000")!

    func makeRunner(
        settings: ChainSettings = ChainSettings()
    ) -> (ChainRunner, ScriptedBackend, TestScheduler) {
        let scheduler = TestScheduler()
        let backend = ScriptedBackend(scheduler: scheduler)
        return (ChainRunner(backend: backend, scheduler: scheduler, settings: settings), backend, scheduler)
    }

    func start(_ runner: ChainRunner, _ params: RunParams) -> (ChainRunner.Chain, ChainEvents) {
        let chain = runner.makeChain(params)
        let events = ChainEvents()
        chain.signal.start(events.observer)
        return (chain, events)
    }

    /// The calls of the log, without the `done` entries.
    func calls(_ backend: ScriptedBackend) -> [String] {
        backend.log.filter { !$0.hasSuffix(" done") }
    }

    // MARK: - Happy path

    @Test func happyChainSendsEveryStepsProgressInOrderThenCompletes() {
        let (runner, backend, scheduler) = makeRunner()
        backend.setValue(Data([87]), for: first.string, "2a19")
        let (chain, events) = start(
            runner,
            RunParams(
                address: first,
                steps: [
                    .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil),
                    .write(characteristic: echo, value: Data([1, 2]), response: true, timeoutMs: nil),
                    .notify(characteristic: battery, count: 2, timeoutMs: nil), .wait(ms: 50), .disconnect,
                ]))
        backend.notify(first.string, "2a19", Data([86]))
        backend.notify(first.string, "2a19", Data([85]))
        expectFalse(events.hasEnded)
        scheduler.advance(by: .milliseconds(50))
        expectTrue(events.isCompleted)
        expectEqual(
            events.progress,
            [
                .finished(StepResult(step: 0, operation: .connect)),
                .finished(StepResult(step: 1, operation: .read, value: Data([87]), number: 87, unit: "%")),
                .finished(StepResult(step: 2, operation: .write)),
                .notification(step: 3, value: Data([86]), measurement: Quantity(number: 86, unit: "%")),
                .notification(step: 3, value: Data([85]), measurement: Quantity(number: 85, unit: "%")),
                .finished(
                    StepResult(
                        step: 3, operation: .notify, values: [Data([86]), Data([85])], numbers: [86, 85], unit: "%")),
                .finished(StepResult(step: 4, operation: .wait)),
                .finished(StepResult(step: 5, operation: .disconnect)),
            ])
        expectEqual(
            calls(backend),
            [
                "Connect AA:BB:CC:DD:EE:01", "ReadValue AA:BB:CC:DD:EE:01 2a19",
                "WriteValue AA:BB:CC:DD:EE:01 c0defeed-0001-4000-8000-000000000000 AQI= request",
                "StartNotify AA:BB:CC:DD:EE:01 2a19", "StopNotify AA:BB:CC:DD:EE:01 2a19",
                "Disconnect AA:BB:CC:DD:EE:01",
            ])
        expectTrue(chain.id.hasPrefix("c-"))
        expectEqual(runner.activeCount, 0)
    }

    @Test func stepEventsCarryReadValuesAndNotificationValuesButNotTheNotifyEnd() {
        let value = Data([7])
        expectEqual(
            ChainProgress.finished(StepResult(step: 1, operation: .read, value: value)).event(chain: "c-1"),
            StepEvent(chain: "c-1", step: 1, operation: .read, value: value))
        expectEqual(
            ChainProgress.notification(step: 2, value: value, measurement: nil).event(chain: "c-1"),
            StepEvent(chain: "c-1", step: 2, operation: .notify, value: value))
        expectEqual(
            ChainProgress.notification(step: 2, value: value, measurement: Quantity(number: 7, unit: "%"))
                .event(chain: "c-1"),
            StepEvent(chain: "c-1", step: 2, operation: .notify, value: value, number: 7, unit: "%"))
        expectEqual(
            ChainProgress.finished(StepResult(step: 1, operation: .read, value: value, number: 7, unit: "%"))
                .event(chain: "c-1"),
            StepEvent(chain: "c-1", step: 1, operation: .read, value: value, number: 7, unit: "%"))
        expectEqual(
            ChainProgress.finished(StepResult(step: 2, operation: .notify, values: [value])).event(chain: "c-1"),
            StepEvent(chain: "c-1", step: 2, operation: .notify))
    }

    // MARK: - Failures

    @Test func failingStepEndsTheChainSkipsLaterStepsAndStillDisconnects() throws {
        let (runner, backend, _) = makeRunner()
        let failure = DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
        backend.script("ReadValue AA:BB:CC:DD:EE:01 2a19", .fail(.bluez(failure)))
        let (chain, events) = start(
            runner,
            RunParams(
                address: first,
                steps: [
                    .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil),
                    .write(characteristic: echo, value: Data([1]), response: true, timeoutMs: nil), .disconnect,
                ]))
        let error = try #require(events.error)
        expectEqual(error.step, 1)
        expectEqual(error.reason, .device(.bluez(failure)))
        expectEqual(error.results, [StepResult(step: 0, operation: .connect)])
        expectEqual(
            calls(backend),
            [
                "Connect AA:BB:CC:DD:EE:01", "ReadValue AA:BB:CC:DD:EE:01 2a19", "Disconnect AA:BB:CC:DD:EE:01",
            ])
        let answer = error.rpcError
        expectEqual(answer.code, .deviceError)
        expectEqual(
            answer.chainFailure, ChainFailure(chain: chain.id, step: 1, bluez: failure.name, results: error.results))
    }

    @Test func failureBeforeAnyConnectDoesNotDisconnect() throws {
        let (runner, backend, _) = makeRunner()
        backend.script(
            "ReadValue AA:BB:CC:DD:EE:01 2a19",
            .fail(.bluez(DBusError(name: "org.bluez.Error.Failed", message: "Not connected"))))
        let (_, events) = start(
            runner, RunParams(address: first, steps: [.read(characteristic: battery, timeoutMs: nil)]))
        try expectEqual(#require(events.error).step, 0)
        expectEqual(calls(backend), ["ReadValue AA:BB:CC:DD:EE:01 2a19"])
    }

    @Test func hungStepTimesOutWith408AndTheNextChainOnTheDeviceRuns() throws {
        let (runner, backend, scheduler) = makeRunner()
        backend.script("ReadValue AA:BB:CC:DD:EE:01 2a19", .hang)
        let steps: [ChainStep] = [
            .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: 300), .disconnect,
        ]
        let (_, hung) = start(runner, RunParams(address: first, steps: steps))
        let (_, next) = start(runner, RunParams(address: first, steps: steps))
        scheduler.advance(by: .milliseconds(299))
        expectFalse(hung.hasEnded)
        expectEqual(calls(backend).filter { $0.hasPrefix("Connect") }.count, 1)
        scheduler.advance(by: .milliseconds(1))
        let error = try #require(hung.error)
        expectEqual(error.reason, .stepTimedOut(.milliseconds(300)))
        expectEqual(error.rpcError.code, .timeout)
        expectTrue(next.isCompleted)
        expectEqual(calls(backend).filter { $0.hasPrefix("Connect") }.count, 2)
    }

    @Test func chainTimeoutFailsTheRunningStepWith408AndDisconnects() throws {
        let (runner, backend, scheduler) = makeRunner()
        let (_, events) = start(
            runner, RunParams(address: first, steps: [.connect(timeoutMs: nil), .wait(ms: 1000)], timeoutMs: 500))
        scheduler.advance(by: .milliseconds(500))
        let error = try #require(events.error)
        expectEqual(error.step, 1)
        expectEqual(error.reason, .chainTimedOut(.milliseconds(500)))
        expectEqual(calls(backend).last, "Disconnect AA:BB:CC:DD:EE:01")
    }

    @Test func unavailableBlueZFailsTheChainWith503BeforeAnyCall() throws {
        let (runner, backend, _) = makeRunner()
        backend.setAvailable(false)
        let (_, events) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        let error = try #require(events.error)
        expectEqual(error.rpcError.code, .unavailable)
        expectEqual(error.rpcError.chainFailure?.step, 0)
        expectEmpty(backend.log)
    }

    @Test func linkLossDuringNotifyFailsTheStepAfterTheNotificationsItReceived() throws {
        let (runner, backend, _) = makeRunner()
        let (_, events) = start(
            runner,
            RunParams(
                address: first,
                steps: [
                    .connect(timeoutMs: nil), .notify(characteristic: battery, count: 3, timeoutMs: nil), .disconnect,
                ]
            ))
        backend.notify(first.string, "2a19", Data([1]))
        backend.notify(first.string, "2a19", Data([2]))
        backend.dropLink(first.string)
        let error = try #require(events.error)
        expectEqual(error.step, 1)
        expectEqual(error.reason, .device(.linkLost(address: first.string)))
        expectEqual(error.results, [StepResult(step: 0, operation: .connect)])
        expectEqual(
            events.progress,
            [
                .finished(StepResult(step: 0, operation: .connect)),
                .notification(step: 1, value: Data([1]), measurement: Quantity(number: 1, unit: "%")),
                .notification(step: 1, value: Data([2]), measurement: Quantity(number: 2, unit: "%")),
            ])
        expectEqual(backend.notifySessionCount, 0)
        expectEqual(calls(backend).suffix(2), ["StopNotify AA:BB:CC:DD:EE:01 2a19", "Disconnect AA:BB:CC:DD:EE:01"])
    }

    // MARK: - Retries

    @Test func transientInProgressIsRetriedWithBackoffThenSucceeds() {
        let (runner, backend, scheduler) = makeRunner()
        let busy = DeviceError.bluez(DBusError(name: "org.bluez.Error.InProgress", message: "In Progress"))
        backend.script("Connect AA:BB:CC:DD:EE:01", .fail(busy), .fail(busy))
        let (_, events) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        expectEqual(calls(backend).count, 1)
        scheduler.advance(by: .milliseconds(100))
        expectEqual(calls(backend).count, 2)
        scheduler.advance(by: .milliseconds(199))
        expectEqual(calls(backend).count, 2)
        scheduler.advance(by: .milliseconds(1))
        expectTrue(events.isCompleted)
        expectEqual(calls(backend), Array(repeating: "Connect AA:BB:CC:DD:EE:01", count: 3))
    }

    @Test func transientFailuresStopAfterTheConfiguredRetries() throws {
        var settings = ChainSettings()
        settings.retry.retries = 1
        let (runner, backend, scheduler) = makeRunner(settings: settings)
        let abort = DeviceError.bluez(
            DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
        backend.script("Connect AA:BB:CC:DD:EE:01", .fail(abort), .fail(abort))
        let (_, events) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        scheduler.run()
        try expectEqual(#require(events.error).reason, .device(abort))
        expectEqual(calls(backend).filter { $0.hasPrefix("Connect") }.count, 2)
    }

    @Test func permanentErrorsAreNotRetried() throws {
        let (runner, backend, scheduler) = makeRunner()
        let refused = DeviceError.bluez(DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"))
        backend.script("ReadValue AA:BB:CC:DD:EE:01 2a19", .fail(refused))
        let (_, events) = start(
            runner,
            RunParams(
                address: first, steps: [.connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil)]))
        scheduler.run()
        try expectEqual(#require(events.error).reason, .device(refused))
        expectEqual(calls(backend).filter { $0.hasPrefix("ReadValue") }.count, 1)
    }

    // MARK: - Cancellation

    @Test func cancellingARunningChainAnswers499AndDisconnects() throws {
        let (runner, backend, scheduler) = makeRunner()
        let (chain, events) = start(
            runner,
            RunParams(
                address: first,
                steps: [.connect(timeoutMs: nil), .wait(ms: 1000), .read(characteristic: battery, timeoutMs: nil)]))
        scheduler.advance(by: .milliseconds(10))
        expectTrue(runner.cancel(chain: chain.id))
        let error = try #require(events.error)
        expectEqual(error.reason, .cancelled)
        expectEqual(error.step, 1)
        expectEqual(error.rpcError.code, .cancelled)
        expectEqual(calls(backend), ["Connect AA:BB:CC:DD:EE:01", "Disconnect AA:BB:CC:DD:EE:01"])
        expectFalse(runner.cancel(chain: chain.id))
    }

    @Test func cancellingAQueuedChainNeverTouchesTheDevice() throws {
        let (runner, backend, scheduler) = makeRunner()
        let (_, running) = start(
            runner, RunParams(address: first, steps: [.connect(timeoutMs: nil), .wait(ms: 1000), .disconnect]))
        let (queued, cancelled) = start(
            runner, RunParams(address: first, steps: [.connect(timeoutMs: nil), .disconnect]))
        queued.control.cancel()
        let error = try #require(cancelled.error)
        expectEqual(error, ChainError(chain: queued.id, step: 0, reason: .cancelled, results: []))
        scheduler.run()
        expectTrue(running.isCompleted)
        expectEqual(calls(backend), ["Connect AA:BB:CC:DD:EE:01", "Disconnect AA:BB:CC:DD:EE:01"])
    }

    @Test func cancelAllCancelsQueuedAndRunningChains() {
        let (runner, _, scheduler) = makeRunner()
        let (_, running) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil), .wait(ms: 1000)]))
        let (_, queued) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        runner.cancelAll()
        scheduler.run()
        expectEqual(running.error?.reason, .cancelled)
        expectEqual(queued.error?.reason, .cancelled)
        expectEqual(runner.activeCount, 0)
    }

    // MARK: - Scheduling

    @Test func chainsForOneDeviceRunInArrivalOrderWithoutInterleaving() {
        let (runner, backend, scheduler) = makeRunner()
        for _ in 0..<3 {
            backend.script("Connect AA:BB:CC:DD:EE:01", .delay(.milliseconds(10)))
            backend.script("ReadValue AA:BB:CC:DD:EE:01 2a19", .delay(.milliseconds(10)))
        }
        let chains = (0..<3).map { _ in
            start(
                runner,
                RunParams(
                    address: first,
                    steps: [.connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil), .disconnect]))
        }
        scheduler.run()
        expectTrue(chains.allSatisfy { $0.1.isCompleted })
        let oneChain = [
            "Connect AA:BB:CC:DD:EE:01", "ReadValue AA:BB:CC:DD:EE:01 2a19", "Disconnect AA:BB:CC:DD:EE:01",
        ]
        expectEqual(calls(backend), oneChain + oneChain + oneChain)
    }

    @Test func chainsForDifferentDevicesRunConcurrently() {
        let (runner, backend, scheduler) = makeRunner()
        let steps: [ChainStep] = [.connect(timeoutMs: nil), .wait(ms: 100), .disconnect]
        let (_, a) = start(runner, RunParams(address: first, steps: steps))
        let (_, b) = start(runner, RunParams(address: second, steps: steps))
        expectEqual(calls(backend), ["Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:02"])
        scheduler.advance(by: .milliseconds(100))
        expectTrue(a.isCompleted && b.isCompleted)
        expectEqual(scheduler.now, .zero + .milliseconds(100))
    }

    @Test func connectionSetUpIsSerialisedPerAdapter() {
        let (runner, backend, scheduler) = makeRunner()
        backend.script("Connect AA:BB:CC:DD:EE:01", .delay(.milliseconds(50)))
        backend.script("Connect AA:BB:CC:DD:EE:02", .delay(.milliseconds(50)))
        _ = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        _ = start(runner, RunParams(address: second, steps: [.connect(timeoutMs: nil)]))
        expectEqual(backend.log, ["Connect AA:BB:CC:DD:EE:01"])
        scheduler.advance(by: .milliseconds(50))
        expectEqual(
            backend.log,
            [
                "Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:01 done", "Connect AA:BB:CC:DD:EE:02",
            ])
    }

    @Test func theAdapterIsFreeForTheNextConnectOnceTheLinkIsUpWhileServicesStillResolve() {
        let (runner, backend, scheduler) = makeRunner()
        backend.script(
            "Connect AA:BB:CC:DD:EE:01", .staged(linkUp: .milliseconds(10), resolved: .milliseconds(100)))
        backend.script(
            "Connect AA:BB:CC:DD:EE:02", .staged(linkUp: .milliseconds(10), resolved: .milliseconds(100)))
        let (_, a) = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        let (_, b) = start(runner, RunParams(address: second, steps: [.connect(timeoutMs: nil)]))
        expectEqual(backend.log, ["Connect AA:BB:CC:DD:EE:01"])
        scheduler.advance(by: .milliseconds(10))
        expectEqual(
            backend.log,
            [
                "Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:01 linked", "Connect AA:BB:CC:DD:EE:02",
            ])
        scheduler.advance(by: .milliseconds(100))
        expectTrue(a.isCompleted && b.hasEnded == false)
        scheduler.advance(by: .milliseconds(10))
        expectTrue(b.isCompleted)
    }

    @Test func aRetriedConnectQueuesAgainBehindConnectsThatArrivedDuringTheBackoff() {
        var settings = ChainSettings()
        settings.retry = RetryPolicy(retries: 1, initialDelay: .milliseconds(20))
        let (runner, backend, scheduler) = makeRunner(settings: settings)
        let busy = DeviceError.bluez(DBusError(name: "org.bluez.Error.InProgress", message: "In Progress"))
        backend.script("Connect AA:BB:CC:DD:EE:01", .fail(busy))
        backend.script("Connect AA:BB:CC:DD:EE:02", .delay(.milliseconds(50)))
        _ = start(runner, RunParams(address: first, steps: [.connect(timeoutMs: nil)]))
        _ = start(runner, RunParams(address: second, steps: [.connect(timeoutMs: nil)]))
        expectEqual(backend.log, ["Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:02"])
        scheduler.advance(by: .milliseconds(20))
        // The retry waits for the second device's link set-up instead of overlapping it.
        expectEqual(backend.log, ["Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:02"])
        scheduler.advance(by: .milliseconds(30))
        expectEqual(
            backend.log,
            [
                "Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:02", "Connect AA:BB:CC:DD:EE:02 done",
                "Connect AA:BB:CC:DD:EE:01", "Connect AA:BB:CC:DD:EE:01 done",
            ])
    }

    @Test func globalSerializationRunsOneChainAtATimeAcrossDevices() {
        var settings = ChainSettings()
        settings.serialization = .global
        let (runner, backend, scheduler) = makeRunner(settings: settings)
        let steps: [ChainStep] = [.connect(timeoutMs: nil), .wait(ms: 100), .disconnect]
        let (_, a) = start(runner, RunParams(address: first, steps: steps))
        let (_, b) = start(runner, RunParams(address: second, steps: steps))
        expectEqual(calls(backend), ["Connect AA:BB:CC:DD:EE:01"])
        scheduler.advance(by: .milliseconds(100))
        expectTrue(a.isCompleted && !b.hasEnded)
        scheduler.advance(by: .milliseconds(100))
        expectTrue(b.isCompleted)
    }

    @Test func maxConcurrentCapsHowManyDevicesRunAtOnce() {
        var settings = ChainSettings()
        settings.maxConcurrent = 2
        let (runner, backend, scheduler) = makeRunner(settings: settings)
        let steps: [ChainStep] = [.connect(timeoutMs: nil), .wait(ms: 100)]
        let all = [first, second, third].map { start(runner, RunParams(address: $0, steps: steps)) }
        expectEqual(calls(backend).count, 2)
        scheduler.advance(by: .milliseconds(100))
        expectEqual(calls(backend).last, "Connect AA:BB:CC:DD:EE:03")
        scheduler.advance(by: .milliseconds(100))
        expectTrue(all.allSatisfy { $0.1.isCompleted })
    }
}
