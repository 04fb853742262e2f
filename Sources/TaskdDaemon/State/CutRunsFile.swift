import TaskScheduling
import TaskdIO
import TaskdProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The runs a restart cut short (`Scheduler.cutShort`), kept in the state folder as
/// `cut-runs.json` for the next start to run again (trigger `resume`), then removed.
package struct CutRunsFile: Sendable {
    let path: String

    package init(directory: String) { path = directory + "/cut-runs.json" }

    /// Writes `runs` (replaced atomically, synced); why not, if it could not.
    func save(_ runs: [CutRun]) -> String? {
        do {
            let text = try JSONValueEncoder().encode(runs).description
            return FileIO.replace(path, with: Array(text.utf8)).map { "\(path): \($0)" }
        } catch {
            return "\(path): \(error)"
        }
    }

    /// The runs kept, the file removed; and what was wrong with it, if it could not be read.
    func take() -> (runs: [CutRun], problem: String?) {
        RunListFile.take(path, lost: "the runs it kept do not run again")
    }
}
