import ContextBusObjectGraph
import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Foundation

/// `bench wire`: encoding and decoding a `store.get` request and its ~200-byte response with the
/// BusProtocol codec (typed params/result ⇄ JSONValue ⇄ bytes) against Foundation's
/// `JSONEncoder`/`JSONDecoder` on Codable mirrors of the same shapes.
enum WireBenchmark {
    static func run() throws {
        let ids = [ObjectID(entity: "Reading", number: 12), ObjectID(entity: "Reading", number: 99)]
        let request = RPCRequest(id: 1234, StoreGet.self, params: GetParams(ids: ids))
        let model = Model.deviceReadings
        let result = StoreObjectsResult(
            txn: 98765,
            objects: [
                try ObjectSnapshot(
                    json: .object([
                        "id": .string(ids[0].description), "version": .int(3),
                        "values": .object([
                            "characteristic": .string("2a19"), "value": .string("ZA=="),
                            "time": .string("2026-01-02T03:04:05.678Z"), "chain": .string("c-17"),
                            "device": .string("Device/1"),
                        ]),
                    ]), model: model)
            ], missing: [ids[1]])
        let response = RPCResponse(id: 1234, result: result)

        let requestPayload = try request.jsonBytes()
        let responsePayload = try response.jsonBytes()
        let mirrorRequest = MirrorRequest(
            id: 1234, method: "store.get", params: MirrorGetParams(ids: ids.map(\.description)))
        let mirrorResponse = try JSONDecoder().decode(MirrorResponse.self, from: Data(responsePayload))
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let frameEncoder = FrameEncoder()
        var sink = 0

        print("wire: store.get request (\(requestPayload.count) bytes) and response (\(responsePayload.count) bytes)")
        let rows: [(String, () throws -> Int, () throws -> Int)] = [
            (
                "encode request",
                { try request.encodeFrame(encoder: frameEncoder).count },
                { try encoder.encode(mirrorRequest).count }
            ),
            (
                "decode request",
                {
                    guard case .request(let r) = IncomingMessage(payload: requestPayload) else { return 0 }
                    return try r.params(for: StoreGet.self).ids.count
                },
                { try decoder.decode(MirrorRequest.self, from: Data(requestPayload)).params.ids.count }
            ),
            (
                "encode response",
                { try RPCResponse(id: 1234, result: result).encodeFrame(encoder: frameEncoder).count },
                { try encoder.encode(mirrorResponse).count }
            ),
            (
                "decode response",
                {
                    let message = IncomingMessage(payload: responsePayload, from: .server)
                    return try message.response?.result(for: StoreGet.self, model: model).objects.count ?? 0
                },
                { try decoder.decode(MirrorResponse.self, from: Data(responsePayload)).result.objects.count }
            ),
        ]
        print("operation         ours µs   Foundation µs   speed-up")
        var totalOurs = 0.0
        var totalFoundation = 0.0
        for (name, ours, foundation) in rows {
            let oursTime = try measure(ours, sink: &sink)
            let foundationTime = try measure(foundation, sink: &sink)
            totalOurs += oursTime
            totalFoundation += foundationTime
            print(row(name, oursTime, foundationTime))
        }
        print(row("round trip (all)", totalOurs, totalFoundation))
        print(
            "messages/s, round trip of request + response: ours \(Int(1e6 / totalOurs)), Foundation \(Int(1e6 / totalFoundation))"
        )
        if sink == 42 { print("") }  // keeps the results alive
    }

    private static func row(_ name: String, _ ours: Double, _ foundation: Double) -> String {
        name.padding(toLength: 16, withPad: " ", startingAt: 0)
            + String(format: "%8.2f  %14.2f  %8.1fx", ours, foundation, foundation / ours)
    }

    /// Microseconds per call: the median of 7 runs of as many calls as fill ~40 ms.
    private static func measure(_ body: () throws -> Int, sink: inout Int) throws -> Double {
        for _ in 0..<200 { sink &+= try body() }
        var calls = 1
        while true {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<calls { sink &+= try body() }
            if DispatchTime.now().uptimeNanoseconds - start > 40_000_000 { break }
            calls *= 2
        }
        var samples: [Double] = []
        for _ in 0..<7 {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<calls { sink &+= try body() }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000 / Double(calls))
        }
        return samples.sorted()[samples.count / 2]
    }
}

private struct MirrorGetParams: Codable {
    var ids: [String]
}

private struct MirrorRequest: Codable {
    var jsonrpc = "2.0"
    var id: Int64
    var method: String
    var params: MirrorGetParams
}

private struct MirrorObject: Codable {
    var id: String
    var version: Int64
    var values: [String: JSONValue]
}

private struct MirrorGetResult: Codable {
    var txn: Int64
    var objects: [MirrorObject]
    var missing: [String]
}

private struct MirrorResponse: Codable {
    var jsonrpc = "2.0"
    var id: Int64
    var result: MirrorGetResult
}
