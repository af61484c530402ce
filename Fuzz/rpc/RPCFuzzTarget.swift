import ContextBusObjectGraph
import ContextBusSupport
import ContextBusTransport
import ContextBusWire

// Fuzz target `rpc`: a frame's payload classified as a message, then read as typed params.
//
// Properties:
// - `IncomingMessage(payload:from:)` never crashes; a payload that is not JSON is `-32700`
//   with `id: null` and the parser's offset, any other invalid message `-32600`; a client
//   never sends a valid response, a server never a valid request with an id;
// - a valid message's `json`, and the bytes its `write(into:writer:)` produces, classify
//   back to the same message;
// - for a request, `params(for:)` of every method either succeeds or throws an `RPCError`
//   with code `-32602` whose `data.field` (when present) is a string; a success reads its
//   own `json` back to an equal value. The same holds for results and event payloads read
//   from the message's `result` and `params`, and for the whole object read as params.

@_cdecl("LLVMFuzzerTestOneInput")
public func rpcFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let payload = fuzzBytes(data, size)
    let parsed: JSONValue?
    do {
        parsed = try JSONParser().parse(payload)
    } catch {
        parsed = nil
        for sender in [IncomingMessage.Sender.client, .server] {
            let message = IncomingMessage(payload: payload, from: sender)
            let expected = RPCResponse(id: nil, error: .parseError(error))
            fuzzCheck(message == .invalid(expected), "unparsable payload gave \(message), expected \(expected)")
        }
    }
    guard let parsed else { return 0 }

    for sender in [IncomingMessage.Sender.client, .server] {
        let message = IncomingMessage(payload: payload, from: sender)
        fuzzCheck(message == IncomingMessage(json: parsed, from: sender), "payload and JSON classify differently")
        checkEnvelope(message, from: sender)
    }

    // The typed readers see every shape the fuzzer finds, not only well-formed envelopes.
    readAsEveryType(parsed)
    if let params = parsed["params"] { readAsEveryType(params) }
    if let result = parsed["result"] { readAsEveryType(result) }
    return 0
}

private func checkEnvelope(_ message: IncomingMessage, from sender: IncomingMessage.Sender) {
    switch message {
    case .invalid(let response):
        fuzzCheck(response.error?.code == .invalidRequest, "invalid JSON message answered with \(response)")
    case .request(let request):
        fuzzCheck(sender == .client || request.id == nil, "a server's request with an id was accepted")
        fuzzCheck(request.params == nil || request.params?.objectValue != nil, "non-object params were accepted")
        checkRoundTrip(request, message, from: sender)
        if sender == .client {
            readParamsOfEveryMethod(request)
        } else if let event = message.event {
            readEventPayloads(event)
        }
    case .response(let response):
        fuzzCheck(sender == .server, "a client's response was accepted")
        checkRoundTrip(response, message, from: sender)
        if let error = response.error {
            fuzzCheck(RPCError(json: error.json) == error, "an error object does not read back its own json")
        }
    }
}

/// The message's JSON form and its written bytes classify back to the same message.
private func checkRoundTrip(_ value: some RPCMessage, _ message: IncomingMessage, from sender: IncomingMessage.Sender) {
    fuzzCheck(IncomingMessage(json: value.json, from: sender) == message, "\(message) does not survive its json")
    do {
        let bytes = try value.jsonBytes()
        fuzzCheck(try JSONParser().parse(bytes) == value.json, "written bytes differ from json for \(message)")
        fuzzCheck(IncomingMessage(payload: bytes, from: sender) == message, "\(message) does not survive its bytes")
    } catch {
        fuzzCheck(false, "a received message cannot be written back: \(error)")
    }
}

