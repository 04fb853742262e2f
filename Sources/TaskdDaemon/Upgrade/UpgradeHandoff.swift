import CTaskdShim
import TaskScheduling
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// What one image of taskd hands the next across `execve` (`taskctl upgrade`): a JSON document in
/// a memfd whose number is in `TASKD_UPGRADE_FD`, naming the descriptors the new image inherits
/// (the listening socket, the runs' pipes).
struct UpgradeHandoff: Codable, Sendable {
    static let environmentName = "TASKD_UPGRADE_FD"
    /// The document's format; a taskd that does not know it starts afresh (and says so).
    static let currentFormat = 1

    var format = currentFormat
    /// The `--version` line of the image that handed over.
    var previousVersion: String
    /// The control socket, listening; its path, and whether the service manager passed it.
    var listenFD: Int32
    var socketPath: String
    var socketActivated: Bool
    var runs: [HandedRun]
    /// The Swift handlers' runs the upgrade cut short, for the new image to run again.
    var replays: [CutRun] = []
    /// Every task's timers, so that the upgrade neither fires nor moves them.
    var timers: [TimerCarry] = []
    /// The connection to the run keeper, if there is one.
    var keeperFD: Int32?

    /// Every descriptor the document names, which must survive `execve`.
    var descriptors: [Int32] {
        [listenFD] + runs.flatMap { $0.command.pipes.map(\.fd) } + (keeperFD.map { [$0] } ?? [])
    }

    /// Re-executes `executable` with `arguments`, handing this over; returns only if `execve`
    /// failed, with why (the descriptors are close-on-exec again then).
    func exec(_ executable: String, arguments: [String]) -> String {
        let memfd = taskd_memfd_create("taskd-upgrade")
        guard memfd >= 0 else { return "memfd_create: \(String(cString: strerror(errno)))" }
        let text: String
        do {
            text = try JSONValueEncoder().encode(self).description
        } catch {
            close(memfd)
            return "encoding the hand-off: \(error)"
        }
        guard FileIO.writeAll(memfd, Array(text.utf8)) else {
            let reason = String(cString: strerror(errno))
            close(memfd)
            return "writing the hand-off: \(reason)"
        }
        lseek(memfd, 0, SEEK_SET)
        let inherited = descriptors + [memfd]
        for fd in inherited { _ = fcntl(fd, F_SETFD, 0) }
        setenv(Self.environmentName, String(memfd), 1)
        let argv = arguments.map { strdup($0) } + [nil]
        execv(executable, argv)
        let reason = String(cString: strerror(errno))
        for p in argv { free(p) }
        unsetenv(Self.environmentName)
        for fd in inherited { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        close(memfd)
        return "\(executable): \(reason)"
    }

    /// The hand-off from the previous image, if this process is the new image of an upgrade:
    /// read, its memfd closed and the variable unset. A document that cannot be read is an error.
    static func take() -> Result<UpgradeHandoff, HandoffError>? {
        guard let value = getenv(environmentName) else { return nil }
        defer { unsetenv(environmentName) }
        guard let fd = Int32(String(cString: value)), fd > 2 else {
            return .failure(HandoffError(reason: "\(environmentName) is not a descriptor"))
        }
        defer { close(fd) }
        let bytes: [UInt8]
        switch FileIO.read("/proc/self/fd/\(fd)") {
        case .success(let b): bytes = b
        case .failure(let error): return .failure(HandoffError(reason: "reading the hand-off: \(error)"))
        }
        do {
            let handoff = try JSONValueDecoder().decode(
                UpgradeHandoff.self, from: String(decoding: bytes, as: UTF8.self))
            guard handoff.format == currentFormat else {
                return .failure(
                    HandoffError(reason: "hand-off format \(handoff.format), this taskd reads \(currentFormat)"))
            }
            for fd in handoff.descriptors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return .success(handoff)
        } catch {
            return .failure(HandoffError(reason: "the hand-off: \(JSONValueDecoder.describe(error))"))
        }
    }
}
