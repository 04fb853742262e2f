import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `taskctl upgrade`: asks taskd to re-execute the binary now at its path, then waits (up to
/// `timeout`) for the new image to answer on the socket, which it does once it has taken the runs
/// over. Exit status 0 upgraded, 1 the upgrade did not happen or the new image did not answer.
enum UpgradeCommand {
    static func run(json: Bool, socket: String, timeoutUSec: UInt64 = 30_000_000) throws(Failure) -> ExitCode {
        let reply = try Commands.call(socket, SchedulerInterface.Upgrade.self, NoParameters())
        // Calls made while the new image starts wait in the socket's backlog; one that fails (the
        // new image died) is tried again until the timeout.
        let deadline = Terminal.nowUSec() + timeoutUSec
        var answered: VarlinkServiceInterface.GetInfo.Reply?
        while answered == nil && Terminal.nowUSec() < deadline {
            answered = try? Commands.call(socket, VarlinkServiceInterface.GetInfo.self, NoParameters())
            if answered == nil { usleep(20_000) }
        }
        if json {
            Terminal.out(
                JSONValue.object([
                    "previousVersion": .string(reply.previousVersion), "version": .string(reply.version),
                    "runs": .int(Int64(reply.runs)), "answered": .bool(answered != nil),
                ]).description)
        }
        guard answered != nil else {
            if !json {
                Terminal.err(
                    "taskd re-executed itself (\(reply.version)) but did not answer within \(timeoutUSec / 1_000_000) s;"
                        + " see journalctl -u taskd")
            }
            return .runDidNotComplete
        }
        if !json {
            Terminal.out(
                "Upgraded in place: \(reply.previousVersion) → \(reply.version); \(reply.runs) command run(s) went on.")
        }
        return .success
    }
}
