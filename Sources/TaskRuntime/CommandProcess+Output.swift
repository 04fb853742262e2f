import Synchronization
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// The output pipes taskd reads itself (without a keeper, the notify pipe always): what is read is
/// split into lines and passed through the run's rate limit.
extension CommandProcess {
    /// Stops watching a pipe and closes it, delivering a last unterminated line.
    func closePipe(_ fd: Int32, onOutput: (@Sendable (CommandOutput) -> Void)? = nil) {
        let closing = state.withLock { s -> (token: UInt64?, rest: [CommandOutput])? in
            guard var splitter = s.splitters.removeValue(forKey: fd) else { return nil }
            let lines = Self.meter(splitter.finish(), &s)
            return (s.watched.removeValue(forKey: fd), lines)
        }
        guard let (token, rest) = closing else { return }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        close(fd)
        if let onOutput { rest.forEach(onOutput) }
    }

    /// Reads what is available on `fd`; false at end of stream (its last line already delivered).
    func drain(_ fd: Int32, onOutput: @Sendable (CommandOutput) -> Void) -> Bool {
        // On the stack and not zero-filled: read writes the bytes that count.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16384) { buffer in
            drain(fd, into: buffer, onOutput: onOutput)
        }
    }

    private func drain(_ fd: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>, onOutput: (CommandOutput) -> Void)
        -> Bool
    {
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 {
                let bytes = UnsafeBufferPointer(rebasing: buffer[..<n])
                let lines = state.withLock { s in Self.meter(s.splitters[fd]?.feed(bytes) ?? [], &s) }
                lines.forEach(onOutput)
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return true }
            let rest = state.withLock { s in Self.meter(s.splitters[fd]?.finish() ?? [], &s) }
            rest.forEach(onOutput)
            return false
        }
    }

    /// Passes `lines` through the run's rate limit, at the current monotonic time; notifications
    /// pass as they are.
    static func meter(_ lines: [OutputLine], _ s: inout State) -> [CommandOutput] {
        guard !lines.isEmpty else { return [] }
        if lines[0].stream == .notify { return lines.map { .notification($0.text) } }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        var out: [CommandOutput] = []
        for line in lines {
            switch s.limiter.admit(atUSec: usec) {
            case .pass: out.append(.line(line))
            case .passAfterDropping(let n): out += [.dropped(lines: n), .line(line)]
            case .drop: break
            }
        }
        return out
    }
}
