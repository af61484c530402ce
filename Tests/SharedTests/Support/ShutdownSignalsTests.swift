import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

struct ShutdownSignalsTests {
    @Test func theHandlerRunsOnceWithTheSignalReceived() throws {
        let calls = Collected<Int32>()
        let called = DispatchSemaphore(value: 0)
        let installation = ShutdownSignals.install([SIGUSR2], exitsAfterHandler: false) { signal in
            calls.append(signal)
            called.signal()
        }
        defer { installation.cancel() }
        kill(getpid(), SIGUSR2)
        expectEqual(called.wait(timeout: .now() + patience), .success)
        expectEqual(calls.all, [SIGUSR2])
        expectEqual(installation.receivedSignal, SIGUSR2)
        // The handler has signalled but may not have returned yet, and a signal during a handler ends the process
        // (status 128 + 12: the whole SharedTests process died so now and then, under TSan 2 runs of 5 in session 10).
        waitUntilNoHandlerRuns()

        // A second installation proves delivery still works; the first handler stays quiet.
        let second = DispatchSemaphore(value: 0)
        let other = ShutdownSignals.install([SIGUSR2], exitsAfterHandler: false) { _ in second.signal() }
        defer { other.cancel() }
        kill(getpid(), SIGUSR2)
        expectEqual(second.wait(timeout: .now() + patience), .success)
        expectEqual(calls.all, [SIGUSR2])
    }

    private func waitUntilNoHandlerRuns() {
        let deadline = ContinuousClock.now + .seconds(patienceSeconds)
        while ShutdownSignalHandler.isRunningAHandler, ContinuousClock.now < deadline { usleep(1_000) }
        expectFalse(ShutdownSignalHandler.isRunningAHandler, "a shutdown handler kept running")
    }

    @Test func sigtermRunsTheHandlerThenExitsWithStatusZero() async {
        await #expect(processExitsWith: .success) {
            ShutdownSignals.install { _ in }
            kill(getpid(), SIGTERM)
            while true { pause() }
        }
    }

    @Test func withoutTheHandlerSigtermKillsTheProcess() async {
        // The control for the test above: the exit status 0 comes from the handler.
        await #expect(processExitsWith: .signal(SIGTERM)) {
            kill(getpid(), SIGTERM)
            while true { pause() }
        }
    }

    @Test func aSecondSignalDuringTheHandlerForcesTheExit() async {
        await #expect(processExitsWith: .exitCode(128 + SIGINT)) {
            ShutdownSignals.install { _ in
                kill(getpid(), SIGINT)  // the operator presses Ctrl-C again while we save
                while true { pause() }
            }
            kill(getpid(), SIGTERM)
            while true { pause() }
        }
    }

    @Test func sigtermSavesTheStacksRootBeforeTheProcessExits() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path: String = directory.appendingPathComponent("store.sqlite").path
        await #expect(processExitsWith: .success) { [path = path as String] in
            let store = try! SQLiteStore(url: URL(fileURLWithPath: path), model: .deviceReadings)
            // A delay no test waits for: only the shutdown handler can write the root.
            let stack = ContextStack(store: store, configuration: .init(rootSaveDelay: .seconds(3_600)))
            let worker = stack.newWorker()
            try! worker.performAndWait {
                for i in 0..<25 {
                    let device = worker.insert(entity: "Device")
                    device["address", as: String.self] = "AA:\(i)"
                }
                try worker.save()
            }
            ShutdownSignals.install { _ in
                try! stack.shutdown()
                store.close()
            }
            kill(getpid(), SIGTERM)
            while true { pause() }
        }
        let store = try SQLiteStore(url: URL(fileURLWithPath: path), model: .deviceReadings)
        defer { store.close() }
        let result = try store.fetch(FetchRequest(entity: "Device", resultType: .count))
        expectEqual(result.content, .count(25))
    }
}
