/// Methods of the bus itself (`org.freedesktop.DBus`).
extension DBusConnection {
    /// Calls a method of the bus.
    func callBus(
        _ member: String, _ body: [DBusValue] = [], timeout: Duration = defaultTimeout
    ) async throws
        -> DBusMessage
    {
        try await call(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: member, body: body, timeout: timeout)
    }

    /// The names on the bus, unique and well-known (`ListNames`).
    package func listNames() async throws -> [String] {
        let reply = try await callBus("ListNames")
        guard let names = reply.body.first?.stringArrayValue, reply.bodySignature == "as" else {
            throw DBusConnectionError.unexpectedSignature(
                member: "ListNames", expected: "as", actual: reply.bodySignature)
        }
        return names
    }

    /// The unique name that owns `name` (`GetNameOwner`), or `nil` when nobody owns it.
    ///
    /// - Throws: `DBusError` for other failures (an invalid name), `DBusConnectionError` as for any call.
    func nameOwner(of name: String) async throws -> String? {
        do {
            let reply = try await callBus("GetNameOwner", [.string(name)])
            guard let owner = reply.body.first?.stringValue, reply.bodySignature == "s" else {
                throw DBusConnectionError.unexpectedSignature(
                    member: "GetNameOwner", expected: "s", actual: reply.bodySignature)
            }
            return owner
        } catch let error as DBusError where error.name == DBusError.nameHasNoOwner {
            return nil
        }
    }

    /// What `RequestName` answered.
    package enum NameRequestReply: UInt32, Sendable {
        case primaryOwner = 1
        case inQueue = 2
        case exists = 3
        case alreadyOwner = 4
    }

    /// Asks the bus for a well-known name (`RequestName`) with the given flags (4 = do not queue).
    package func requestName(_ name: String, flags: UInt32 = 4) async throws -> NameRequestReply {
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags)])
        guard let code = reply.body.first?.uint32Value, let answer = NameRequestReply(rawValue: code) else {
            throw DBusConnectionError.unexpectedSignature(
                member: "RequestName", expected: "u", actual: reply.bodySignature)
        }
        return answer
    }

    /// Gives up a well-known name (`ReleaseName`).
    func releaseName(_ name: String) async throws {
        _ = try await callBus("ReleaseName", [.string(name)])
    }

    /// Asks the bus to route messages matching `rule` to this connection (`AddMatch`).
    func addMatch(_ rule: DBusMatchRule) async throws {
        _ = try await callBus("AddMatch", [.string(rule.text)])
    }

    /// Undoes one `addMatch` of the same rule, without waiting for the bus's answer (`RemoveMatch`).
    func removeMatch(_ rule: DBusMatchRule) {
        var message = DBusMessage.methodCall(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: "RemoveMatch", body: [.string(rule.text)])
        message.flags.insert(.noReplyExpected)
        _ = try? send(message)
    }

    /// The rule for `NameOwnerChanged` of one name.
    static func nameOwnerChangedRule(for name: String) -> DBusMatchRule {
        var rule = DBusMatchRule.signal(
            sender: busName, interface: busName, member: "NameOwnerChanged", path: busPath)
        rule.arguments[0] = name
        return rule
    }
}
