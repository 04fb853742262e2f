import CTaskdShim
import Synchronization
import TaskdIO

#if canImport(Glibc)
    import Glibc
#endif

/// The output of a run the keeper holds (`KeptOutput`): its pipes are read with tee(2), which
/// leaves the bytes in them; the keeper writes the entries of the complete lines and then takes
/// those bytes out. A taskd that dies between the two loses nothing: the next one reads the same
/// bytes from the pipe again, and what the keeper wrote is gone from it.
extension CommandProcess {
    /// A kept pipe's state.
    struct KeptPipe: Sendable {
        var stream: OutputLine.Stream
        /// Bytes an earlier image of taskd had taken out of the pipe (before the keeper wrote
        /// output), which come before what the pipe holds.
        var prefix: [UInt8]
        /// A pump holds the pipe: it is reading it, or its request is with the keeper (the pipe is
        /// read again once that is written).
        var inFlight = false
        /// A request is with the keeper (or waits to be sent): it takes `prefix` with it.
        var requested = false
        /// A pump was asked for while one held the pipe: the holder pumps again if it sent nothing.
        var again = false
        /// No request sent yet (the first waits for taskd's own entries, the run's start).
        var first = true
        /// The run has exited: what the pipe holds is its last output, an unended line included.
        var last = false

        /// The keeper's index of the pipe.
        var index: Int32 {
            switch stream {
            case .stdout: 0
            case .stderr: 1
            case .notify: 2
            }
        }
    }

    /// At most this much is read per request, and at most `keptLines` lines: with the fields of
    /// each entry (a few hundred bytes), a request stays under 64 KiB, well within the socket's
    /// buffer (about 208 KiB).
    static let keptBytes = 16384
    static let keptLines = 128

    /// Watches `fd`, edge-triggered: a level-triggered watch would fire for as long as the bytes
    /// wait for the keeper.
    func watchKept(_ fd: Int32, stream: OutputLine.Stream, prefix: [UInt8]) {
        state.withLock { $0.kept[fd] = KeptPipe(stream: stream, prefix: prefix) }
        let token = EventLoop.shared.register(fd: fd, events: EventLoop.readable | UInt32(EPOLLET.rawValue)) {
            [self] _ in pumpKept(fd)
        }
        guard let token else { return takeOverKept(fd) }
        state.withLock { $0.watched[fd] = token }
        pumpKept(fd)
    }

    /// Has the keeper write the complete lines `fd` holds (every byte once `last` is set), one
    /// request at a time; closes the pipe once it is empty at its end or after the exit.
    func pumpKept(_ fd: Int32) {
        guard let keeper, let keptOutput, let pipe = claimKept(fd) else { return }
        guard let (teed, end) = Self.peek(fd) else { return takeOverKept(fd) }
        let bytes = pipe.prefix + teed
        let final = end || pipe.last
        if bytes.isEmpty {
            if final { closeKept(fd) } else { releaseKept(fd) }
            return
        }
        var splitter = LineSplitter(stream: pipe.stream)
        var lines: [OutputLine] = []
        var offset = 0
        while offset < bytes.count && lines.count < Self.keptLines {
            let stop = bytes[offset...].firstIndex(of: 10).map { $0 + 1 } ?? bytes.count
            lines += splitter.feed(bytes[offset..<stop])
            offset = stop
        }
        var taken = offset - splitter.unfinished.count
        if final && offset == bytes.count {
            lines += splitter.finish()
            taken = offset
        }
        // An unended line: the watch fires again when more is written (or the exit ends it).
        guard taken > 0 else { return releaseKept(fd) }
        let prefixLeft = Array(pipe.prefix.dropFirst(taken))
        let consume = max(0, taken - pipe.prefix.count)
        let (outputs, first) = state.withLock { s -> ([CommandOutput], Bool) in
            s.kept[fd]?.first = false
            s.kept[fd]?.requested = true
            return (Self.meter(lines, &s), pipe.first)
        }
        // Notify lines are taskd's to act on: handled now, and taken out of the pipe after, so a
        // taskd killed in between leaves them to the next one (at least once, never lost).
        let notify = pipe.stream == .notify
        if notify { outputs.forEach(onOutput) }
        let (records, text) = notify ? ([], false) : keptOutput.records(outputs)
        let pid = self.pid
        let write: @Sendable () -> Void = { [self] in
            keeper.write(pid: pid, pipe: pipe.index, records: records, text: text, consume: consume) { [self] result in
                state.withLock { s in
                    s.kept[fd]?.inFlight = false
                    s.kept[fd]?.requested = false
                    if result.written { s.kept[fd]?.prefix = prefixLeft }
                }
                if result.shed > 0 { onOutput(.shed(lines: result.shed)) }
                if result.taken { pumpKept(fd) } else { takeOverKept(fd) }
            }
        }
        if first && !notify { keptOutput.afterOwnEntries(write) } else { write() }
    }

