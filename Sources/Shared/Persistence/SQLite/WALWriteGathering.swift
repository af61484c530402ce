import CContextBusSQLite
import ContextBusSupport

/// A SQLite VFS over the default one that lets the writer's connection write a commit's WAL frames with one
/// system call instead of two per frame.
///
/// SQLite writes each WAL frame with two calls (the frame's 24-byte header, then the page), so a commit of N
/// frames makes 2N `pwrite`s. Gathered, storesvc's durable saves make 1.8 WAL writes per commit instead of 16 and
/// use about 7 % less CPU per save (docs/persistence.md, "Gathered WAL writes").
///
/// Only the writer's connection opens the database through this VFS. While the writer says so
/// (`SQLiteConnection.gatherWALWrites(_:)`: while it commits with `synchronous=FULL`), its WAL file keeps a run
/// of contiguous writes in memory and writes it (in pieces of at most 64 KiB) before anything else touches the
/// file: a read, a sync, a truncation, its size, a close, a write elsewhere, or 1 MiB gathered. A `FULL` commit
/// syncs the WAL before SQLite updates the WAL index, so the frames are in the file before any other connection
/// can see them, and an error writing them fails the commit. As a second guard, the database file's
/// shared-memory barrier (which SQLite calls when it publishes a new WAL index header) writes any gathered run
/// first.
///
/// Every other file, and the WAL while gathering is off, goes straight to the default VFS.
enum WALWriteGathering {
    /// The VFS's registered name, for `sqlite3_open_v2`; registered on first use.
    static let vfsName: String = register()
    /// The name it is registered under (`vfsName` without registering it).
    static let registeredName = "contextbus-gather-wal"

    /// The custom file-control opcode that turns gathering on (a nonzero `Int32` argument) or off (zero, which
    /// also writes what is gathered) for the connection's WAL.
    static let setGatheringOpcode: Int32 = 0x4342_5701
    /// The custom file-control opcode that reads, and resets, how many writes reached the WAL file (the argument
    /// points to an `Int64`): one per gathered run (one per 64 KiB of it), plus every write made while gathering
    /// was off.
    static let writesOpcode: Int32 = 0x4342_5702

    /// The custom file-control opcode that makes the next write of a gathered run fail with `SQLITE_IOERR_WRITE`,
    /// as a full or failing disk would (tests).
    static let failNextRunOpcode: Int32 = 0x4342_5703

    /// The custom file-control opcode that makes the connection's WAL record how long each of its syncs takes into a
    /// `LatencyHistogram` (the argument points to an `Unmanaged<LatencyHistogram>`, retained by the run until the
    /// file closes): the `fdatasync` of a durable commit, measured where it happens (storesvc's metrics).
    static let syncLatencyOpcode: Int32 = 0x4342_5704

    // SQLite's extended result codes are macros Swift does not import.
    private static let ioErrorWrite = SQLITE_IOERR | (3 << 8)
    private static let ioErrorSharedMemoryLock = SQLITE_IOERR | (20 << 8)
    private static let ioErrorSharedMemoryMap = SQLITE_IOERR | (21 << 8)

    /// The most bytes a run holds before it is written (a large transaction writes in 1 MiB pieces).
    static let largestRun = 1 << 20
    /// The most bytes one write to the default VFS may carry: its `pwrite` takes the length modulo 128 KiB
    /// (`seekAndWriteFd` masks it with `0x1ffff`), so a run is written in pieces of 64 KiB.
    static let largestWrite = 1 << 16

    // MARK: - Registration

