// The one platform import block of storesvc. Linux (Glibc) only: we add no branches we cannot test.
// The only other file that calls C is InstanceLock.swift (`flock` on the lock file), which imports Glibc plainly.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("storesvc supports Linux (Glibc) only")
#endif

extension StoreServiceConfiguration.Identity {
    /// The process's real user and group ids (`getuid`, `getgid`).
    static var current: Self { Self(uid: getuid(), gid: getgid()) }
}
