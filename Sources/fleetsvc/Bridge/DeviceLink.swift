import ContextBusClient
import ContextBusServer
import ContextBusSupport
import Dispatch

/// fleetsvc's client of its gateway's devicesvc (`--device`): blocking calls for the command runner's thread, over
/// one `BusClient` made on first use and kept (it reconnects by itself once it has connected).
final class DeviceLink: Sendable {
    let path: String
    private let client = Locked<BusClient?>(nil)

    init(path: String) { self.path = path }

    /// Calls `method` and blocks the calling thread (the command runner's, never the pool's) until the answer.
    ///
    /// - Throws: the service's `RPCError`, or `503` when devicesvc cannot be reached.
    func call(_ method: String, _ params: JSONValue) throws(RPCError) -> JSONValue {
        let outcome = Locked<Result<JSONValue, RPCError>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let path = self.path
        let client = self.client
        Task {
            let result: Result<JSONValue, RPCError>
            do {
                let connected = try await Self.connected(client, path: path)
                result = .success(try await connected.call(method: method, params: params))
            } catch let error as RPCError {
                result = .failure(error)
            } catch {
                result = .failure(.unavailable("devicesvc is not reachable at \(path): \(error)"))
            }
            outcome.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        return try outcome.withLock { $0! }.get()
    }

    private static func connected(_ client: Locked<BusClient?>, path: String) async throws -> BusClient {
        if let existing = client.withLock({ $0 }) { return existing }
        // A chain runs as long as its steps' timeouts allow: no call timeout of the client's own.
        let options = BusClient.Options(reconnect: .init(initialDelay: .milliseconds(100), maxDelay: .seconds(1)))
        let made = try await BusClient.connect(to: path, clientName: "fleetsvc", options: options)
        client.withLock { $0 = made }
        return made
    }

    func close() { client.withLock { $0 }?.close() }
}
