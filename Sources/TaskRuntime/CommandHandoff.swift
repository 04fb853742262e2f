import TaskScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// What an upgrade in place hands the next image of taskd about a running command (or what the run
/// keeper gives a taskd that starts after a crash): its pid (taskd's child, or the keeper's), the
/// read ends of its pipes (inherited across `execve`, or passed by the keeper) with the start of a
/// line read so far, and its cgroup; the wait status, if its leader was reaped already.
public struct CommandHandoff: Sendable, Codable, Hashable {
    public struct Pipe: Sendable, Codable, Hashable {
        public var fd: Int32
        public var stream: OutputLine.Stream
        public var unfinished: [UInt8]

        public init(fd: Int32, stream: OutputLine.Stream, unfinished: [UInt8] = []) {
            self.fd = fd
            self.stream = stream
            self.unfinished = unfinished
        }
    }

    public var pid: Int32
    public var pipes: [Pipe]
    public var cgroup: String?
    public var waitStatus: Int32?
    /// The run keeper is its parent (nil from a taskd before the keeper: taskd is).
    public var kept: Bool?
    /// What it used, if it ended before the hand-over (from the keeper).
    public var usage: Usage?

    /// `RunUsage` as a hand-over carries it.
    public struct Usage: Sendable, Codable, Hashable {
        public var cpuUSec: UInt64?
        public var ioReadBytes: UInt64?
        public var ioWriteBytes: UInt64?

        public init(_ usage: RunUsage) {
            cpuUSec = usage.cpuUSec
            ioReadBytes = usage.ioReadBytes
            ioWriteBytes = usage.ioWriteBytes
        }
    }

    public init(
        pid: Int32, pipes: [Pipe], cgroup: String?, waitStatus: Int32?, kept: Bool? = nil, usage: Usage? = nil
    ) {
        self.pid = pid
        self.pipes = pipes
        self.cgroup = cgroup
        self.waitStatus = waitStatus
        self.kept = kept
        self.usage = usage
    }
}