private func readParamsOfEveryMethod(_ request: RPCRequest) {
    func read<M: RPCMethod>(_ method: M.Type) where M.Params: Equatable {
        do {
            let params = try request.params(for: method, model: fuzzModel)
            checkReadsBack(params, as: M.Params.self)
        } catch {
            checkInvalidParams(error, reading: "\(M.name) params")
        }
    }
    read(BusHello.self)
    read(BusPing.self)
    read(BusCancel.self)
    read(StoreModel.self)
    read(StoreFetch.self)
    read(StoreGet.self)
    read(StoreSave.self)
    read(StoreSubscribe.self)
    read(StoreUnsubscribe.self)
    read(StoreHistory.self)
    read(StoreStats.self)
    read(DeviceAdapters.self)
    read(DeviceList.self)
    read(DeviceScan.self)
    read(DeviceRun.self)
    read(DeviceCancel.self)
    read(DeviceSubscribe.self)
    read(DeviceStats.self)
    read(BusMetrics.self)
    read(StoreBackup.self)
}

private func readEventPayloads(_ event: RPCEvent) {
    func read<Payload: RPCEventPayload & Equatable>(_ type: Payload.Type) {
        do {
            checkReadsBack(try event.payload(as: type), as: type)
        } catch {
            checkInvalidParams(error, reading: "\(Payload.method) event")
        }
    }
    read(OverflowEvent.self)
    read(ChangedEvent.self)
    read(StepEvent.self)
    read(DeviceEvent.self)
}

/// Reads `json` as every params, result and event type of the protocol.
private func readAsEveryType(_ json: JSONValue) {
    func read<T: WireValue & Equatable>(_ type: T.Type) {
        do {
            checkReadsBack(try T(json: json, model: fuzzModel), as: type)
        } catch {
            checkInvalidParams(error, reading: "\(T.self)")
        }
    }
    read(EmptyObject.self)
    read(HelloParams.self)
    read(HelloResult.self)
    read(CancelParams.self)
    read(OverflowEvent.self)
    read(ModelResult.self)
    read(StoreObject.self)
    read(FetchParams.self)
    read(StoreFetchResult.self)
    read(GetParams.self)
    read(StoreObjectsResult.self)
    read(SaveRequest.self)
    read(SaveResult.self)
    read(ChangeSet.self)
    read(ObjectSnapshot.self)
    read(SaveConflict.self)
    read(ValidationIssue.self)
    read(SubscribeParams.self)
    read(SubscribeResult.self)
    read(UnsubscribeParams.self)
    read(ChangedEvent.self)
    read(HistoryParams.self)
    read(HistoryTransaction.self)
    read(HistoryResult.self)
    read(StatsResult.self)
    read(AdaptersResult.self)
    read(ListParams.self)
    read(ScanParams.self)
    read(DevicesResult.self)
    read(RunParams.self)
    read(RunResult.self)
    read(RecordedRunResult.self)
    read(ChainReference.self)
    read(StepEvent.self)
    read(StepResult.self)
    read(ChainFailure.self)
    read(DeviceSubscribeParams.self)
    read(DeviceSubscribeResult.self)
    read(DeviceEvent.self)
    read(DeviceStatsResult.self)
    read(MetricsResult.self)
    read(BackupParams.self)
    read(BackupResult.self)
}

/// A value that was read reads its own wire form back to an equal value.
/// The model values that need one are read with: the default model.
private let fuzzModel = Model.deviceReadings

private func checkReadsBack<T: WireValue & Equatable>(_ value: T, as type: T.Type) {
    do {
        let again = try T(json: value.json, model: fuzzModel)
        fuzzCheck(again == value, "\(T.self) changed when read back from its json: \(value) became \(again)")
    } catch {
        fuzzCheck(false, "\(T.self) does not read back its own json \(value.json): \(error)")
    }
}

/// Every failure to read params is `-32602`, with `data.field` a string when there is data.
private func checkInvalidParams(_ error: RPCError, reading what: String) {
    fuzzCheck(error.code == .invalidParams, "reading \(what) failed with code \(error.code.rawValue): \(error)")
    if let data = error.data {
        fuzzCheck(data["field"]?.stringValue != nil, "reading \(what) failed with data \(data) but no field")
    }
    fuzzCheck(error.message.hasPrefix("invalid params"), "reading \(what) failed with message \(error.message)")
}
