// Calls made while the client reconnects, under `CallsWhileReconnecting.wait`: held in the order they were made,
// sent on the new connection before any call made after it is up, and failed when their timeout passes, when they
// are cancelled, when the client gives up or when it is closed. A held call has not been sent, so failing it leaves
// nothing behind on the service.

import ContextBusSupport
import ContextBusTransport

extension BusClient {
    /// A call waiting for the connection to come back.
    final class HeldCall: Sendable {
        let method: String
        let params: JSONValue?
        /// The call's timeout, counted from when it was made.
        let timeout: Duration?
        private let madeAt = ContinuousClock.now
        private let completion: @Sendable (Result<JSONValue, any Error>) -> Void
        private let progress = Locked(Progress.held(timeoutTimer: nil))

        private enum Progress {
            case held(timeoutTimer: ScheduledWork?)
            /// Being sent; a cancellation that comes now is carried out once the call has its token.
            case sending(isCancelled: Bool)
            case sent(CallToken)
            case finished
        }

        init(
            method: String, params: JSONValue?, timeout: Duration?,
            completion: @escaping @Sendable (Result<JSONValue, any Error>) -> Void
        ) {
            self.method = method
            self.params = params
            self.timeout = timeout
            self.completion = completion
        }

        /// Keeps `timer` (the call's timeout) to cancel when the call is sent; cancels it at once if the call has
        /// already left the queue.
        func setTimeoutTimer(_ timer: ScheduledWork) {
            let isHeld = progress.withLock { progress -> Bool in
                guard case .held = progress else { return false }
                progress = .held(timeoutTimer: timer)
                return true
            }
            if !isHeld { timer.cancel() }
        }

        /// Fails the call with `error` if it is still held (not sent, not finished).
        func fail(_ error: any Error) {
            let timer = progress.withLock { progress -> ScheduledWork?? in
                guard case .held(let timer) = progress else { return nil }
                progress = .finished
                return .some(timer)
            }
            guard let timer else { return }
            timer?.cancel()
            completion(.failure(error))
        }

        /// Fails the call with `CancellationError` if it is held; cancels it on the service if it was sent.
        func cancel() {
            enum Action { case nothing, fail, cancelSent(CallToken) }
            let action = progress.withLock { progress -> Action in
                switch progress {
                case .held: return .fail
                case .sending: progress = .sending(isCancelled: true)
                case .sent(let token): return .cancelSent(token)
                case .finished: break
                }
                return .nothing
            }
            switch action {
            case .nothing: break
            case .fail: fail(CancellationError())
            case .cancelSent(let token): token.cancel()
            }
        }

        /// Sends the call on `session` with what is left of its timeout, if it is still held. The lock is not
        /// held while sending: the completion may run at once, and cancel the call from there.
        func send(on session: ClientSession, by client: BusClient) {
            let timer = progress.withLock { progress -> ScheduledWork?? in
                guard case .held(let timer) = progress else { return nil }
                progress = .sending(isCancelled: false)
                return .some(timer)
            }
            guard let timer else { return }
            timer?.cancel()
            let remaining = timeout.map { $0 - (ContinuousClock.now - madeAt) }
            if let timeout, let remaining, remaining <= .zero {
                progress.withLock { $0 = .finished }
                completion(.failure(BusClientError.timedOut(method: method, after: timeout)))
                return
            }
            let token = client.send(
                method: method, params: params, timeout: remaining, on: session, completion: completion)
            let isCancelled = progress.withLock { progress -> Bool in
                guard case .sending(let isCancelled) = progress else { return false }
                progress = .sent(token)
                return isCancelled
            }
            if isCancelled { token.cancel() }
        }
    }

    /// Fails `call` with `.timedOut` when its timeout passes while it is held, and takes it out of the queue
    /// (a long outage must not collect the calls that timed out).
    func scheduleTimeout(of call: HeldCall) {
        guard let timeout = call.timeout else { return }
        let timer = loop.schedule(after: timeout) { [weak self] in
            self?.removeHeld(call)
            call.fail(BusClientError.timedOut(method: call.method, after: timeout))
        }
        call.setTimeoutTimer(timer)
    }

    /// Cancels a held call, taking it out of the queue.
    func cancelHeld(_ call: HeldCall) {
        removeHeld(call)
        call.cancel()
    }

    private func removeHeld(_ call: HeldCall) {
        state.withLock { state in state.heldCalls.removeAll { $0 === call } }
    }
}
