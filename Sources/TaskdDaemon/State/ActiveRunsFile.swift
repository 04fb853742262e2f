import Dispatch
import Synchronization
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The runs in progress, kept in the state folder as `active-runs.json` for a taskd that did not
/// stop cleanly (a crash, `kill -9`): the next start records each one whose end it never saw
/// (outcome `failed`, `failureReason` `lost`) instead of dropping it. Written off the event loop,
/// the latest list only, at most every `interval` (a run that starts less than that before a crash
/// may be missed), without an fsync (a crash of taskd keeps the page cache). While taskd runs, no
/// run in progress is an empty list (`FileIO.rewrite` reuses the file's inode at every write); a
/// clean stop removes the file.
package final class ActiveRunsFile: Sendable {
    let path: String
    /// The least time between two writes, µs.
    static let interval = 10_000
    private let queue = DispatchQueue(label: "taskd.active-runs")
    /// The list waiting to be written, whether a write is scheduled, and whether the list on disk
    /// is empty.
    private let waiting = Mutex<(runs: [String: RunSnapshot]?, scheduled: Bool, empty: Bool)>((nil, false, false))
    private let onProblem: @Sendable (String) -> Void

    package init(directory: String, onProblem: @escaping @Sendable (String) -> Void) {
        path = directory + "/active-runs.json"
        self.onProblem = onProblem
    }

    /// Records `runs` (by id) as the runs in progress now; returns at once.
    func save(_ runs: [String: RunSnapshot]) {
        let start = waiting.withLock { w in
            w.runs = runs
            defer { w.scheduled = true }
            return !w.scheduled
        }
        if start { queue.async { self.writeWaiting() } }
    }

    /// Writes what waits, then looks again one `interval` later; stops when nothing waited.
    private func writeWaiting() {
        guard writeNow() else { return }
        queue.asyncAfter(deadline: .now() + .microseconds(Self.interval)) { self.writeWaiting() }
    }

    /// Writes the list that waits, if any (false, and unscheduled, if none did). On `queue`.
    @discardableResult
    private func writeNow() -> Bool {
        let next = waiting.withLock { w -> [String: RunSnapshot]? in
            guard let runs = w.runs else {
                w.scheduled = false
                return nil
            }
            w.runs = nil
            return runs
        }
        guard let runs = next else { return false }
        do {
            let text = try JSONValueEncoder().encode(runs.values.sorted { $0.id < $1.id }).description
            if let error = FileIO.rewrite(path, with: Array(text.utf8)) { onProblem("\(path): \(error)") }
            waiting.withLock { $0.empty = runs.isEmpty }
        } catch {
            onProblem("\(path): \(error)")
        }
        return true
    }

    /// Writes the latest list now, if one waits; an empty one (a clean stop's last) removes the file.
    func flush() {
        queue.sync {
            writeNow()
            if waiting.withLock({ $0.empty }), let error = FileIO.remove(path) { onProblem("\(path): \(error)") }
        }
    }

    /// The runs that were in progress when the previous taskd stopped without ending them, the file
    /// removed; and what was wrong with it, if it could not be read.
    static func take(directory: String) -> (runs: [RunSnapshot], problem: String?) {
        defer { unlink(directory + "/active-runs.json.tmp") }  // the list before the last one
        return RunListFile.take(directory + "/active-runs.json", lost: "the runs it named are not recorded")
    }
}
