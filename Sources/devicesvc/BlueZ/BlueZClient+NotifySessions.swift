import ContextBusDBus
import ContextBusReactive
import ContextBusSupport

/// The notify sessions this process holds: one BlueZ session per characteristic, shared by every user.
///
/// BlueZ keeps one notify session per D-Bus client and characteristic, and devicesvc is one client: a chain's notify
/// step and a watch on the same characteristic share it. The first user's `StartNotify` enables it, the others wait
/// for its reply (or get it at once), and the last user's release sends `StopNotify`, so that a chain ending its
/// notify step does not turn off a watch's notifications. BlueZ forgets every session when it leaves the bus: the
/// table is emptied then, and releases of the sessions it held send nothing.
struct NotifySessionTable: Sendable {
    struct Session: Sendable {
        /// Tells `entry` apart from a later session of the same characteristic.
        var entry: UInt64
        var users: [UInt64: @Sendable (DeviceError?) -> Void] = [:]
        /// `nil` while the `StartNotify` is on its way; then whether it succeeded.
        var isStarted: Bool?
    }

    var sessions: [DBusObjectPath: Session] = [:]
    var nextToken: UInt64 = 1
}

extension BlueZClient {
    /// Holds the notify session of the characteristic at `path` for one user until the returned disposable is
    /// disposed.
    ///
    /// - Parameters:
    ///   - callTimeout: The `StartNotify` call's timeout, when this user's acquiring sends it.
    ///   - ready: Called once (on the delivery queue, or at once when the session is already enabled) with `nil` when
    ///     the session is enabled, or with the `StartNotify` error; after an error the user holds nothing.
    func holdNotifySession(
        at path: DBusObjectPath, callTimeout: Duration, ready: @escaping @Sendable (DeviceError?) -> Void
    ) -> any Disposable {
        let (token, entry, action) = state.withLock { state -> (UInt64, UInt64, NotifyAcquisition) in
            let token = state.notifySessions.nextToken
            state.notifySessions.nextToken += 1
            if var session = state.notifySessions.sessions[path] {
                session.users[token] = ready
                state.notifySessions.sessions[path] = session
                return (token, session.entry, session.isStarted == true ? .readyNow : .wait)
            }
            state.notifySessions.sessions[path] = NotifySessionTable.Session(entry: token, users: [token: ready])
            return (token, token, .start)
        }
        switch action {
        case .readyNow: ready(nil)
        case .wait: break
        case .start:
            let message = DBusMessage.methodCall(
                destination: BlueZ.serviceName, path: path, interface: BlueZ.characteristicInterface,
                member: "StartNotify")
            _ = connection.call(message, timeout: callTimeout) { [weak self] result in
                self?.notifySessionStarted(at: path, entry: entry, result: result)
            }
        }
        return AnyDisposable { [weak self] in self?.releaseNotifySession(at: path, entry: entry, token: token) }
    }

    private enum NotifyAcquisition {
        case readyNow, wait, start
    }

    private func notifySessionStarted(at path: DBusObjectPath, entry: UInt64, result: Result<DBusMessage, any Error>) {
        var error: DeviceError?
        if case .failure(let failure) = result { error = DeviceError(callError: failure) }
        let users = state.withLock { state -> [@Sendable (DeviceError?) -> Void] in
            guard var session = state.notifySessions.sessions[path], session.entry == entry else { return [] }
            let users = session.users.sorted { $0.key < $1.key }.map(\.value)
            if error == nil {
                session.isStarted = true
                state.notifySessions.sessions[path] = session
            } else {
                // A failed StartNotify leaves no session: its users hold nothing, the next user starts over.
                state.notifySessions.sessions[path] = nil
            }
            return users
        }
        for user in users { user(error) }
    }

    private func releaseNotifySession(at path: DBusObjectPath, entry: UInt64, token: UInt64) {
        let stop = state.withLock { state -> Bool in
            guard var session = state.notifySessions.sessions[path], session.entry == entry,
                session.users.removeValue(forKey: token) != nil
            else { return false }
            if !session.users.isEmpty {
                state.notifySessions.sessions[path] = session
                return false
            }
            state.notifySessions.sessions[path] = nil
            return true
        }
        guard stop else { return }
        // Not awaited, but on the wire before any later call of this connection.
        var message = DBusMessage.methodCall(
            destination: BlueZ.serviceName, path: path, interface: BlueZ.characteristicInterface, member: "StopNotify")
        message.flags.insert(.noReplyExpected)
        _ = try? connection.send(message)
    }

    /// How many notify sessions are held now (for tests and statistics).
    var notifySessionCount: Int { state.withLock { $0.notifySessions.sessions.count } }
}
