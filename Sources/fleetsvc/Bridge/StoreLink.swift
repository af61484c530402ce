import ContextBusClient
import ContextBusServer
import ContextBusSupport
import Dispatch

/// fleetsvc's client of its gateway's storesvc: blocking calls for the bridge's own threads, over one `BusClient`
/// that reconnects by itself (a call made while storesvc is away fails; the bridge retries it).
final class StoreLink: Sendable {
    let client: BusClient
    let model: Model

    private init(client: BusClient, model: Model) {
        self.client = client
        self.model = model
    }

    /// Connects (retrying until storesvc answers) and reads the model.
    static func connect(path: String, log: ServiceLog) async -> StoreLink {
        var options = BusClient.Options(reconnect: .init(initialDelay: .milliseconds(100), maxDelay: .seconds(1)))
        options.callTimeout = .seconds(30)
        var warned = false
        while true {
            do {
                let client = try await BusClient.connect(to: path, clientName: "fleetsvc", options: options)
                let model = try await client.call(StoreModel.self).model
                return StoreLink(client: client, model: model)
            } catch {
                if !warned { log.warning("waiting for storesvc at \(path): \(error)") }
                warned = true
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// Calls `method` and blocks the calling thread (a bridge thread, never the pool's) until the answer.
    func call(_ method: String, _ params: JSONValue) throws -> JSONValue {
        let outcome = Locked<Result<JSONValue, any Error>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let client = self.client
        Task {
            let result: Result<JSONValue, any Error>
            do {
                result = .success(try await client.call(method: method, params: params))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        return try outcome.withLock { $0! }.get()
    }
}
