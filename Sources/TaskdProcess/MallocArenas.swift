import CTaskdShim

/// glibc's malloc arenas: by default one per thread that allocates, up to eight per CPU.
///
/// `limit()` and `keepLargeBlocksMapped()` set process-wide tunables (`mallopt`): they are the
/// program's to choose, so only taskd's executables call them, from their `main`; the library
/// (`TaskDaemon`, the daemon) never does. An app daemon may make the same calls itself, or set
/// `MALLOC_ARENA_MAX` and `MALLOC_MMAP_THRESHOLD_` in its unit (docs/swift-handlers.md). `trim()`
/// sets nothing: the daemon calls it after bursts of garbage.
public enum MallocArenas {
    /// The arena limit a daemon sets for itself.
    public static let daemonLimit: Int32 = 2

    /// Limits the arenas to `limit` unless the environment sets `MALLOC_ARENA_MAX` (or an
    /// `arena_max` in `GLIBC_TUNABLES`), which then wins; false then. Call it before the threads
    /// that allocate start. With an arena per thread, the idle taskd with 10,000 tasks held 0.5 MiB
    /// more (measured): each arena keeps pages of its own, and its free chunks serve no other thread.
    @discardableResult
    public static func limit(_ limit: Int32 = daemonLimit) -> Bool { taskd_limit_malloc_arenas(limit) == 1 }

    /// Gives the free pages at the top of every arena back to the kernel (`malloc_trim(0)`): after
    /// a burst of garbage, such as the parsed configuration at start-up.
    @discardableResult
    public static func trim() -> Bool { taskd_malloc_trim() == 1 }

    /// Keeps every allocation of `bytes` or more out of the arenas' heaps (mmapped, and unmapped
    /// when freed) unless the environment sets the threshold; false then. glibc's default raises the
    /// threshold to the largest block freed, so the megabytes of a `List` reply of 10,000 tasks were
    /// carved from the event loop thread's arena next time, whose top `malloc_trim` never returns:
    /// taskd kept 22 MiB more after two `taskctl list` (measured). Call it from `main`, before the
    /// daemon runs.
    @discardableResult
    public static func keepLargeBlocksMapped(_ bytes: Int32 = 128 * 1024) -> Bool {
        taskd_fix_mmap_threshold(bytes) == 1
    }
}
