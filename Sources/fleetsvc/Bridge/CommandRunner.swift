import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation

/// Runs the commands sent to this gateway (`--device`; docs/fleet.md, "Commands"), one at a time, on a thread of
/// its own: reads `ctxbus.<fleet>.<gateway>.commands` from the fleet's command stream (a work queue) through a
/// durable consumer, runs each `device.run` on the gateway's devicesvc and publishes the outcome on the command's
/// `reply` subject.
///
/// Idempotent by command id: before running, the runner records the id in the fleet's command bucket (a JetStream
/// key-value bucket, key `<gateway>.<id>`) only if it is not there yet, then acknowledges the message (JetStream
/// removes it from the queue), runs the chain and records its outcome under the id. A command whose id is there
/// already runs nothing and is answered with the recorded outcome (`repeated`). One whose run was cut short (the
/// bridge stopped mid-chain) is answered `409`: it ran, perhaps in part, and its result is unknown. A chain devicesvc
/// did not take (`503`: devicesvc or BlueZ away) ran nothing and is not remembered, so the same id may be sent again.
///
/// A message that is not a command is refused (logged, counted, acknowledged: removed from the queue); a chain
/// devicesvc refuses (`-32602`, a bad chain) is counted as refused and remembered as its outcome.
final class CommandRunner: Sendable {
    private let configuration: FleetServiceConfiguration
    private let jetStream: JetStream
    private let device: DeviceLink
    private let counters: FleetCounters
    private let log: ServiceLog
    private let stopping = AtomicFlag()
    private let stopped = DispatchSemaphore(value: 0)

    /// How long the bucket remembers a command (and the queue keeps one no gateway took).
    static let memory: Duration = .seconds(24 * 3600)

    init(
        configuration: FleetServiceConfiguration, jetStream: JetStream, device: DeviceLink, counters: FleetCounters,
        log: ServiceLog
    ) {
        self.configuration = configuration
        self.jetStream = jetStream
        self.device = device
        self.counters = counters
        self.log = log
    }

    func start() {
        let thread = Thread { [self] in
            run()
            stopped.signal()
        }
        thread.name = "fleetsvc.commands"
        thread.start()
    }

    /// Stops after the command running now (a chain is never cut short here).
    func stop() {
        guard stopping.setOnce() else { return }
        stopped.wait()
        device.close()
    }

    private func run() {
        var bucket: KeyValueBucket?
        var reader: StreamReader?
        var attempt = 0
        while !stopping.isSet {
            do {
                let currentBucket =
                    try bucket
                    ?? KeyValueBucket(
                        name: configuration.commandBucketName, ttl: Self.memory, replicas: configuration.replicas,
                        on: jetStream)
                bucket = currentBucket
                let currentReader =
                    try reader
                    ?? jetStream.queueReader(
                        of: configuration.commandSubject(of: configuration.gateway),
                        durable: "commands-\(configuration.gateway)")
                reader = currentReader
                attempt = 0
                for message in try currentReader.fetch(batch: 1, timeoutMilliseconds: 500) {
                    handle(message, bucket: currentBucket)
                }
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 100 == 0 { log.debug("commands: \(error)") }
                reader?.close()
                reader = nil
                CurrentThread.sleep(nanoseconds: Int64(250) * 1_000_000)
            }
        }
        reader?.close()
        bucket?.close()
    }

    private func handle(_ message: StreamMessage, bucket: KeyValueBucket) {
        let command: FleetCommand
        do {
            command = try FleetCommand(bytes: message.data)
        } catch {
            log.warning("commands: refused message \(message.sequence) on \(message.subject): \(error)")
            counters.update { $0.commandsRefused += 1 }
            acknowledge(message)
            return
        }
        let key = "\(configuration.gateway).\(command.id)"
        let taken: Bool
        do {
            taken = try bucket.create(key, value: Self.runningMarker)
        } catch {
            // Not acknowledged: JetStream delivers it again once the bucket answers.
            log.warning("commands: recording command \(command.id): \(error)")
            return
        }
        guard taken else {
            answerFromMemory(command, key: key, bucket: bucket)
            acknowledge(message)
            return
        }
        acknowledge(message)
        log.info("commands: running command \(command.id)\(command.from.map { " from \($0)" } ?? "")")
        let answer: Result<JSONValue, RPCError>
        do {
            answer = .success(try device.call("device.run", command.request))
        } catch {
            answer = .failure(error)
        }
        let outcome = CommandOutcome(id: command.id, gateway: configuration.gateway, answer: answer)
        if case .failure(let error) = answer, error.code == .unavailable {
            // devicesvc (or BlueZ) took nothing: the id is forgotten, so that it may be sent again.
            log.warning("commands: command \(command.id) did not run: \(error)")
            counters.update { $0.commandsRefused += 1 }
            try? bucket.delete(key)
        } else {
            if case .failure(let error) = answer, error.code == .invalidParams {
                log.warning("commands: command \(command.id) refused by devicesvc: \(error)")
                counters.update { $0.commandsRefused += 1 }
            } else {
                counters.update { $0.commandsRun += 1 }
            }
            do {
                try bucket.put(key, value: outcome.bytes)
            } catch {
                log.error("commands: remembering the outcome of command \(command.id): \(error)")
            }
        }
        reply(outcome, to: command)
    }

    /// Answers a command whose id was taken before with what is remembered of it.
    private func answerFromMemory(_ command: FleetCommand, key: String, bucket: KeyValueBucket) {
        counters.update { $0.commandsRepeated += 1 }
        var outcome: CommandOutcome
        if let remembered = try? bucket.value(of: key), var first = CommandOutcome(bytes: remembered) {
            first.isRepeated = true
            outcome = first
        } else {
            outcome = CommandOutcome(
                id: command.id, gateway: configuration.gateway,
                answer: .failure(
                    RPCError(
                        code: .conflict,
                        message: "command \(command.id) was taken before and its result is unknown (fleetsvc stopped "
                            + "while it ran)",
                        data: .object(["id": .string(command.id), "gateway": .string(configuration.gateway)]))),
                isRepeated: true)
        }
        log.info("commands: command \(command.id) was seen before: answered with its first outcome")
        reply(outcome, to: command)
    }

    /// What the bucket holds for a command from when it is taken until its outcome is known.
    private static let runningMarker = Array(#"{"v":1,"running":true}"#.utf8)

    private func reply(_ outcome: CommandOutcome, to command: FleetCommand) {
        guard let subject = command.reply else { return }
        do {
            try jetStream.publishCore(subject: subject, data: outcome.bytes)
        } catch {
            log.warning("commands: replying to command \(command.id): \(error)")
        }
    }

    private func acknowledge(_ message: StreamMessage) {
        do {
            try jetStream.acknowledge(message)
        } catch {
            log.warning("commands: acknowledging message \(message.sequence): \(error)")
        }
    }
}
