/// A command run's resource limits, with systemd's names and meaning, written into its cgroup
/// (`MemoryMax=`, `MemoryHigh=`, `CPUQuota=`, `CPUWeight=`, `IOWeight=`, `TasksMax=`).
public struct ResourceLimits: Hashable, Sendable {
    /// `memory.max`: the kernel's OOM killer ends the run beyond it (outcome `failed`, reason `oom`).
    public var memoryMax: UInt64?
    /// `memory.high`: reclaimed and slowed above it.
    public var memoryHigh: UInt64?
    /// `cpu.max`: at most this share of one CPU, in percent (200 is two CPUs).
    public var cpuQuotaPercent: Int?
    /// `cpu.weight`, `io.weight`: 1 to 10000 (100 is everyone's default).
    public var cpuWeight: Int?
    public var ioWeight: Int?
    /// `pids.max`: at most this many processes and threads.
    public var tasksMax: UInt64?

    public init() {}

    /// True when no limit is set.
    public var isEmpty: Bool { self == ResourceLimits() }

    /// The cgroup files and the text each gets, in systemd's order; the controller each needs first.
    public var files: [(controller: String, file: String, value: String)] {
        var out: [(String, String, String)] = []
        if let memoryHigh { out.append(("memory", "memory.high", String(memoryHigh))) }
        if let memoryMax { out.append(("memory", "memory.max", String(memoryMax))) }
        if let cpuQuotaPercent { out.append(("cpu", "cpu.max", "\(cpuQuotaPercent * 1000) 100000")) }
        if let cpuWeight { out.append(("cpu", "cpu.weight", String(cpuWeight))) }
        if let ioWeight { out.append(("io", "io.weight", "default \(ioWeight)")) }
        if let tasksMax { out.append(("pids", "pids.max", String(tasksMax))) }
        return out
    }
}
