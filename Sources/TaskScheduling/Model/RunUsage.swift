/// What a command's run used, read when it ended: from its cgroup (every process of the run)
/// when it had one, else from the kernel's `rusage` of its main process and the children it waited for.
public struct RunUsage: Hashable, Sendable, Codable {
    /// CPU time, user and system, in µs.
    public var cpuUSec: UInt64?
    /// The most memory it held at once, in bytes (`memory.peak`: only with the memory controller;
    /// a vfork-spawned process's own `ru_maxrss` starts at its spawner's and says nothing).
    public var memoryPeakBytes: UInt64?
    /// Bytes read from and written to block devices (`io.stat`; else the main process's `inblock`/`oublock`).
    public var ioReadBytes: UInt64?
    public var ioWriteBytes: UInt64?
    /// Where the figures come from: `cgroup` or `rusage`.
    public var source: String

    public init(
        cpuUSec: UInt64? = nil, memoryPeakBytes: UInt64? = nil, ioReadBytes: UInt64? = nil,
        ioWriteBytes: UInt64? = nil, source: String
    ) {
        self.cpuUSec = cpuUSec
        self.memoryPeakBytes = memoryPeakBytes
        self.ioReadBytes = ioReadBytes
        self.ioWriteBytes = ioWriteBytes
        self.source = source
    }
}
