import BusProtocol
import Foundation
import Shared

/// Saves `record: true` chains into the store service with `store.save` over a `BusClient`.
///
/// Recordings are saved one at a time, in the order chains finished, so that the first recording of a new
/// device inserts its `Device` and later ones update it (the object id is remembered per address, and looked
/// up with `store.fetch` by `address` the first time). The store being unreachable never fails a chain: the
/// chain's answer says `"recorded": false` with the reason, and the next recording connects again.
actor StoreRecorder {
    let socketPath: String
    private let callTimeout: Duration
    private var client: BusClient?
    private var deviceIDs: [String: ObjectID] = [:]
    private var tail: Task<Void, Never>?

    init(socketPath: String, callTimeout: Duration = .seconds(5)) {
        self.socketPath = socketPath
        self.callTimeout = callTimeout
    }

    /// Saves `recording` after the recordings before it.
    ///
    /// - Returns: `nil` when it was saved, else why not (one line).
    func record(_ recording: ChainRecording) async -> String? {
        let previous = tail
        let task = Task { () -> String? in
            await previous?.value
            return await self.save(recording)
        }
        tail = Task { _ = await task.value }
        return await task.value
    }

    /// Closes the connection to the store.
    func close() {
        client?.close()
        client = nil
    }

    private func save(_ recording: ChainRecording) async -> String? {
        do {
            let client = try await connectedClient()
            let address = recording.address.string
            var deviceID = deviceIDs[address]
            if deviceID == nil {
                let found = try await client.call(
                    StoreFetch.self,
                    FetchParams(
                        entity: "Device", predicate: "address == $address", arguments: ["address": .string(address)],
                        limit: 1, resultType: .ids), timeout: callTimeout)
                if case .ids(let ids) = found.content { deviceID = ids.first }
            }
            let result = try await client.call(
                StoreSave.self, recording.saveParams(existingDevice: deviceID), timeout: callTimeout)
            deviceIDs[address] = deviceID ?? result.ids["device"]
            return nil
        } catch {
            // Forget what may be stale: the device object (deleted?) and a connection that failed.
            deviceIDs[recording.address.string] = nil
            if !(error is RPCError) {
                client?.close()
                client = nil
            }
            return "\(error)"
        }
    }

    private func connectedClient() async throws -> BusClient {
        if let client, client.connectionState.isConnected { return client }
        client?.close()
        var options = BusClient.Options()
        options.connectTimeout = callTimeout
        let connected = try await BusClient.connect(to: socketPath, clientName: "devicesvc", options: options)
        client = connected
        return connected
    }
}
