import TestSupport
import Testing

@testable import ContextBusDBus
@testable import ContextBusWire
@testable import devicesvc

struct ChainErrorTests {
    static let bluezFailure = DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")

    @Test(arguments: [
        (
            ChainFailureReason.device(.bluez(bluezFailure)), RPCErrorCode.deviceError,
            "org.bluez.Error.Failed" as String?
        ),
        (.device(.linkLost(address: "AA:BB:CC:DD:EE:01")), .deviceError, nil),
        (.device(.servicesNotResolved(address: "AA:BB:CC:DD:EE:01", after: .seconds(5))), .deviceError, nil),
        (.device(.noReply(member: "ReadValue", after: .seconds(1))), .timeout, nil),
        (.device(.unavailable("gone")), .unavailable, nil),
        (.device(.unknownDevice(address: "AA:BB:CC:DD:EE:09")), .notFound, nil),
        (.stepTimedOut(.seconds(1)), .timeout, nil),
        (.chainTimedOut(.seconds(1)), .timeout, nil),
        (.cancelled, .cancelled, nil),
    ])
    func mapsEachReasonToItsProtocolCode(_ reason: ChainFailureReason, _ code: RPCErrorCode, _ bluez: String?) {
        let results = [StepResult(step: 0, operation: .connect)]
        let error = ChainError(chain: "c-9", step: 1, reason: reason, results: results).rpcError
        expectEqual(error.code, code)
        expectEqual(error.chainFailure, ChainFailure(chain: "c-9", step: 1, bluez: bluez, results: results))
    }

    @Test func keepsBlueZsNameAndMessageInTheAnswer() {
        let error = ChainError(chain: "c-1", step: 0, reason: .device(.bluez(Self.bluezFailure)), results: [])
        expectTrue(error.rpcError.message.contains("org.bluez.Error.Failed: le-connection-abort-by-local"))
    }

    @Test(arguments: [
        (DBusError(name: "org.bluez.Error.InProgress", message: "In Progress"), true),
        (bluezFailure, true),
        (DBusError(name: "org.bluez.Error.Failed", message: "Not connected"), false),
        (DBusError(name: "org.bluez.Error.NotPermitted", message: "le-connection-abort-by-local"), false),
    ])
    func transientErrorsAreTheOnesWorthRetrying(_ error: DBusError, _ transient: Bool) {
        expectEqual(DeviceError.bluez(error).isTransient, transient)
    }

    @Test func servicesNotResolvedIsTransientAndLinkLossIsNot() {
        expectTrue(DeviceError.servicesNotResolved(address: "A", after: .seconds(1)).isTransient)
        expectFalse(DeviceError.linkLost(address: "A").isTransient)
    }

    @Test func busErrorsForAMissingBlueZMeanUnavailable() {
        let error = DeviceError(callError: DBusError(name: DBusError.serviceUnknown, message: "not provided"))
        guard case .unavailable = error else {
            Issue.record("expected unavailable, got \(error)")
            return
        }
    }

    @Test func retryDelaysDoubleUpToTheCap() {
        let policy = RetryPolicy(retries: 6, initialDelay: .milliseconds(100), maxDelay: .milliseconds(500))
        expectEqual(
            (1...5).map(policy.delay(beforeRetry:)), [100, 200, 400, 500, 500].map { Duration.milliseconds($0) })
    }
}
