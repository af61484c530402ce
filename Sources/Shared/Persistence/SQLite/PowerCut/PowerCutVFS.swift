import CContextBusSQLite
import ContextBusSupport

/// The SQLite VFS of a `PowerCutDisk`: SQLite's default VFS with every write, truncation, sync, creation and
/// deletion of a database, WAL or journal file recorded on the disk first (tests only).
///
/// storesvc's `--test-power-cut` installs it as the default VFS before the store opens (`install(_:)`), so that
/// every connection of the store goes through it: the writer's through `WALWriteGathering`, which registers over
/// whatever is the default when it is first used and so runs above this one unchanged, and the checkpointer's,
/// the readers' and the backups' directly. A sync is recorded, not made: the machine does not really lose power.
/// Like SQLite's unix VFS, a WAL or journal opened with `SQLITE_OPEN_CREATE` syncs its directory on its first sync
/// (`UNIXFILE_DIRSYNC`), and `xDelete` syncs it when SQLite asks.
///
/// Temporary files (temporary databases and journals, sub-journals) are not recorded: they do not outlive the
/// process. Neither is the `-shm` file, which the unix VFS opens itself and SQLite rebuilds after a crash.
package enum PowerCutVFS {
    /// The disk installed as the default VFS of this process, if any (`SQLiteStore.backup` records its rename and
    /// its directory sync there).
    package static var installedDisk: PowerCutDisk? { installed.withLock { $0 } }
    private static let installed = Locked<PowerCutDisk?>(nil)

    /// Registers `disk`'s VFS as the process's default, under every store this process opens later.
    ///
    /// - Throws: `PowerCutError.installedTooLate` when a store has opened already (the store's own VFS would stay
    ///   over the old default), `.alreadyInstalled` when a disk is installed.
    package static func install(_ disk: PowerCutDisk) throws(PowerCutError) {
        guard sqlite3_vfs_find(WALWriteGathering.registeredName) == nil else { throw .installedTooLate }
        try installed.withLock { installed throws(PowerCutError) in
            guard installed == nil else { throw .alreadyInstalled }
            _ = register(disk, name: "contextbus-power-cut", asDefault: true)
            installed = disk
        }
    }

    /// Registers a VFS named `name` over the current default that records on `disk`; returns the name. Tests open
    /// connections through it by name; storesvc makes it the default (`install(_:)`).
    @discardableResult
    package static func register(_ disk: PowerCutDisk, name: String, asDefault: Bool = false) -> String {
        guard let base = sqlite3_vfs_find(nil) else { preconditionFailure("SQLite has no default VFS") }
        let registered = UnsafeMutablePointer<Box>.allocate(capacity: 1)
        // The name must outlive the registration, which lasts as long as the process; so does the disk.
        let cName = UnsafeMutablePointer<CChar>.allocate(capacity: name.utf8.count + 1)
        name.withCString { cName.initialize(from: $0, count: name.utf8.count + 1) }
        var vfs = base.pointee
        vfs.pNext = nil
        vfs.zName = UnsafePointer(cName)
        vfs.szOsFile = Int32(innerOffset) + base.pointee.szOsFile
        vfs.xOpen = { vfs, name, file, flags, outFlags in
            PowerCutVFS.open(PowerCutVFS.box(vfs!), name, file!, flags: flags, outFlags: outFlags)
        }
        vfs.xDelete = { vfs, name, syncDirectory in
            PowerCutVFS.delete(PowerCutVFS.box(vfs!), name!, syncsDirectory: syncDirectory != 0)
        }
        // A VFS registered over this one (`WALWriteGathering`) copies these methods and calls them with its own
        // pointer, so they find the disk through `pAppData`, which it copies too. Of the unix VFS's methods only its
        // xOpen reads `pAppData`, and it is called with the unix VFS's own pointer.
        vfs.pAppData = UnsafeMutableRawPointer(registered)
        registered.initialize(to: Box(vfs: vfs, base: base, disk: Unmanaged.passRetained(disk)))
        let code = sqlite3_vfs_register(
            UnsafeMutableRawPointer(registered).assumingMemoryBound(to: sqlite3_vfs.self), asDefault ? 1 : 0)
        precondition(code == SQLITE_OK, "cannot register the \(name) VFS: \(code)")
        return name
    }

    /// The registered `sqlite3_vfs`, the VFS it forwards to, and the disk.
    private struct Box {
        var vfs: sqlite3_vfs
        var base: UnsafeMutablePointer<sqlite3_vfs>
        var disk: Unmanaged<PowerCutDisk>
    }

    private static func box(_ vfs: UnsafeMutablePointer<sqlite3_vfs>) -> UnsafeMutablePointer<Box> {
        vfs.pointee.pAppData.assumingMemoryBound(to: Box.self)
    }

    // SQLite's extended result codes are macros Swift does not import.
    private static let ioErrorWrite = SQLITE_IOERR | (3 << 8)
    private static let ioErrorFsync = SQLITE_IOERR | (4 << 8)
    private static let ioErrorTruncate = SQLITE_IOERR | (6 << 8)
    private static let ioErrorDelete = SQLITE_IOERR | (10 << 8)
    private static let ioErrorDeleteNoEntry = SQLITE_IOERR | (23 << 8)
    private static let ioErrorSharedMemoryLock = SQLITE_IOERR | (20 << 8)
    private static let ioErrorSharedMemoryMap = SQLITE_IOERR | (21 << 8)

    // MARK: - Files

    /// One open file: where it is, whether its changes are recorded, and whether its next sync syncs its directory.
    ///
    /// Used only inside SQLite's calls on one connection's file, which SQLite makes one at a time.
    private final class OpenFile {
        let disk: PowerCutDisk
        let path: String
        let isRecorded: Bool
        var syncsDirectory: Bool

        init(disk: PowerCutDisk, path: String, isRecorded: Bool, syncsDirectory: Bool) {
            self.disk = disk
            self.path = path
            self.isRecorded = isRecorded
            self.syncsDirectory = syncsDirectory
        }
    }

    /// The head of every file this VFS opens: SQLite's `sqlite3_file`, then the open file. The default VFS's file
    /// follows at `innerOffset`.
    private struct FileHead {
        var base: sqlite3_file
        var file: Unmanaged<OpenFile>?
    }

    private static let innerOffset = (MemoryLayout<FileHead>.size + 15) & ~15

    private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file!) + innerOffset).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func head(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<FileHead> {
        UnsafeMutableRawPointer(file!).assumingMemoryBound(to: FileHead.self)
    }

    private static func openFile(_ file: UnsafeMutablePointer<sqlite3_file>?) -> OpenFile {
        head(file).pointee.file!.takeUnretainedValue()
    }

    /// The default VFS's methods for `file`.
    private static func methods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        inner(file).pointee.pMethods.pointee
    }

    private static func open(
        _ box: UnsafeMutablePointer<Box>, _ name: UnsafePointer<CChar>?, _ file: UnsafeMutablePointer<sqlite3_file>,
        flags: Int32, outFlags: UnsafeMutablePointer<Int32>?
    ) -> Int32 {
        let disk = box.pointee.disk.takeUnretainedValue()
        disk.blockIfFrozen()
        let base = box.pointee.base
        let head = head(file)
        head.initialize(to: FileHead(base: sqlite3_file(pMethods: nil), file: nil))
        let inner = inner(file)
        let type = flags & 0x0FFF00
        let isCreating = flags & SQLITE_OPEN_CREATE != 0
        let isRecorded =
            name != nil && flags & SQLITE_OPEN_DELETEONCLOSE == 0
            && [SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_MAIN_JOURNAL, SQLITE_OPEN_SUPER_JOURNAL, SQLITE_OPEN_WAL].contains(
                type)
        var existed: Int32 = 1
        if isRecorded, isCreating, base.pointee.xAccess(base, name, SQLITE_ACCESS_EXISTS, &existed) != SQLITE_OK {
            existed = 1
        }
        let code = base.pointee.xOpen(base, name, inner, flags, outFlags)
        guard code == SQLITE_OK else {
            // SQLite calls xClose only when pMethods is set: forward it if the default VFS needs one.
            head.pointee.base.pMethods = inner.pointee.pMethods == nil ? nil : UnsafePointer(ioMethods)
            return code
        }
        let path = name.map { String(cString: $0) } ?? ""
        // SQLite's unix VFS syncs the directory on the first sync of a WAL or journal opened to be created.
        let syncsDirectory = isRecorded && isCreating && type != SQLITE_OPEN_MAIN_DB
        head.pointee.file = Unmanaged.passRetained(
            OpenFile(disk: disk, path: path, isRecorded: isRecorded, syncsDirectory: syncsDirectory))
        head.pointee.base.pMethods = UnsafePointer(ioMethods)
        if isRecorded, existed == 0 {
            do {
                try disk.created(path)
            } catch {
                return SQLITE_CANTOPEN  // SQLite closes the file (pMethods is set)
            }
        }
        return SQLITE_OK
    }

    private static func delete(
        _ box: UnsafeMutablePointer<Box>, _ name: UnsafePointer<CChar>, syncsDirectory: Bool
    ) -> Int32 {
        let disk = box.pointee.disk.takeUnretainedValue()
        do {
            return try disk.delete(String(cString: name), syncsDirectory: syncsDirectory)
                ? SQLITE_OK : ioErrorDeleteNoEntry
        } catch {
            return ioErrorDelete
        }
    }

    // MARK: - I/O methods

    nonisolated(unsafe) private static let ioMethods = makeMethods()

    private static func makeMethods() -> UnsafeMutablePointer<sqlite3_io_methods> {
        var methods = sqlite3_io_methods()
        methods.iVersion = 3
        methods.xClose = { file in
            let head = PowerCutVFS.head(file)
            head.pointee.file?.release()
            head.pointee.file = nil
            return PowerCutVFS.methods(file).xClose(PowerCutVFS.inner(file))
        }
        methods.xRead = { file, data, count, offset in
            PowerCutVFS.openFile(file).disk.blockIfFrozen()
            return PowerCutVFS.methods(file).xRead(PowerCutVFS.inner(file), data, count, offset)
        }
        methods.xWrite = { file, data, count, offset in
            let open = PowerCutVFS.openFile(file)
            let write = { PowerCutVFS.methods(file).xWrite(PowerCutVFS.inner(file), data, count, offset) }
            guard open.isRecorded else {
                open.disk.blockIfFrozen()
                return write()
            }
            let bytes = Array(UnsafeRawBufferPointer(start: data, count: Int(count)))
            do {
                return try open.disk.change(
                    .write(offset: offset, bytes: bytes), of: open.path,
                    readDurable: { PowerCutVFS.read(file, at: $0, count: $1) }, size: { PowerCutVFS.size(of: file) },
                    perform: write)
            } catch {
                return PowerCutVFS.ioErrorWrite
            }
        }
        methods.xTruncate = { file, size in
            let open = PowerCutVFS.openFile(file)
            let truncate = { PowerCutVFS.methods(file).xTruncate(PowerCutVFS.inner(file), size) }
            guard open.isRecorded else {
                open.disk.blockIfFrozen()
                return truncate()
            }
            do {
                return try open.disk.change(
                    .truncate(size: size), of: open.path,
                    readDurable: { PowerCutVFS.read(file, at: $0, count: $1) }, size: { PowerCutVFS.size(of: file) },
                    perform: truncate)
            } catch {
                return PowerCutVFS.ioErrorTruncate
            }
        }
        methods.xSync = { file, _ in
            let open = PowerCutVFS.openFile(file)
            guard open.isRecorded else {
                open.disk.blockIfFrozen()
                return SQLITE_OK
            }
            do {
                try open.disk.sync(open.path, directoryToo: open.syncsDirectory)
                open.syncsDirectory = false
                return SQLITE_OK
            } catch {
                return PowerCutVFS.ioErrorFsync
            }
        }
        methods.xFileSize = { file, size in
            PowerCutVFS.openFile(file).disk.blockIfFrozen()
            return PowerCutVFS.methods(file).xFileSize(PowerCutVFS.inner(file), size)
        }
        methods.xLock = { file, lock in
            PowerCutVFS.openFile(file).disk.blockIfFrozen()
            return PowerCutVFS.methods(file).xLock(PowerCutVFS.inner(file), lock)
        }
        methods.xUnlock = { file, lock in
            PowerCutVFS.methods(file).xUnlock(PowerCutVFS.inner(file), lock)
        }
        methods.xCheckReservedLock = { file, result in
            PowerCutVFS.methods(file).xCheckReservedLock(PowerCutVFS.inner(file), result)
        }
        methods.xFileControl = { file, opcode, argument in
            PowerCutVFS.openFile(file).disk.blockIfFrozen()
            return PowerCutVFS.methods(file).xFileControl(PowerCutVFS.inner(file), opcode, argument)
        }
        methods.xSectorSize = { file in
            PowerCutVFS.methods(file).xSectorSize(PowerCutVFS.inner(file))
        }
        methods.xDeviceCharacteristics = { file in
            PowerCutVFS.methods(file).xDeviceCharacteristics(PowerCutVFS.inner(file))
        }
        methods.xShmMap = { file, region, size, extend, address in
            guard let map = PowerCutVFS.methods(file).xShmMap else { return PowerCutVFS.ioErrorSharedMemoryMap }
            return map(PowerCutVFS.inner(file), region, size, extend, address)
        }
        methods.xShmLock = { file, offset, count, flags in
            guard let lock = PowerCutVFS.methods(file).xShmLock else { return PowerCutVFS.ioErrorSharedMemoryLock }
            return lock(PowerCutVFS.inner(file), offset, count, flags)
        }
        methods.xShmBarrier = { file in
            PowerCutVFS.methods(file).xShmBarrier?(PowerCutVFS.inner(file))
        }
        methods.xShmUnmap = { file, delete in
            guard let unmap = PowerCutVFS.methods(file).xShmUnmap else { return SQLITE_OK }
            return unmap(PowerCutVFS.inner(file), delete)
        }
        methods.xFetch = { file, offset, count, address in
            PowerCutVFS.openFile(file).disk.blockIfFrozen()
            guard let fetch = PowerCutVFS.methods(file).xFetch else {
                address?.pointee = nil
                return SQLITE_OK
            }
            return fetch(PowerCutVFS.inner(file), offset, count, address)
        }
        methods.xUnfetch = { file, offset, address in
            guard let unfetch = PowerCutVFS.methods(file).xUnfetch else { return SQLITE_OK }
            return unfetch(PowerCutVFS.inner(file), offset, address)
        }
        let pointer = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        pointer.initialize(to: methods)
        return pointer
    }

    /// `count` bytes of `file` at `offset`, zeros past its end.
    private static func read(_ file: UnsafeMutablePointer<sqlite3_file>?, at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            // A short read fills the rest with zeros (and says so, which does not matter here).
            _ = methods(file).xRead(inner(file), buffer.baseAddress, Int32(count), offset)
        }
        return bytes
    }

    private static func size(of file: UnsafeMutablePointer<sqlite3_file>?) -> Int64 {
        var size: sqlite3_int64 = 0
        _ = methods(file).xFileSize(inner(file), &size)
        return size
    }
}