    private static func register() -> String {
        let name = registeredName
        guard let base = sqlite3_vfs_find(nil) else { preconditionFailure("SQLite has no default VFS") }
        baseVFS = base
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: base.pointee)
        vfs.pointee.pNext = nil
        // The name must outlive the registration, which lasts as long as the process.
        let cName = UnsafeMutablePointer<CChar>.allocate(capacity: name.utf8.count + 1)
        name.withCString { cName.initialize(from: $0, count: name.utf8.count + 1) }
        vfs.pointee.zName = UnsafePointer(cName)
        vfs.pointee.szOsFile = Int32(innerOffset) + base.pointee.szOsFile
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            WALWriteGathering.open(name, file!, flags: flags, outFlags: outFlags)
        }
        let code = sqlite3_vfs_register(vfs, 0)
        precondition(code == SQLITE_OK, "cannot register the \(name) VFS: \(code)")
        return name
    }

    // Written once, in `register()` (which runs once, as `vfsName`'s initializer), and only read after: every
    // reader reaches them through a connection opened with `vfsName`, so after the initializer returned.
    nonisolated(unsafe) private static var baseVFS: UnsafeMutablePointer<sqlite3_vfs>!
    nonisolated(unsafe) private static let forwardingMethods = makeMethods(gathering: false)
    nonisolated(unsafe) private static let walMethods = makeMethods(gathering: true)

    // MARK: - Files

    /// The head of every file this VFS opens: SQLite's `sqlite3_file` (which must come first), then the run
    /// shared by a database file and its WAL. The default VFS's file follows at `innerOffset`.
    private struct FileHead {
        var base: sqlite3_file
        var run: Unmanaged<GatheredRun>?
    }

    private static let innerOffset = (MemoryLayout<FileHead>.size + 15) & ~15

    private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file) + innerOffset).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func head(_ file: UnsafeMutablePointer<sqlite3_file>) -> UnsafeMutablePointer<FileHead> {
        UnsafeMutableRawPointer(file).assumingMemoryBound(to: FileHead.self)
    }

    private static func open(
        _ name: UnsafePointer<CChar>?, _ file: UnsafeMutablePointer<sqlite3_file>, flags: Int32,
        outFlags: UnsafeMutablePointer<Int32>?
    ) -> Int32 {
        let head = head(file)
        head.initialize(to: FileHead(base: sqlite3_file(pMethods: nil), run: nil))
        let inner = inner(file)
        let code = baseVFS.pointee.xOpen!(baseVFS, name, inner, flags, outFlags)
        guard code == SQLITE_OK else {
            // SQLite calls xClose only when pMethods is set: forward it if the default VFS needs one.
            head.pointee.base.pMethods = inner.pointee.pMethods == nil ? nil : UnsafePointer(forwardingMethods)
            return code
        }
        if flags & SQLITE_OPEN_MAIN_DB != 0 {
            head.pointee.run = Unmanaged.passRetained(GatheredRun())
            head.pointee.base.pMethods = UnsafePointer(forwardingMethods)
        } else if flags & SQLITE_OPEN_WAL != 0, let name, let database = sqlite3_database_file_object(name),
            database.pointee.pMethods == UnsafePointer(forwardingMethods),
            let run = Self.head(database).pointee.run, run.takeUnretainedValue().wal == nil
        {
            run.takeUnretainedValue().wal = inner
            head.pointee.run = run.retain()
            head.pointee.base.pMethods = UnsafePointer(walMethods)
        } else {
            head.pointee.base.pMethods = UnsafePointer(forwardingMethods)
        }
        return SQLITE_OK
    }

    /// The run of contiguous WAL writes not yet in the file, shared by a database file and its WAL.
    ///
    /// Used only from inside SQLite's calls on one connection's files, which SQLite makes one at a time (the
    /// writer's connection is used only on the writer's queue).
    private final class GatheredRun {
        /// The WAL's file in the default VFS, while the WAL is open.
        var wal: UnsafeMutablePointer<sqlite3_file>?
        var isGathering = false
        /// Writes made to the WAL file since `writesOpcode` last read them.
        var writes: Int64 = 0
        var failsNextRun = false
        /// Where the WAL's syncs are timed, if anywhere (`syncLatencyOpcode`).
        var syncLatency: LatencyHistogram?
        private var bytes: [UInt8] = []
        private var offset: Int64 = 0

        init() { bytes.reserveCapacity(64 * 1024) }

        func write(_ data: UnsafeRawPointer, count: Int32, at offset: Int64) -> Int32 {
            guard let wal else { return WALWriteGathering.ioErrorWrite }
            guard isGathering else {
                let code = flush()
                guard code == SQLITE_OK else { return code }
                writes += 1
                return wal.pointee.pMethods.pointee.xWrite(wal, data, count, offset)
            }
            if !bytes.isEmpty, offset != self.offset + Int64(bytes.count) {
                let code = flush()
                guard code == SQLITE_OK else { return code }
            }
            if bytes.isEmpty { self.offset = offset }
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: Int(count)))
            return bytes.count >= WALWriteGathering.largestRun ? flush() : SQLITE_OK
        }

        /// Writes the gathered run, if any. On an error the run is dropped: SQLite then fails the transaction,
        /// and frames past the last commit are never read.
        func flush() -> Int32 {
            guard !bytes.isEmpty else { return SQLITE_OK }
            defer { bytes.removeAll(keepingCapacity: true) }
            guard let wal else { return WALWriteGathering.ioErrorWrite }
            if failsNextRun {
                failsNextRun = false
                return WALWriteGathering.ioErrorWrite
            }
            return bytes.withUnsafeBytes { run in
                var written = 0
                while written < run.count {
                    let count = min(run.count - written, WALWriteGathering.largestWrite)
                    writes += 1
                    let code = wal.pointee.pMethods.pointee.xWrite(
                        wal, run.baseAddress! + written, Int32(count), offset + Int64(written))
                    guard code == SQLITE_OK else { return code }
                    written += count
                }
                return SQLITE_OK
            }
        }
    }

    // MARK: - I/O methods

    /// The run of `file` (database or WAL), if it has one.
    private static func run(_ file: UnsafeMutablePointer<sqlite3_file>?) -> GatheredRun? {
        head(file!).pointee.run?.takeUnretainedValue()
    }

    /// Writes `file`'s gathered run, if it is a WAL with one.
    private static func flushing(_ file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 {
        guard head(file!).pointee.base.pMethods == UnsafePointer(walMethods), let run = run(file) else {
            return SQLITE_OK
        }
        return run.flush()
    }

    /// The default VFS's methods for `file`.
    private static func methods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        inner(file!).pointee.pMethods.pointee
    }

    private static func makeMethods(gathering: Bool) -> UnsafeMutablePointer<sqlite3_io_methods> {
        var methods = sqlite3_io_methods()
        methods.iVersion = 3
        methods.xClose = { file in
            let code = WALWriteGathering.flushing(file)
            let head = WALWriteGathering.head(file!)
            if let run = head.pointee.run {
                if head.pointee.base.pMethods == UnsafePointer(WALWriteGathering.walMethods) {
                    run.takeUnretainedValue().wal = nil
                }
                run.release()
                head.pointee.run = nil
            }
            let closed = WALWriteGathering.methods(file).xClose(WALWriteGathering.inner(file!))
            return code == SQLITE_OK ? closed : code
        }
        methods.xRead = { file, data, count, offset in
            let code = WALWriteGathering.flushing(file)
            guard code == SQLITE_OK else { return code }
            return WALWriteGathering.methods(file).xRead(WALWriteGathering.inner(file!), data, count, offset)
        }
        if gathering {
            methods.xWrite = { file, data, count, offset in
                WALWriteGathering.run(file)!.write(data!, count: count, at: offset)
            }
        } else {
            methods.xWrite = { file, data, count, offset in
                WALWriteGathering.methods(file).xWrite(WALWriteGathering.inner(file!), data, count, offset)
            }
        }
        methods.xTruncate = { file, size in
            let code = WALWriteGathering.flushing(file)
            guard code == SQLITE_OK else { return code }
            return WALWriteGathering.methods(file).xTruncate(WALWriteGathering.inner(file!), size)
        }
        if gathering {
            methods.xSync = { file, flags in
                let code = WALWriteGathering.flushing(file)
                guard code == SQLITE_OK else { return code }
                guard let histogram = WALWriteGathering.run(file)?.syncLatency else {
                    return WALWriteGathering.methods(file).xSync(WALWriteGathering.inner(file!), flags)
                }
                let started = ContinuousClock.now
                let synced = WALWriteGathering.methods(file).xSync(WALWriteGathering.inner(file!), flags)
                histogram.record(ContinuousClock.now - started)
                return synced
            }
        } else {
            methods.xSync = { file, flags in
                let code = WALWriteGathering.flushing(file)
                guard code == SQLITE_OK else { return code }
                return WALWriteGathering.methods(file).xSync(WALWriteGathering.inner(file!), flags)
            }
        }
        methods.xFileSize = { file, size in
            let code = WALWriteGathering.flushing(file)
            guard code == SQLITE_OK else { return code }
            return WALWriteGathering.methods(file).xFileSize(WALWriteGathering.inner(file!), size)
        }
        methods.xLock = { file, lock in
            WALWriteGathering.methods(file).xLock(WALWriteGathering.inner(file!), lock)
        }
        methods.xUnlock = { file, lock in
            WALWriteGathering.methods(file).xUnlock(WALWriteGathering.inner(file!), lock)
        }
        methods.xCheckReservedLock = { file, result in
            WALWriteGathering.methods(file).xCheckReservedLock(WALWriteGathering.inner(file!), result)
        }
        methods.xFileControl = { file, opcode, argument in
            WALWriteGathering.fileControl(file, opcode: opcode, argument: argument)
        }
        methods.xSectorSize = { file in
            WALWriteGathering.methods(file).xSectorSize(WALWriteGathering.inner(file!))
        }
        methods.xDeviceCharacteristics = { file in
            WALWriteGathering.methods(file).xDeviceCharacteristics(WALWriteGathering.inner(file!))
        }
        methods.xShmMap = { file, region, size, extend, address in
            guard let map = WALWriteGathering.methods(file).xShmMap else {
                return WALWriteGathering.ioErrorSharedMemoryMap
            }
            return map(WALWriteGathering.inner(file!), region, size, extend, address)
        }
        methods.xShmLock = { file, offset, count, flags in
            guard let lock = WALWriteGathering.methods(file).xShmLock else {
                return WALWriteGathering.ioErrorSharedMemoryLock
            }
            return lock(WALWriteGathering.inner(file!), offset, count, flags)
        }
        methods.xShmBarrier = { file in
            // The WAL index header is published after this barrier: the frames it names must be in the file.
            if let run = WALWriteGathering.run(file) { _ = run.flush() }
            WALWriteGathering.methods(file).xShmBarrier?(WALWriteGathering.inner(file!))
        }
        methods.xShmUnmap = { file, delete in
            guard let unmap = WALWriteGathering.methods(file).xShmUnmap else { return SQLITE_OK }
            return unmap(WALWriteGathering.inner(file!), delete)
        }
        methods.xFetch = { file, offset, count, address in
            guard let fetch = WALWriteGathering.methods(file).xFetch else {
                address?.pointee = nil
                return SQLITE_OK
            }
            return fetch(WALWriteGathering.inner(file!), offset, count, address)
        }
        methods.xUnfetch = { file, offset, address in
            guard let unfetch = WALWriteGathering.methods(file).xUnfetch else { return SQLITE_OK }
            return unfetch(WALWriteGathering.inner(file!), offset, address)
        }
        let pointer = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        pointer.initialize(to: methods)
        return pointer
    }

    private static func fileControl(
        _ file: UnsafeMutablePointer<sqlite3_file>?, opcode: Int32, argument: UnsafeMutableRawPointer?
    ) -> Int32 {
        let isDatabase = head(file!).pointee.base.pMethods == UnsafePointer(forwardingMethods)
        switch opcode {
        case setGatheringOpcode where isDatabase:
            guard let run = run(file) else { return SQLITE_NOTFOUND }
            let on = argument!.load(as: Int32.self) != 0
            if !on {
                let code = run.flush()
                guard code == SQLITE_OK else { return code }
            }
            run.isGathering = on
            return SQLITE_OK
        case writesOpcode where isDatabase:
            guard let run = run(file) else { return SQLITE_NOTFOUND }
            argument!.storeBytes(of: run.writes, as: Int64.self)
            run.writes = 0
            return SQLITE_OK
        case failNextRunOpcode where isDatabase:
            guard let run = run(file) else { return SQLITE_NOTFOUND }
            run.failsNextRun = true
            return SQLITE_OK
        case syncLatencyOpcode where isDatabase:
            guard let run = run(file) else { return SQLITE_NOTFOUND }
            run.syncLatency = argument!.load(as: Unmanaged<LatencyHistogram>.self).takeUnretainedValue()
            return SQLITE_OK
        default:
            let code = flushing(file)
            guard code == SQLITE_OK else { return code }
            return methods(file).xFileControl(inner(file!), opcode, argument)
        }
    }
}
