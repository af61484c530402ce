import Foundation

/// A power cut on a `PowerCutDisk`, applied after the process using it has died (`kill -9`): the files go back to
/// what their syncs made durable, and then forward again by what of the unsynced changes the cut lets survive.
///
/// ```swift
/// service.signal(SIGKILL)                       // the disk was frozen, or the process is killed at any moment
/// _ = service.waitForExit()
/// var random = SeededGenerator(seed: seed)
/// let outcome = try PowerCut.apply(to: diskDirectory, losing: .anySubset, using: &random)
/// // start the service again on what survived
/// ```
///
/// What may survive (`Loss`):
/// - `.everything`: nothing unsynced (LazyFS's default).
/// - `.anySubset`: each unsynced write independently whole, lost, or torn at `sectorSize` boundaries of the file
///   (each of its sectors kept or lost), each truncation kept or lost; and per directory, a prefix of its unsynced
///   creations, deletions and renames (file systems journal a directory's changes in order).
/// - `.nothing`: everything (what a process kill leaves).
///
/// Writes that survive are applied in the order they were made, over the content the file had when last synced.
/// Directory changes that do not survive are undone newest first: a created file is removed, a deleted one comes
/// back, a rename goes back (and the file it replaced returns). Afterwards the disk's directory is emptied, ready
/// for the next run.
package enum PowerCut {
    /// What of the unsynced changes a cut loses.
    package enum Loss: String, Sendable, Hashable, CaseIterable {
        case everything
        case anySubset = "any-subset"
        case nothing
    }

    /// What a cut did.
    package struct Outcome: Sendable, Hashable, CustomStringConvertible {
        /// Files with unsynced changes.
        package var files = 0
        package var writesKept = 0
        package var writesLost = 0
        /// Writes of which only some sectors survived.
        package var writesTorn = 0
        package var truncationsKept = 0
        package var truncationsLost = 0
        package var directoryChangesKept = 0
        package var directoryChangesUndone = 0

        package var description: String {
            "\(files) files with unsynced changes: writes \(writesKept) kept, \(writesLost) lost, \(writesTorn) torn; "
                + "truncations \(truncationsKept) kept, \(truncationsLost) lost; directory changes "
                + "\(directoryChangesKept) kept, \(directoryChangesUndone) undone"
        }
    }

    /// The unit a write may be torn at.
    package static let sectorSize: Int64 = 512

    /// Cuts the power of the disk whose directory is `directory`; the process using it must have died.
    ///
    /// - Parameters:
    ///   - loss: What of the unsynced changes is lost.
    ///   - relocating: When the disk's files (and its directory) were copied elsewhere, the old prefix of their
    ///     paths and the new one: the cut is then applied to the copy (tests cut one frozen image many ways).
    ///   - random: Chooses what survives, for `.anySubset`.
    /// - Throws: `PowerCutError` when the state or a file cannot be read or changed.
    @discardableResult
    package static func apply(
        to directory: String, losing loss: Loss, relocating: (from: String, to: String)? = nil,
        using random: inout some RandomNumberGenerator
    ) throws(PowerCutError) -> Outcome {
        var state = try PowerCutState.read(from: directory)
        if let (old, new) = relocating { state = relocated(state, from: old, to: new) }
        var outcome = Outcome()
        for file in state.files {
            let journal = (directory as NSString).appendingPathComponent(file.journal)
            guard let bytes = FileManager.default.contents(atPath: journal) else {
                throw .file(path: journal, reason: "cannot read the journal")
            }
            let records = PowerCutJournal.records(in: Array(bytes))
            guard !records.isEmpty else { continue }
            outcome.files += 1
            try cut(file.path, records: records, losing: loss, outcome: &outcome, using: &random)
        }
        try undoDirectoryChanges(state.pending, losing: loss, outcome: &outcome, using: &random)
        try empty(directory)
        return outcome
    }

    // MARK: - File content

    private static func cut(
        _ path: String, records: [PowerCutJournal.Record], losing loss: Loss, outcome: inout Outcome,
        using random: inout some RandomNumberGenerator
    ) throws(PowerCutError) {
        guard case .base(let durableSize) = records.first(where: { if case .base = $0 { true } else { false } })
        else { return }
        // A file removed for good (a deletion its directory's sync made durable) has nothing left to cut.
        guard FileManager.default.fileExists(atPath: path), let handle = FileHandle(forUpdatingAtPath: path) else {
            return
        }
        defer { try? handle.close() }
        do {
            try handle.truncate(atOffset: UInt64(durableSize))
            for case .preimage(let offset, let bytes) in records where offset < durableSize {
                try write(bytes.prefix(Int(durableSize - offset)), at: offset, to: handle)
            }
            for record in records {
                switch record {
                case .write(let offset, let bytes):
                    switch loss {
                    case .nothing:
                        try write(bytes[...], at: offset, to: handle)
                        outcome.writesKept += 1
                    case .everything: outcome.writesLost += 1
                    case .anySubset:
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0:
                            try write(bytes[...], at: offset, to: handle)
                            outcome.writesKept += 1
                        case 1: outcome.writesLost += 1
                        default:
                            try writeTorn(bytes, at: offset, to: handle, using: &random)
                            outcome.writesTorn += 1
                        }
                    }
                case .truncate(let size):
                    if loss == .nothing || (loss == .anySubset && Bool.random(using: &random)) {
                        try handle.truncate(atOffset: UInt64(size))
                        outcome.truncationsKept += 1
                    } else {
                        outcome.truncationsLost += 1
                    }
                case .base, .preimage:
                    break
                }
            }
        } catch let error as PowerCutError {
            throw error
        } catch {
            throw .file(path: path, reason: "\(error)")
        }
    }

    private static func write(_ bytes: ArraySlice<UInt8>, at offset: Int64, to handle: FileHandle) throws {
        guard !bytes.isEmpty else { return }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(bytes))
    }

    /// Writes each `sectorSize` piece of the write (at the file's sector boundaries) with even odds.
    private static func writeTorn(
        _ bytes: [UInt8], at offset: Int64, to handle: FileHandle, using random: inout some RandomNumberGenerator
    ) throws {
        var start = offset
        let end = offset + Int64(bytes.count)
        while start < end {
            let pieceEnd = min(end, (start / sectorSize + 1) * sectorSize)
            if Bool.random(using: &random) {
                try write(bytes[Int(start - offset)..<Int(pieceEnd - offset)], at: start, to: handle)
            }
            start = pieceEnd
        }
    }

    // MARK: - Directories

    private static func undoDirectoryChanges(
        _ changes: [PowerCutState.DirectoryChange], losing loss: Loss, outcome: inout Outcome,
        using random: inout some RandomNumberGenerator
    ) throws(PowerCutError) {
        var kept: [PowerCutState.DirectoryChange] = []
        var undone: [PowerCutState.DirectoryChange] = []
        for directory in Set(changes.map(\.directory)).sorted() {
            let changesHere = changes.filter { $0.directory == directory }
            let keep: Int
            switch loss {
            case .everything: keep = 0
            case .nothing: keep = changesHere.count
            case .anySubset: keep = Int.random(in: 0...changesHere.count, using: &random)
            }
            kept += changesHere.prefix(keep)
            undone += changesHere.dropFirst(keep)
        }
        // Newest first, across directories too (a rename names files in one directory).
        let order = changes.enumerated().filter { undone.contains($0.element) }.map(\.element)
        for change in order.reversed() {
            switch change {
            case .create(_, let path):
                try removeIfPresent(path)
            case .delete(_, let path, let saved):
                try removeIfPresent(path)
                try move(saved, to: path)
            case .rename(_, let from, let to, let savedTarget):
                if FileManager.default.fileExists(atPath: to) {
                    try removeIfPresent(from)
                    try move(to, to: from)
                }
                if let savedTarget { try move(savedTarget, to: to) }
            }
        }
        outcome.directoryChangesKept = kept.count
        outcome.directoryChangesUndone = undone.count
    }

    private static func relocated(_ state: PowerCutState, from old: String, to new: String) -> PowerCutState {
        func move(_ path: String) -> String { path.hasPrefix(old) ? new + path.dropFirst(old.count) : path }
        var state = state
        state.files = state.files.map { PowerCutState.TrackedFile(journal: $0.journal, path: move($0.path)) }
        state.pending = state.pending.map { change in
            switch change {
            case .create(let directory, let path): return .create(directory: move(directory), path: move(path))
            case .delete(let directory, let path, let saved):
                return .delete(directory: move(directory), path: move(path), saved: move(saved))
            case .rename(let directory, let from, let to, let savedTarget):
                return .rename(
                    directory: move(directory), from: move(from), to: move(to), savedTarget: savedTarget.map(move))
            }
        }
        return state
    }

    private static func move(_ path: String, to destination: String) throws(PowerCutError) {
        do {
            try FileManager.default.moveItem(atPath: path, toPath: destination)
        } catch {
            throw .file(path: path, reason: "cannot move it back to \(destination): \(error)")
        }
    }

    private static func removeIfPresent(_ path: String) throws(PowerCutError) {
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw .file(path: path, reason: "cannot remove it: \(error)")
        }
    }

    /// Removes everything in the disk's directory (journals, state, saved copies, the frozen marker).
    private static func empty(_ directory: String) throws(PowerCutError) {
        do {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                try FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
            }
        } catch {
            throw .directory(path: directory, reason: "cannot empty it: \(error)")
        }
    }
}
