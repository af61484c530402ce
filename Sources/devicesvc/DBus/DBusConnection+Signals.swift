import ContextBusSupport

/// Signal subscriptions and name-owner tracking.
extension DBusConnection {
    /// Delivers signals matching `rule` to `handler`, on the delivery queue, in arrival order.
    ///
    /// The handler is registered locally before `AddMatch` is sent, so a signal the bus routes to us before it
    /// answers `AddMatch` is not lost. When the rule's sender is a well-known name (`org.bluez`), the connection
    /// first starts tracking that name's owner, so signals (which carry the owner's unique name) match.
    ///
    /// - Returns: the subscription; `cancel()` it when done.
    /// - Throws: `DBusError` when the bus rejects the rule, `DBusConnectionError` as for any call.
    package func subscribe(
        to rule: DBusMatchRule, handler: @escaping @Sendable (DBusMessage) -> Void
    ) async throws
        -> DBusSubscription
    {
        if let name = rule.wellKnownSender { try await startTrackingOwner(of: name) }
        let token = state.withLock { state -> UInt64 in
            let token = state.makeToken()
            state.subscriptions[token] = Subscription(rule: rule, handler: handler)
            return token
        }
        do {
            try await addMatch(rule)
        } catch {
            if state.withLock({ $0.subscriptions.removeValue(forKey: token) }) != nil,
                let name = rule.wellKnownSender
            {
                stopTrackingOwner(of: name)
            }
            throw error
        }
        return DBusSubscription(connection: self, token: token, rule: rule)
    }

    /// Delivers signals matching `rule` as an async stream; ending the iteration cancels the subscription, and the
    /// stream finishes when the connection closes.
    package func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusMessage.self)
        let subscription = try await subscribe(to: rule) { message in continuation.yield(message) }
        let disconnectToken = onDisconnect { _ in continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            subscription.cancel()
            self?.removeDisconnectHandler(disconnectToken)
        }
        return stream
    }

    /// Calls `handler` on the delivery queue each time the owner of `name` changes (`nil`: no owner).
    ///
    /// - Returns: the observation, whose `initialOwner` is the owner when observation began.
    func observeOwner(
        of name: String, handler: @escaping @Sendable (String?) -> Void
    ) async throws
        -> DBusOwnerObservation
    {
        try await startTrackingOwner(of: name)
        let registered = state.withLock { state -> (UInt64, String?)? in
            guard state.ownerTracks[name] != nil else { return nil }
            let token = state.makeToken()
            state.ownerTracks[name]?.observers[token] = handler
            return (token, state.ownerTracks[name]?.owner)
        }
        guard let (token, owner) = registered else {
            throw state.withLock { $0.closeReason } ?? .disconnected(reason: "closed while observing \(name)")
        }
        return DBusOwnerObservation(connection: self, name: name, token: token, initialOwner: owner)
    }

    /// The owner of a tracked name as last seen on this connection (`nil` when untracked or unowned).
    package func trackedOwner(of name: String) -> String? {
        state.withLock { $0.ownerTracks[name]?.owner }
    }

    // MARK: - Internals

    func removeSubscription(token: UInt64) {
        guard let subscription = state.withLock({ $0.subscriptions.removeValue(forKey: token) }) else { return }
        removeMatch(subscription.rule)
        if let name = subscription.rule.wellKnownSender { stopTrackingOwner(of: name) }
    }

    func removeOwnerObserver(name: String, token: UInt64) {
        let removed = state.withLock { $0.ownerTracks[name]?.observers.removeValue(forKey: token) != nil }
        if removed { stopTrackingOwner(of: name) }
    }

    /// Adds one user of the name's owner track: a `NameOwnerChanged` match and a `GetNameOwner` seed.
    ///
    /// Both the seed reply and the signals are applied on the reader thread in arrival order, so the owner is
    /// current for every signal read after them: a reply newer than a signal overrides it, and a later signal
    /// overrides the reply.
    private func startTrackingOwner(of name: String) async throws {
        let closeReason = state.withLock { state -> DBusConnectionError? in
            if let reason = state.closeReason { return reason }
            state.ownerTracks[name, default: OwnerTrack()].users += 1
            return nil
        }
        if let closeReason { throw closeReason }
        do {
            try await addMatch(DBusConnection.nameOwnerChangedRule(for: name))
        } catch {
            releaseOwnerTrack(of: name)
            throw error
        }
        do {
            try await seedOwner(of: name)
        } catch {
            stopTrackingOwner(of: name)
            throw error
        }
    }

    private func seedOwner(of name: String) async throws {
        let message = DBusMessage.methodCall(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: "GetNameOwner", body: [.string(name)])
        try await withLockedThrowingContinuation { (continuation: LockedContinuation<Void, any Error>) in
            _ = startCall(message, timeout: DBusConnection.defaultTimeout, completesOnReader: true) { [weak self] in
                switch $0 {
                case .success(let reply):
                    self?.updateOwner(of: name, to: reply.body.first?.stringValue)
                    continuation.resume()
                case .failure(let error as DBusError) where error.name == DBusError.nameHasNoOwner:
                    self?.updateOwner(of: name, to: nil)
                    continuation.resume()
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private func stopTrackingOwner(of name: String) {
        removeMatch(DBusConnection.nameOwnerChangedRule(for: name))
        releaseOwnerTrack(of: name)
    }

    private func releaseOwnerTrack(of name: String) {
        state.withLock { state in
            guard var track = state.ownerTracks[name] else { return }
            track.users -= 1
            state.ownerTracks[name] = track.users > 0 ? track : nil
        }
    }

    /// Records a new owner of a tracked name and notifies its observers; runs on the reader thread.
    private func updateOwner(of name: String, to owner: String?) {
        let owner = owner?.isEmpty == true ? nil : owner
        let observers = state.withLock { state -> [@Sendable (String?) -> Void] in
            guard var track = state.ownerTracks[name], track.owner != owner else { return [] }
            track.owner = owner
            state.ownerTracks[name] = track
            return track.observers.sorted { $0.key < $1.key }.map(\.value)
        }
        guard !observers.isEmpty else { return }
        deliveryQueue.async {
            for observer in observers { observer(owner) }
        }
    }

    /// Updates owner tracks and hands the signal to every matching subscriber; runs on the reader thread.
    func dispatchSignal(_ message: DBusMessage) {
        if message.sender == DBusConnection.busName, message.interface == DBusConnection.busName,
            message.member == "NameOwnerChanged", message.body.count == 3,
            case .string(let name) = message.body[0], case .string(let newOwner) = message.body[2]
        {
            updateOwner(of: name, to: newOwner)
        }
        let handlers = state.withLock { state -> [@Sendable (DBusMessage) -> Void] in
            state.subscriptions.sorted { $0.key < $1.key }.compactMap { _, subscription in
                let owner = subscription.rule.wellKnownSender.flatMap { state.ownerTracks[$0]?.owner }
                return subscription.rule.matches(message, senderOwner: owner) ? subscription.handler : nil
            }
        }
        guard !handlers.isEmpty else { return }
        deliveryQueue.async {
            for handler in handlers { handler(message) }
        }
    }
}
