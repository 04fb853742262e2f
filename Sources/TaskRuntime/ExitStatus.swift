import TaskScheduling

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes a `waitpid` status word.
enum ExitStatus {
    static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7F
        if signal == 0 { return .exited((status >> 8) & 0xFF) }
        return .signaled(signal)
    }
}
