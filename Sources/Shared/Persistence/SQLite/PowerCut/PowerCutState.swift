import Foundation

/// What a `PowerCutDisk` keeps in its directory besides the journals: which journal belongs to which file, and the
/// directory changes (creations, deletions, renames) not yet made durable by a sync of their directory.
///
/// Rewritten whole, atomically (a new file renamed over the old), whenever it changes, so that a process killed at
/// any moment leaves either the old state or the new one. One line per entry, fields separated by tabs:
///
/// ```
///   file    journal-3    /tmp/x/store.sqlite-wal
///   create  /tmp/x       /tmp/x/store.sqlite
///   delete  /tmp/x       /tmp/x/b.sqlite-journal    /tmp/x/power/saved-4
///   rename  /tmp/x       /tmp/x/.b.partial          /tmp/x/b.sqlite          /tmp/x/power/saved-5 (or -)
/// ```
///
/// Paths are absolute and hold no tab or newline (a test's temporary directory).
struct PowerCutState: Equatable, Sendable {
    /// A journal (a file name in the disk's directory) and the path of the file it belongs to.
    struct TrackedFile: Equatable, Sendable {
        var journal: String
        var path: String
    }

    /// A change to a directory that a power cut may undo until the directory is synced.
    enum DirectoryChange: Equatable, Sendable {
        /// `path` was created.
        case create(directory: String, path: String)
        /// `path` was deleted; its content was moved to `saved` so that a cut can bring it back.
        case delete(directory: String, path: String, saved: String)
        /// `from` was renamed to `to`; the file `to` replaced was linked as `savedTarget`, if there was one.
        case rename(directory: String, from: String, to: String, savedTarget: String?)

        var directory: String {
            switch self {
            case .create(let directory, _), .delete(let directory, _, _), .rename(let directory, _, _, _):
                return directory
            }
        }

        /// The copies a cut would restore from, which a directory sync makes useless.
        var savedCopies: [String] {
            switch self {
            case .create: return []
            case .delete(_, _, let saved): return [saved]
            case .rename(_, _, _, let savedTarget): return savedTarget.map { [$0] } ?? []
            }
        }
    }

    var files: [TrackedFile] = []
    /// In the order they happened.
    var pending: [DirectoryChange] = []

    static let fileName = "state"

    /// The state's text.
    var text: String {
        var lines = files.map { "file\t\($0.journal)\t\($0.path)" }
        for change in pending {
            switch change {
            case .create(let directory, let path): lines.append("create\t\(directory)\t\(path)")
            case .delete(let directory, let path, let saved): lines.append("delete\t\(directory)\t\(path)\t\(saved)")
            case .rename(let directory, let from, let to, let savedTarget):
                lines.append("rename\t\(directory)\t\(from)\t\(to)\t\(savedTarget ?? "-")")
            }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Reads a state's text.
    ///
    /// - Throws: `PowerCutError.unreadableState` naming the line that is not one.
    init(text: String) throws(PowerCutError) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            switch (fields.first, fields.count) {
            case ("file", 3): files.append(TrackedFile(journal: fields[1], path: fields[2]))
            case ("create", 3): pending.append(.create(directory: fields[1], path: fields[2]))
            case ("delete", 4): pending.append(.delete(directory: fields[1], path: fields[2], saved: fields[3]))
            case ("rename", 5):
                pending.append(
                    .rename(
                        directory: fields[1], from: fields[2], to: fields[3],
                        savedTarget: fields[4] == "-" ? nil : fields[4]))
            default:
                throw .unreadableState(line: String(line))
            }
        }
    }

    init() {}

    /// Writes the state into `directory`, replacing the one there at once.
    func write(into directory: String) throws {
        try Data(text.utf8).write(
            to: URL(fileURLWithPath: directory).appendingPathComponent(Self.fileName), options: .atomic)
    }

    /// The state kept in `directory`; an empty one when there is none.
    static func read(from directory: String) throws(PowerCutError) -> PowerCutState {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
        guard FileManager.default.fileExists(atPath: path) else { return PowerCutState() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableState(line: "cannot read \(path)")
        }
        return try PowerCutState(text: String(decoding: data, as: UTF8.self))
    }
}
