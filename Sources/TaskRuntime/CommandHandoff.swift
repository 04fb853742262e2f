#if canImport(Glibc)
    import Glibc
#endif

/// What an upgrade in place hands the next image of taskd about a running command: its pid (still
/// taskd's child), the read ends of its pipes (inherited across `execve`) with the start of a line
/// read so far, and its cgroup; the wait status, if its leader was reaped already.
public struct CommandHandoff: Sendable, Codable, Hashable {
    public struct Pipe: Sendable, Codable, Hashable {
        public var fd: Int32
        public var stream: OutputLine.Stream
        public var unfinished: [UInt8]
    }

    public var pid: Int32
    public var pipes: [Pipe]
    public var cgroup: String?
    public var waitStatus: Int32?
}
