import ContextBusSupport
import Dispatch
import Foundation

/// A simulated disk for power-cut tests: it remembers every change to its files that no sync has made durable yet,
/// so that after the process is killed a `PowerCut` can drop any of them, as a machine losing power would.
///
/// The files always hold their latest content, so every connection of the process reads them as usual. Beside
/// them, in the disk's own directory, the disk keeps:
///
/// - per file with unsynced changes, a journal (`PowerCutJournal`): the file's size when last synced, what it held
///   where the changes since went, and the changes in order. A sync of the file (`fsync`, `fdatasync`) empties it.
///   A sync does not reach the real disk: the machine does not really lose power, and `kill -9` leaves the page
///   cache (the files and their journals) as it was.
/// - the directory changes not yet made durable by a sync of their directory (`PowerCutState`): files created,
///   deleted (moved into the disk's directory so that a cut can bring them back) and renamed.
///
/// ```
///   SQLite ── WALWriteGathering (the writer's connection) ──┐
///   SQLite (checkpointer, readers, backups) ────────────────┴─▶ PowerCutVFS ──▶ unix VFS ──▶ files
///                                                                  │ every write, truncation, sync,
///                                                                  ▼ creation, deletion, rename
///                                                             PowerCutDisk ──▶ journals + state (its directory)
/// ```
///
/// A `freezePoint` stops the disk at a chosen moment (the moment of the cut): the call that reaches it, and every
/// later call into the disk from any thread, blocks for good, and the disk writes a file named `frozen` into its
/// directory for the test to see. Nothing written after that moment reaches a file. storesvc runs on such a disk
/// with the hidden `--test-power-cut` flags; see `docs/testing.md`, "Power cuts".
package final class PowerCutDisk: Sendable {
    /// The directory holding the journals, the state and the copies of deleted files.
    package let directory: String
    /// The store's database; its WAL is `databasePath + "-wal"` (they are counted apart for freeze points).
    package let databasePath: String
    package let freezePoint: PowerCutFreezePoint?
    /// `databasePath` with its symbolic links resolved, as SQLite names the file.
    private let resolvedDatabasePath: String
    private let storage = Locked(Storage())
    private let frozen = AtomicFlag()

    /// The name of the file the disk writes into its directory when it freezes (it holds the freeze point).
    package static let frozenMarker = "frozen"

    /// What a file is to the store, for freeze points.
    enum Role {
        case database, wal, other
    }

    private struct Storage {
        var state = PowerCutState()
        var journals: [String: OpenJournal] = [:]
        var counts: [PowerCutFreezePoint.Event: Int] = [:]
        var nextNumber = 1
    }

    /// The journal of one file with unsynced changes.
    private struct OpenJournal {
        var name: String
        var handle: FileHandle
        /// Whether the journal has its `base` record (since the last sync).
        var hasBase = false
        /// The file's size when last synced.
        var durableSize: Int64 = 0
        /// The bytes whose content when last synced the journal holds (or that were past the file's end then).
        var captured = ByteRanges()
    }

    /// Makes a disk whose journals go into `directory` (created if missing; it must hold no state already).
    ///
    /// - Throws: `PowerCutError.directory` when it cannot be made or holds a state.
    package init(directory: String, databasePath: String, freezePoint: PowerCutFreezePoint? = nil) throws(PowerCutError)
    {
        self.directory = directory
        self.databasePath = databasePath
        self.freezePoint = freezePoint
        resolvedDatabasePath = URL(fileURLWithPath: databasePath).resolvingSymlinksInPath().path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .directory(path: directory, reason: "\(error)")
        }
        let state = (directory as NSString).appendingPathComponent(PowerCutState.fileName)
        guard !FileManager.default.fileExists(atPath: state) else {
            throw .directory(path: directory, reason: "it holds the state of a cut not applied yet")
        }
    }

    func role(of path: String) -> Role {
        if path == databasePath || path == resolvedDatabasePath { return .database }
        if path == databasePath + "-wal" || path == resolvedDatabasePath + "-wal" { return .wal }
        return .other
    }

    /// Whether the disk has frozen.
    package var isFrozen: Bool { frozen.isSet }

    /// Blocks for good once the disk has frozen; returns at once otherwise.
    func blockIfFrozen() {
        guard frozen.isSet else { return }
        Self.blockForever()
    }

    // MARK: - File content

    /// Records `change` (a write or a truncation) of the file at `path` in its journal, then makes it with
    /// `perform`.
    ///
    /// - Parameters:
    ///   - readDurable: Reads the file's current bytes at an offset (short reads filled with zeros): the content a
    ///     range had when last synced, as long as no change since touched it.
    ///   - size: The file's current size.
    /// - Throws: `PowerCutError.file` when the journal cannot be written (the change is not made).
    func change<T>(
        _ change: PowerCutJournal.Record, of path: String, readDurable: (Int64, Int) -> [UInt8], size: () -> Int64,
        perform: () -> T
    ) throws(PowerCutError) -> T {
        blockIfFrozen()
        let event: PowerCutFreezePoint.Event
        switch role(of: path) {
        case .database: event = .databaseWrite
        case .wal: event = .walWrite
        case .other: event = .otherWrite
        }
        return try storage.withLock { storage throws(PowerCutError) -> T in
            freezeIfDue(.before, event, in: &storage)
            var journal: OpenJournal
            if let open = storage.journals[path] {
                journal = open
            } else {
                journal = try openJournal(for: path, in: &storage)
            }
            var records: [PowerCutJournal.Record] = []
            if !journal.hasBase {
                journal.durableSize = size()
                journal.hasBase = true
                records.append(.base(size: journal.durableSize))
            }
            let touched: Range<Int64>
            switch change {
            case .write(let offset, let bytes): touched = offset..<offset + Int64(bytes.count)
            case .truncate(let newSize): touched = min(newSize, size())..<max(newSize, size())
            case .base, .preimage: preconditionFailure("not a change: \(change)")
            }
            let durable = touched.clamped(to: 0..<max(journal.durableSize, 0))
            for gap in journal.captured.gaps(in: durable) {
                records.append(.preimage(offset: gap.lowerBound, bytes: readDurable(gap.lowerBound, gap.count)))
            }
            journal.captured.insert(touched)
            records.append(change)
            do {
                try journal.handle.write(contentsOf: PowerCutJournal.encode(records))
            } catch {
                throw .file(path: path, reason: "cannot write its journal: \(error)")
            }
            storage.journals[path] = journal
            let result = perform()
            freezeIfDue(.after, event, in: &storage)
            return result
        }
    }

    /// Makes every change of the file at `path` durable (its journal empties); with `directoryToo`, the directory
    /// changes of its directory as well (SQLite syncs the directory on a new WAL's or journal's first sync).
    func sync(_ path: String, directoryToo: Bool) throws(PowerCutError) {
        blockIfFrozen()
        let event: PowerCutFreezePoint.Event
        switch role(of: path) {
        case .database: event = .databaseSync
        case .wal: event = .walSync
        case .other: event = .otherSync
        }
        try storage.withLock { storage throws(PowerCutError) in
            freezeIfDue(.before, event, in: &storage)
            if var journal = storage.journals[path], journal.hasBase {
                do {
                    try journal.handle.truncate(atOffset: UInt64(PowerCutJournal.magic.count))
                    try journal.handle.seekToEnd()
                } catch {
                    throw .file(path: path, reason: "cannot empty its journal: \(error)")
                }
                journal.hasBase = false
                journal.captured = ByteRanges()
                storage.journals[path] = journal
            }
            freezeIfDue(.after, event, in: &storage)
            if directoryToo { try syncDirectory((path as NSString).deletingLastPathComponent, in: &storage) }
        }
    }

    // MARK: - Directories

    /// Records that `path` was just created (its directory not yet synced).
    func created(_ path: String) throws(PowerCutError) {
        blockIfFrozen()
        try storage.withLock { storage throws(PowerCutError) in
            storage.state.pending.append(.create(directory: (path as NSString).deletingLastPathComponent, path: path))
            try save(storage.state)
        }
    }

    /// Deletes `path`: moves it into the disk's directory, from where a cut can bring it back, unless
    /// `syncsDirectory` (then it is deleted and its directory synced). Returns `false` when there is no such file.
    func delete(_ path: String, syncsDirectory: Bool) throws(PowerCutError) -> Bool {
        blockIfFrozen()
        return try storage.withLock { storage throws(PowerCutError) -> Bool in
            guard FileManager.default.fileExists(atPath: path) else { return false }
            let directoryOfPath = (path as NSString).deletingLastPathComponent
            if syncsDirectory {
                try forget(path, in: &storage)
                try remove(path)
                try syncDirectory(directoryOfPath, in: &storage)
                return true
            }
            let saved = newName("saved", in: &storage)
            try move(path, to: saved)
            rekeyJournal(from: path, to: saved, in: &storage)
            storage.state.pending.append(.delete(directory: directoryOfPath, path: path, saved: saved))
            try save(storage.state)
            return true
        }
    }

    /// Renames `from` to `to` with `perform` (the caller's `rename`), recording it so that a cut can undo it until
    /// the directory is synced; returns what `perform` returned.
    package func rename(from: String, to: String, perform: () -> Bool) throws(PowerCutError) -> Bool {
        blockIfFrozen()
        return try storage.withLock { storage throws(PowerCutError) -> Bool in
            freezeIfDue(.before, .rename, in: &storage)
            var savedTarget: String?
            if FileManager.default.fileExists(atPath: to) {
                let saved = newName("saved", in: &storage)
                do {
                    try FileManager.default.linkItem(atPath: to, toPath: saved)
                } catch {
                    throw .file(path: to, reason: "cannot keep the file a rename replaces: \(error)")
                }
                rekeyJournal(from: to, to: saved, in: &storage)
                savedTarget = saved
            }
            guard perform() else { return false }
            rekeyJournal(from: from, to: to, in: &storage)
            storage.state.pending.append(
                .rename(
                    directory: (to as NSString).deletingLastPathComponent, from: from, to: to, savedTarget: savedTarget)
            )
            try save(storage.state)
            freezeIfDue(.after, .rename, in: &storage)
            return true
        }
    }

    /// Makes the directory changes in `directory` durable (an `fsync` of the directory).
    package func syncDirectory(_ directory: String) throws(PowerCutError) {
        blockIfFrozen()
        try storage.withLock { storage throws(PowerCutError) in try syncDirectory(directory, in: &storage) }
    }

    private func syncDirectory(_ directory: String, in storage: inout Storage) throws(PowerCutError) {
        freezeIfDue(.before, .directorySync, in: &storage)
        let durable = storage.state.pending.filter { $0.directory == directory }
        if !durable.isEmpty {
            storage.state.pending.removeAll { $0.directory == directory }
            for saved in durable.flatMap(\.savedCopies) {
                try forget(saved, in: &storage)
                try remove(saved)
            }
            try save(storage.state)
        }
        freezeIfDue(.after, .directorySync, in: &storage)
    }

    // MARK: - Journals and state

    private func openJournal(for path: String, in storage: inout Storage) throws(PowerCutError) -> OpenJournal {
        let name = (newName("journal", in: &storage) as NSString).lastPathComponent
        let journalPath = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: journalPath, contents: Data(PowerCutJournal.magic)),
            let handle = FileHandle(forWritingAtPath: journalPath)
        else { throw .file(path: journalPath, reason: "cannot create the journal") }
        do {
            try handle.seekToEnd()
        } catch {
            throw .file(path: journalPath, reason: "\(error)")
        }
        storage.state.files.append(PowerCutState.TrackedFile(journal: name, path: path))
        try save(storage.state)
        return OpenJournal(name: name, handle: handle)
    }

    /// Makes the journal of `old` (if any) the journal of `new`: the file moved.
    private func rekeyJournal(from old: String, to new: String, in storage: inout Storage) {
        guard let index = storage.state.files.firstIndex(where: { $0.path == old }) else { return }
        storage.state.files[index].path = new
        storage.journals[new] = storage.journals.removeValue(forKey: old)
    }

    /// Drops the journal of `path`: the file is gone for good.
    private func forget(_ path: String, in storage: inout Storage) throws(PowerCutError) {
        guard let index = storage.state.files.firstIndex(where: { $0.path == path }) else { return }
        let name = storage.state.files.remove(at: index).journal
        try? storage.journals.removeValue(forKey: path)?.handle.close()
        try save(storage.state)
        try remove((directory as NSString).appendingPathComponent(name))
    }

    private func newName(_ prefix: String, in storage: inout Storage) -> String {
        defer { storage.nextNumber += 1 }
        return (directory as NSString).appendingPathComponent("\(prefix)-\(storage.nextNumber)")
    }

    private func save(_ state: PowerCutState) throws(PowerCutError) {
        do {
            try state.write(into: directory)
        } catch {
            throw .directory(path: directory, reason: "cannot write the state: \(error)")
        }
    }

    private func move(_ path: String, to destination: String) throws(PowerCutError) {
        do {
            try FileManager.default.moveItem(atPath: path, toPath: destination)
        } catch {
            throw .file(path: path, reason: "cannot move it to \(destination): \(error)")
        }
    }

    private func remove(_ path: String) throws(PowerCutError) {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw .file(path: path, reason: "cannot remove it: \(error)")
        }
    }

    // MARK: - Freezing

    private func freezeIfDue(
        _ phase: PowerCutFreezePoint.Phase, _ event: PowerCutFreezePoint.Event, in storage: inout Storage
    ) {
        if phase == .before { storage.counts[event, default: 0] += 1 }
        guard let point = freezePoint, point.phase == phase, point.event == event,
            point.count == storage.counts[event, default: 0]
        else { return }
        _ = frozen.setOnce()
        _ = FileManager.default.createFile(
            atPath: (directory as NSString).appendingPathComponent(Self.frozenMarker),
            contents: Data(point.description.utf8))
        Self.blockForever()
    }

    private static func blockForever() -> Never {
        let never = DispatchSemaphore(value: 0)
        while true { never.wait() }
    }
}

