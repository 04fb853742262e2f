import TaskdControl
import TaskdIO
import TaskdSystem

#if canImport(Glibc)
    import Glibc
#endif

/// An upgrade in place, from SIGUSR2 (Varlink `Upgrade` raises it) to the `execve` of the binary
/// now at taskd's path: the new binary's `--version` and `--check-config` first (a failure changes
/// nothing), then `RELOADING=1`, the socket left to its backlog, Swift runs cancelled and awaited,
/// the state on disk, the command runs handed over. The PID stays, so the commands stay taskd's
/// children and systemd's main process is the same.
struct Upgrader: Sendable {
    /// The `--version` line of this image.
    let versionLine: String
    /// The binary at taskd's path (as it was started: a package may have replaced the file since).
    let executable: String
    /// This process's arguments, which the new image gets too.
    let arguments: [String]

    /// The path this process was started from (`/proc/self/exe`, without the " (deleted)" the
    /// kernel adds once a package manager has replaced the file).
    static func ownExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        var path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        return path
    }

    /// Upgrades; returns only if the upgrade did not happen (journaled, the calls answered, runs
    /// going on here), after `resume` has made the socket serve again.
    func upgrade(
        daemon: Daemon, server: ControlSocketServer, store: StateStore, log: QueuedLogBackend,
        notifier: ServiceNotifier, resume: @Sendable () -> Void
    ) async {
        let (executable, arguments) = (self.executable, self.arguments)
        let version = await Thread.run { Preflight.run([executable, "--version"]) }
        guard version.status == 0, let newVersion = version.output.split(separator: "\n").first.map(String.init) else {
            return await Self.failed(daemon, "\(executable) --version: \(Self.trim(version.output))")
        }
        let check = await Thread.run { Preflight.run([executable] + arguments.dropFirst() + ["--check-config"]) }
        guard check.status == 0 else {
            return await Self.failed(
                daemon,
                "\(executable) --check-config \(check.status.map { "exited with status \($0)" } ?? "failed"): "
                    + Self.trim(check.output))
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(usec)\nSTATUS=Upgrading to \(newVersion)")
        server.pause()
        await daemon.withIsolation { await $0.component(Upgrades.self).beginUpgrade(in: $0) }
        await store.waitDurable(store.add([]))
        let from = versionLine
        let failure = await daemon.withIsolation {
            $0.component(Upgrades.self).execUpgrade(
                from: from, to: newVersion, executable: executable, arguments: arguments, server: server, in: $0,
                flush: { log.flush() })
        }
        // Still here: the execve failed, and the runs are this image's again.
        resume()
        await Self.failed(daemon, failure)
        notifier.notify("READY=1")
    }

    /// The upgrade did not happen, for `reason` (`Upgrades.upgradeFailed`).
    private static func failed(_ daemon: Daemon, _ reason: String) async {
        await daemon.withIsolation { $0.component(Upgrades.self).upgradeFailed(reason, in: $0) }
    }

    /// The last lines of a preflight's output, on one line.
    private static func trim(_ output: String) -> String {
        let lines = output.split(separator: "\n").suffix(5)
        return lines.isEmpty ? "no output" : lines.joined(separator: " / ")
    }
}
