import TestSupport
import Testing

@testable import ctxbus

struct ServiceEndpointTests {
    @Test func theFlagWinsOverTheVariableAndTheDefault() {
        let endpoint = ServiceEndpoint.resolve(
            .store, flag: "/tmp/x.sock", environment: ["CTXBUS_STORE_SOCKET": "/tmp/y.sock"])
        expectEqual(endpoint.path, "/tmp/x.sock")
        expectEqual(endpoint.source, .flag)
    }

    @Test func theServicesVariableWinsOverTheRuntimeDirectory() {
        let endpoint = ServiceEndpoint.resolve(
            .device, flag: nil, environment: ["CTXBUS_DEVICE_SOCKET": "/tmp/d.sock", "CTXBUS_RUNTIME_DIR": "/run/x"])
        expectEqual(endpoint.path, "/tmp/d.sock")
        expectEqual(endpoint.source, .variable("CTXBUS_DEVICE_SOCKET"))
    }

    @Test(arguments: [
        (["CTXBUS_RUNTIME_DIR": "/run/cb", "XDG_RUNTIME_DIR": "/run/user/1"], "/run/cb/store.sock"),
        (["XDG_RUNTIME_DIR": "/run/user/1"], "/run/user/1/ctxbus/store.sock"),
        (["CTXBUS_RUNTIME_DIR": "", "CTXBUS_STORE_SOCKET": ""], "./run/store.sock"),
    ])
    func defaultsToTheServicesOwnDefault(environment: [String: String], path: String) {
        let endpoint = ServiceEndpoint.resolve(.store, flag: nil, environment: environment)
        expectEqual(endpoint.path, path)
        expectEqual(endpoint.source, .defaultPath)
    }

    @Test func theUnreachableMessageNamesThePathItsSourceAndTheStartCommand() {
        let endpoint = ServiceEndpoint.resolve(.device, flag: nil, environment: ["CTXBUS_DEVICE_SOCKET": "/tmp/d.sock"])
        let failure = CommandFailure.unreachable(endpoint, reason: "no service is listening at /tmp/d.sock")
        expectEqual(failure.status, .unreachable)
        expectTrue(failure.description.contains("socket tried: /tmp/d.sock (from $CTXBUS_DEVICE_SOCKET)"))
        expectTrue(failure.description.contains("devicesvc --socket /tmp/d.sock"))
    }
}