/// Disjoint, sorted ranges of bytes (the bytes whose synced content a journal holds).
private struct ByteRanges {
    private var ranges: [Range<Int64>] = []

    /// The parts of `range` not covered.
    func gaps(in range: Range<Int64>) -> [Range<Int64>] {
        guard !range.isEmpty else { return [] }
        var gaps: [Range<Int64>] = []
        var start = range.lowerBound
        for covered in ranges where covered.upperBound > start {
            guard covered.lowerBound < range.upperBound else { break }
            if covered.lowerBound > start { gaps.append(start..<covered.lowerBound) }
            start = max(start, covered.upperBound)
            if start >= range.upperBound { break }
        }
        if start < range.upperBound { gaps.append(start..<range.upperBound) }
        return gaps
    }

    /// Covers `range` too.
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var merged = range
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(ranges.count + 1)
        var inserted = false
        for covered in ranges {
            if covered.upperBound < merged.lowerBound {
                kept.append(covered)
            } else if covered.lowerBound > merged.upperBound {
                if !inserted {
                    kept.append(merged)
                    inserted = true
                }
                kept.append(covered)
            } else {
                merged = min(merged.lowerBound, covered.lowerBound)..<max(merged.upperBound, covered.upperBound)
            }
        }
        if !inserted { kept.append(merged) }
        ranges = kept
    }
}
