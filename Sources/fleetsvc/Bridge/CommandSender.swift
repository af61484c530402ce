import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// Sends a command to a gateway and waits for its outcome (`fleet.run`; docs/fleet.md, "Commands"): publishes it
/// into the fleet's command stream on `ctxbus.<fleet>.<gateway>.commands`, with a reply subject of its own, and
/// waits for the gateway's `CommandOutcome` there.
///
/// The command stays in the queue until the gateway takes it: a gateway that is down, or runs no `--device`,
/// answers later or never, and the sender gives up after `timeoutMs` (`408`, naming the id: sending the command
/// again with that id answers its first outcome once it ran). The NATS message ID is the command id and a nonce of
/// this sending, so that JetStream drops a publication repeated after a lost ack but not a later sending of the
/// same id.
///
/// Every call blocks: `send` runs on the bridge's own queue (`FleetService`), never on the cooperative pool.
final class CommandSender: Sendable {
    private let configuration: FleetServiceConfiguration
    private let jetStream: JetStream
    private let log: ServiceLog

    init(configuration: FleetServiceConfiguration, jetStream: JetStream, log: ServiceLog) {
        self.configuration = configuration
        self.jetStream = jetStream
        self.log = log
    }

    func send(_ params: FleetRunParams) throws(RPCError) -> FleetRunResult {
        let id = params.id ?? "\(configuration.gateway)-\(Self.nonce())"
        let deadline = ContinuousClock.now + .milliseconds(params.timeoutMs)
        let replies: JetStreamSubscription
        let inbox: String
        do {
            inbox = try jetStream.newInbox()
            replies = try jetStream.subscribeCore(subject: inbox)
        } catch {
            throw .unavailable("NATS: \(error)")
        }
        defer { replies.close() }
        let command = FleetCommand(id: id, from: configuration.gateway, reply: inbox, request: params.request.json)
        do {
            _ = try jetStream.publish(
                subject: configuration.commandSubject(of: params.gateway), data: command.bytes,
                messageID: "\(id):\(Self.nonce())", stream: configuration.commandStreamName,
                timeoutMilliseconds: min(Int64(params.timeoutMs), 5_000))
        } catch {
            throw .unavailable("the command could not be queued for gateway \(params.gateway): \(error)")
        }
        log.info("commands: sent command \(id) to gateway \(params.gateway)")
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let milliseconds = max(1, Int64((left / .milliseconds(1)).rounded(.up)))
            let message: StreamMessage?
            do {
                message = try replies.next(timeoutMilliseconds: milliseconds)
            } catch {
                throw .unavailable("NATS: \(error)")
            }
            guard let message else { break }
            guard let outcome = CommandOutcome(bytes: message.data), outcome.id == id else { continue }
            return try result(of: outcome)
        }
        throw RPCError(
            code: .timeout,
            message: "no reply from gateway \(params.gateway) within \(params.timeoutMs) ms; the command stays queued "
                + "until it runs there (send it again with id \(id) for its outcome)",
            data: .object(["id": .string(id), "gateway": .string(params.gateway)]))
    }

    private func result(of outcome: CommandOutcome) throws(RPCError) -> FleetRunResult {
        switch outcome.answer {
        case .success(let json):
            do {
                return FleetRunResult(
                    id: outcome.id, gateway: outcome.gateway, result: try RecordedRunResult(json: json),
                    isRepeated: outcome.isRepeated)
            } catch {
                throw .internalError("gateway \(outcome.gateway) answered command \(outcome.id) with \(error)")
            }
        case .failure(var error):
            // The chain's own error, as devicesvc answered it there, with the command's id and gateway in `data`.
            var data = error.data?.objectValue ?? [:]
            data["id"] = .string(outcome.id)
            data["gateway"] = .string(outcome.gateway)
            if outcome.isRepeated { data["repeated"] = .bool(true) }
            error.data = .object(data)
            error.message = "gateway \(outcome.gateway): \(error.message)"
            throw error
        }
    }

    /// 16 random hex digits.
    private static func nonce() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
