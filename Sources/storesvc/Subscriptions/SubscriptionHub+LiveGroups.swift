import ContextBusServer

extension SubscriptionHub {
    /// The live subscriptions that share one filter, in subscription order, prepared for `deliver`.
    struct LiveGroup: Sendable {
        struct Member: Sendable {
            let id: Int64
            let connection: any SubscriberConnection
            /// The subscription went live having handled every transaction up to this one.
            let start: Int64
        }

        let filter: SubscriptionFilter
        let members: [Member]
        /// The members on bus connections, grouped by loop, numbered with their subscription.
        let busRecipients: FrameFanOut.Recipients
        /// The members on other connections (test fakes).
        let others: [Member]
        /// The latest `start` of the members: every transaction after it goes to all of them.
        let latestStart: Int64

        init(filter: SubscriptionFilter, members: [Member]) {
            self.filter = filter
            self.members = members
            var recipients: [FrameFanOut.Recipient] = []
            var others: [Member] = []
            for member in members {
                if let connection = member.connection.busConnection {
                    recipients.append(FrameFanOut.Recipient(connection: connection, number: member.id))
                } else {
                    others.append(member)
                }
            }
            busRecipients = FrameFanOut.Recipients(recipients)
            self.others = others
            latestStart = members.map(\.start).max() ?? .min
        }

        var isEmpty: Bool { members.isEmpty }

        /// The group of the members that have not handled `txn` yet.
        func members(after txn: Int64) -> LiveGroup {
            LiveGroup(filter: filter, members: members.filter { txn > $0.start })
        }
    }
}

extension SubscriptionHub.State {
    /// The live subscriptions grouped by filter key, built once after each change to the subscriptions.
    ///
    /// A live subscription's `processedThrough` stays where its replay left it: `deliver` is called in `txn`
    /// order, so it serves exactly the transactions after that one, and nothing else reads it once live.
    mutating func currentLiveGroups() -> [SubscriptionHub.LiveGroup] {
        if let liveGroups { return liveGroups }
        var members: [SubscriptionFilter.Key: (SubscriptionFilter, [SubscriptionHub.LiveGroup.Member])] = [:]
        var order: [SubscriptionFilter.Key] = []
        for (id, record) in subscriptions.sorted(by: { $0.key < $1.key }) where record.phase == .live {
            let member = SubscriptionHub.LiveGroup.Member(
                id: id, connection: record.connection, start: record.processedThrough)
            if members[record.filter.key] == nil {
                order.append(record.filter.key)
                members[record.filter.key] = (record.filter, [member])
            } else {
                members[record.filter.key]?.1.append(member)
            }
        }
        let groups = order.compactMap { key in
            members[key].map { SubscriptionHub.LiveGroup(filter: $0.0, members: $0.1) }
        }
        liveGroups = groups
        return groups
    }
}
