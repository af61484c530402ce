/// Where a `PowerCutDisk` stops every write from reaching its files: the moment a test's power cut happens.
///
/// Written `PHASE:EVENT:N`, for example `after:wal-sync:12`: just after the 12th sync of the store's WAL made the
/// WAL's writes durable (before the sync returns, so before anyone is answered), or `before:database-write:40`: just
/// before the 40th write into the database file (a checkpoint copying pages). Events are counted from the moment the
/// disk is installed, the service's start included. Once frozen, every call into the disk blocks for good: the
/// test then kills the process and cuts the power (`PowerCut`).
package struct PowerCutFreezePoint: Sendable, Hashable, CustomStringConvertible {
    /// What the disk counts.
    package enum Event: String, Sendable, Hashable, CaseIterable {
        /// A write to the store's WAL (`<database>-wal`).
        case walWrite = "wal-write"
        /// A sync of the store's WAL: a durable commit's, or a checkpoint's before it copies.
        case walSync = "wal-sync"
        /// A write to the database file: in WAL mode, a checkpoint copying pages.
        case databaseWrite = "database-write"
        /// A sync of the database file: a checkpoint's, after it copied.
        case databaseSync = "database-sync"
        /// A write to any other file: a backup's copy and its rollback journal.
        case otherWrite = "other-write"
        /// A sync of any other file.
        case otherSync = "other-sync"
        /// A rename (a backup's copy to its name).
        case rename
        /// A sync of a directory (a new WAL's first sync, a backup after its rename).
        case directorySync = "directory-sync"
    }

    /// Whether the disk freezes before the event happens or just after.
    package enum Phase: String, Sendable, Hashable, CaseIterable {
        case before, after
    }

    package var phase: Phase
    package var event: Event
    /// Which occurrence of the event, from 1.
    package var count: Int

    package init(_ phase: Phase, _ event: Event, count: Int) {
        precondition(count >= 1, "a freeze point counts from 1")
        self.phase = phase
        self.event = event
        self.count = count
    }

    /// Reads `PHASE:EVENT:N`; `nil` when it is not one.
    package init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let phase = Phase(rawValue: String(parts[0])),
            let event = Event(rawValue: String(parts[1])), let count = Int(parts[2]), count >= 1
        else { return nil }
        self.init(phase, event, count: count)
    }

    package var description: String { "\(phase.rawValue):\(event.rawValue):\(count)" }
}