    /// Claims the pipe for one pump, under the lock: the loop's watch, the keeper's answer to the
    /// last request and the first pump after the watch began can ask at once, and two pumps
    /// would send the same lines twice and then take twice as many out of the pipe. Nil if it is
    /// handed off, closed or held (the holder is then asked to pump again).
    private func claimKept(_ fd: Int32) -> KeptPipe? {
        state.withLock { s -> KeptPipe? in
            guard !s.handedOff, let pipe = s.kept[fd] else { return nil }
            guard !pipe.inFlight else {
                s.kept[fd]?.again = true
                return nil
            }
            s.kept[fd]?.inFlight = true
            s.kept[fd]?.again = false
            return pipe
        }
    }

    /// Gives back a claim that sent no request; pumps again if asked to meanwhile.
    private func releaseKept(_ fd: Int32) {
        let again = state.withLock { s -> Bool in
            s.kept[fd]?.inFlight = false
            return s.kept[fd]?.again == true
        }
        if again { pumpKept(fd) }
    }

    /// The leader exited: `then` once every kept pipe has had its last lines written and is closed.
    func finishKept(then: @escaping @Sendable () -> Void) {
        let fds = state.withLock { s -> [Int32] in
            guard !s.kept.isEmpty else { return [] }
            s.afterKept = then
            for fd in s.kept.keys { s.kept[fd]?.last = true }
            return s.kept.keys.sorted()
        }
        guard !fds.isEmpty else { return then() }
        fds.forEach(pumpKept)
    }

    /// Stops watching a kept pipe and closes it (the keeper keeps its own copy until the run is
    /// released); the exit goes on once it was the last.
    private func closeKept(_ fd: Int32) {
        let (token, then) = state.withLock { s -> (UInt64?, (@Sendable () -> Void)?) in
            guard s.kept.removeValue(forKey: fd) != nil else { return (nil, nil) }
            let token = s.watched.removeValue(forKey: fd)
            return (token, s.kept.isEmpty ? s.afterKept.take() : nil)
        }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        close(fd)
        then?()
    }

    /// The keeper cannot write (it went away, or refused the request): taskd reads the pipe
    /// itself from now on, as without a keeper. Once the run has exited, what is left is read
    /// where the exit is reported (`afterKept`, or the keeper's loss).
    /// After a hand-off the pipe is the next image's: this one reads nothing more from it.
    func takeOverKept(_ fd: Int32) {
        let (token, exited, then) = state.withLock { s -> (UInt64?, Bool, (@Sendable () -> Void)?) in
            guard !s.handedOff, let pipe = s.kept.removeValue(forKey: fd) else { return (nil, true, nil) }
            s.splitters[fd] = LineSplitter(stream: pipe.stream, pending: pipe.prefix)
            return (s.watched.removeValue(forKey: fd), s.exited, s.kept.isEmpty ? s.afterKept.take() : nil)
        }
        if let token { EventLoop.shared.deregister(fd: fd, token: token) }
        if !exited { watchDirect(fd) }
        then?()
    }

    /// A pipe to copy through: tee(2) copies only from one pipe into another.
    private static let scratch = Mutex<(read: Int32, write: Int32)?>(nil)

    /// What `fd` holds (at most `keptBytes`), left in it; `end`: it is empty and no one can write
    /// to it any more. Nil on an error.
    static func peek(_ fd: Int32) -> (bytes: [UInt8], end: Bool)? {
        scratch.withLock { pipe -> (bytes: [UInt8], end: Bool)? in
            if pipe == nil {
                var fds: [Int32] = [-1, -1]
                guard taskd_pipe_cloexec(&fds) == 0 else { return nil }
                for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
                pipe = (fds[0], fds[1])
            }
            guard let (readEnd, writeEnd) = pipe else { return nil }
            let n = taskd_tee(fd, writeEnd, keptBytes)
            if n == 0 { return ([], true) }
            if n < 0 { return errno == EAGAIN ? ([], false) : nil }
            var bytes = [UInt8](repeating: 0, count: n)
            var got = 0
            while got < n {
                let r = bytes.withUnsafeMutableBytes { read(readEnd, $0.baseAddress! + got, n - got) }
                if r < 0 && errno == EINTR { continue }
                guard r > 0 else {
                    // What is left in it would come before the next copy: a new one then.
                    close(readEnd)
                    close(writeEnd)
                    pipe = nil
                    return nil
                }
                got += r
            }
            return (bytes, false)
        }
    }
}
