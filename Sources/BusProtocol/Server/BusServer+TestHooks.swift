import ContextBusSupport
import ContextBusWire

/// `test.wedgeEventLoop` `{"milliseconds": N}` → `{}`: TEST ONLY. Answers, then blocks the event loop of the
/// connection it came on for N milliseconds (at most 10 minutes), as a handler that blocks where it must not would:
/// the loop serves none of its connections meanwhile and stops beating, so `ServiceWatchdog` stops petting
/// systemd's watchdog. Registered only when a service runs with the hidden `--test-hooks` flag
/// (docs/testing.md, "Test-only hooks"); never in a deployment.
package enum TestWedgeEventLoop: RPCMethod {
    package typealias Params = WedgeParams
    package typealias Result = EmptyObject
    package static let name = "test.wedgeEventLoop"
}

/// `{"milliseconds": N}`, 1 to 600000.
package struct WedgeParams: JSONConvertible, Hashable {
    package var milliseconds: Int

    package init(milliseconds: Int) {
        self.milliseconds = milliseconds
    }

    package init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        milliseconds = try fields.int("milliseconds")
        guard (1...600_000).contains(milliseconds) else {
            throw fields.error("milliseconds", "must be from 1 to 600000")
        }
    }

    package var json: JSONValue { .object(["milliseconds": .int(Int64(milliseconds))]) }
}

extension BusServer {
    /// Registers the test-only methods (`--test-hooks`): `test.wedgeEventLoop`.
    package func registerTestHooks() {
        register(TestWedgeEventLoop.self, placement: .eventLoop) { request, params, responder in
            responder.succeed(EmptyObject())
            // Later on the same loop, so that the answer is written first.
            request.connection.loop.schedule(after: .milliseconds(20)) {
                CurrentThread.sleep(nanoseconds: Int64(params.milliseconds) * 1_000_000)
            }
        }
    }
}
